"""Per-thread instruction semantics of the emulator (numba): one pure function, ``alu``.

``alu(op, ty, ty2, md, sub, a, b, c, d, cin) -> (result, aux)`` computes one thread's result of a
register-to-register instruction from operand *bit patterns* (uint64) and returns the result's
bit pattern (already truncated to the destination size) plus ``aux``: the carry/borrow flag for
``.cc`` forms, or the second predicate ``q`` of ``setp p|q``. Memory, control flow and warp-level
instructions live in the interpreter's family modules (:mod:`simt_fast.emu.exec_memory` ...).

Semantic choices that PTX leaves open are documented in docs/emu.md (integer division by zero,
f64 NaN payloads, .approx accuracy). Bit-exactness: integers wrap modulo 2^n; f32 arithmetic is
evaluated so that the result is the correctly rounded f32 (never a float64 result rounded after
a second operation); f32 NaN results are the canonical NaN 0x7fffffff as on NVIDIA GPUs.
"""

from __future__ import annotations

import numpy as np

from .._jit import jit
from .codes import (
    KIND_F, KIND_P, KIND_S, M_APPROX, M_CIN, M_FTZ, M_HI, M_IRND, M_RMASK, M_SAT, M_WIDE, OP_ABS,
    OP_ADD, OP_AND, OP_BFE, OP_BFI, OP_BFIND, OP_BREV, OP_CLZ, OP_CNOT, OP_COPYSIGN, OP_COS, OP_CVT, OP_DIV,
    OP_EX2, OP_FMA, OP_LG2, OP_LOP3, OP_MAD, OP_MAD24, OP_MAX, OP_MIN, OP_MOV, OP_MUL, OP_MUL24, OP_NEG, OP_NOT,
    OP_OR, OP_POPC, OP_PRMT, OP_RCP, OP_REM, OP_RSQRT, OP_SAD, OP_SELP, OP_SET, OP_SETP, OP_SHF, OP_SHL, OP_SHR,
    OP_SIN, OP_SLCT, OP_SQRT, OP_SUB, OP_TANH, OP_TESTP, OP_XOR, R_RM, R_RN, R_RP, R_RZ,
)
from .fp import fma64, next32, round_f32, round_f64, two_sum

U0 = np.uint64(0)
U1 = np.uint64(1)
ALL = np.uint64(0xFFFFFFFFFFFFFFFF)
M32 = np.uint64(0xFFFFFFFF)
CANON_NAN32 = np.uint64(0x7FFFFFFF)



# ---- bit helpers ------------------------------------------------------------------------------


@jit
def mask(size):
    """All-ones in the low ``size`` bytes."""
    if size >= 8:
        return ALL
    return (U1 << np.uint64(8 * size)) - U1


@jit
def sx(v, size):
    """Sign-extend the low ``size`` bytes of ``v`` to int64."""
    sh = np.uint64(64 - 8 * size)
    return np.int64(np.uint64(v) << sh) >> np.int64(sh)


@jit
def u(v):
    return np.uint64(v)


@jit
def f32(v):
    return np.uint32(np.uint64(v) & M32).view(np.float32)


@jit
def f64(v):
    return np.uint64(v).view(np.float64)


@jit
def b32(x):
    x = np.float32(x)
    if x != x:
        return CANON_NAN32
    return np.uint64(x.view(np.uint32))


@jit
def b64(x):
    return np.float64(x).view(np.uint64)


@jit
def ftz32(x):
    """Flush an f32 subnormal to a zero of the same sign (.ftz)."""
    if x != 0 and abs(x) < np.float32(1.1754943508222875e-38):
        return np.float32(0.0) * np.float32(1.0 if x > 0 else -1.0)
    return x


@jit
def clz64(v):
    if v == U0:
        return 64
    n = 0
    x = np.uint64(v)
    while (x & np.uint64(0x8000000000000000)) == U0:
        x = x << U1
        n += 1
    return n


@jit
def popc64(v):
    x = np.uint64(v)
    x = x - ((x >> U1) & np.uint64(0x5555555555555555))
    x = (x & np.uint64(0x3333333333333333)) + ((x >> np.uint64(2)) & np.uint64(0x3333333333333333))
    x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return np.int64((x * np.uint64(0x0101010101010101)) >> np.uint64(56))


@jit
def mulhi_u64(a, b):
    """High 64 bits of the 128-bit unsigned product."""
    a_lo = a & M32
    a_hi = a >> np.uint64(32)
    b_lo = b & M32
    b_hi = b >> np.uint64(32)
    p0 = a_lo * b_lo
    p1 = a_lo * b_hi
    p2 = a_hi * b_lo
    p3 = a_hi * b_hi
    mid = (p0 >> np.uint64(32)) + (p1 & M32) + (p2 & M32)
    return p3 + (p1 >> np.uint64(32)) + (p2 >> np.uint64(32)) + (mid >> np.uint64(32))


@jit
def mulhi_s64(a, b):
    h = mulhi_u64(a, b)
    if sx(a, 8) < 0:
        h = h - b
    if sx(b, 8) < 0:
        h = h - a
    return h


@jit
def int_mul(ty, md, a, b):
    """mul.lo/.hi/.wide of integer type ``ty``: (result bits, result size)."""
    size = ty & 0xF
    signed = (ty >> 4) == KIND_S
    if md & M_WIDE:
        if signed:
            return np.uint64(sx(a, size) * sx(b, size)) & mask(2 * size), 2 * size
        return ((a & mask(size)) * (b & mask(size))) & mask(2 * size), 2 * size
    if md & M_HI:
        if size == 8:
            if signed:
                return mulhi_s64(a, b), 8
            return mulhi_u64(a, b), 8
        if signed:
            return np.uint64((sx(a, size) * sx(b, size)) >> np.int64(8 * size)) & mask(size), size
        return (((a & mask(size)) * (b & mask(size))) >> np.uint64(8 * size)) & mask(size), size
    return (a * b) & mask(size), size


@jit
def sdiv(x, y):
    """C-style truncating division of int64 values (y != 0); INT64_MIN / -1 wraps to INT64_MIN."""
    ux = U0 - np.uint64(x) if x < 0 else np.uint64(x)
    uy = U0 - np.uint64(y) if y < 0 else np.uint64(y)
    q = ux // uy
    if (x < 0) != (y < 0):
        return np.int64(U0 - q)
    return np.int64(q)


@jit
def int_div(ty, a, b, want_rem):
    size = ty & 0xF
    m = mask(size)
    if (ty >> 4) == KIND_S:
        x = sx(a, size)
        y = sx(b, size)
        if y == 0:
            # PTX leaves it unspecified; we return -1 (quotient) and the dividend (remainder)
            return a & m if want_rem else m
        q = sdiv(x, y)
        if want_rem:
            return np.uint64(x - q * y) & m
        return np.uint64(q) & m
    x = a & m
    y = b & m
    if y == U0:
        return x if want_rem else m
    if want_rem:
        return x % y
    return x // y


@jit
def int_cmp(cmp, signed, x, y, size):
    """Integer comparison: cmp codes of decode.CMP (lo/ls/hi/hs are unsigned)."""
    if signed and cmp < 6:
        a = sx(x, size)
        b = sx(y, size)
        if cmp == 0:
            return a == b
        if cmp == 1:
            return a != b
        if cmp == 2:
            return a < b
        if cmp == 3:
            return a <= b
        if cmp == 4:
            return a > b
        return a >= b
    m = mask(size)
    a = x & m
    b = y & m
    if cmp == 0:
        return a == b
    if cmp == 1:
        return a != b
    if cmp == 2 or cmp == 6:
        return a < b
    if cmp == 3 or cmp == 7:
        return a <= b
    if cmp == 4 or cmp == 8:
        return a > b
    if cmp == 5 or cmp == 9:
        return a >= b
    return False


@jit
def float_cmp(cmp, a, b):
    nan = (a != a) or (b != b)
    if cmp == 16:  # num
        return not nan
    if cmp == 17:  # nan
        return nan
    if cmp >= 10:  # unordered forms: true if either is NaN
        if nan:
            return True
        cmp = cmp - 10
    elif nan:
        return False
    if cmp == 0:
        return a == b
    if cmp == 1:
        return a != b
    if cmp == 2:
        return a < b
    if cmp == 3:
        return a <= b
    if cmp == 4:
        return a > b
    return a >= b


@jit
def fread(v, size, ftz):
    """An f32 or f64 operand as float64 (exact), flushing f32 subnormals under .ftz."""
    if size == 4:
        x = f32(v)
        if ftz:
            x = ftz32(x)
        return np.float64(x)
    return f64(v)


@jit
def fwrite(x, size, md):
    """Round an exact-or-f64 value to the destination float type (RN) and apply .ftz/.sat."""
    if size == 4:
        r = np.float32(x)
        if md & M_FTZ:
            r = ftz32(r)
        if md & M_SAT:
            r = sat01_32(r)
        return b32(r)
    r64 = np.float64(x)
    if md & M_SAT:
        if r64 != r64:
            r64 = 0.0
        elif r64 < 0.0:
            r64 = 0.0
        elif r64 > 1.0:
            r64 = 1.0
    return b64(r64)


@jit
def sat01_32(r):
    if r != r:
        return np.float32(0.0)
    if r < 0:
        return np.float32(0.0)
    if r > 1:
        return np.float32(1.0)
    return r


@jit
def f32_result(r, md):
    """Write an f32 result that is already correctly rounded, applying .ftz and .sat."""
    if md & M_FTZ:
        r = ftz32(r)
    if md & M_SAT:
        r = sat01_32(r)
    return b32(r)


@jit
def float_arith(op, size, md, a, b, c):
    """add/sub/mul/fma/div/sqrt/rcp of f32/f64 with the rounding mode in md; returns bits."""
    ftz = (md & M_FTZ) != 0
    mode = md & M_RMASK
    x = fread(a, size, ftz)
    y = fread(b, size, ftz)
    z = fread(c, size, ftz)
    if size == 4:
        # operands are f32 values held exactly in f64; every result below is the exact value as
        # hi + lo, rounded once to f32 by round_f32 (correct rounding in all four modes).
        if op == OP_ADD or op == OP_SUB:
            if op == OP_SUB:
                y = -y
            hi, lo = two_sum(x, y)
        elif op == OP_MUL:
            hi = x * y  # exact: 24 x 24 bits < 53 bits
            lo = 0.0
        elif op == OP_FMA:
            hi, lo = two_sum(x * y, z)
        elif op == OP_DIV:
            if md & M_APPROX:
                return f32_result(np.float32(x / y), md)
            q = np.float32(x / y)  # f64 division then f32 rounding is correctly rounded (53 >= 2*24+2)
            if mode > R_RN and abs(q) == np.inf and abs(x) != np.inf and y != 0:
                q = adjust32(q, -1 if q > 0 else 1, mode)  # overflow: the exact quotient is finite
            elif mode > R_RN and q == 0 and x != 0 and abs(y) != np.inf:
                q = adjust32(q, 1 if (x > 0) == (y > 0) else -1, mode)  # underflow to zero
            elif mode > R_RN and q == q and abs(q) != np.inf and q != 0:
                # sign of (x/y - q) from the exact residual q*y - x (exact in f64)
                resid = np.float64(q) * y - x
                s = -1 if resid > 0 else (1 if resid < 0 else 0)  # sign(exact - q)
                if y < 0:
                    s = -s
                q = adjust32(q, s, mode)
            return f32_result(q, md)
        elif op == OP_RCP:
            if md & M_APPROX:
                return f32_result(np.float32(1.0 / x), md)
            q = np.float32(1.0 / x)
            if mode > R_RN and abs(q) == np.inf and x != 0:
                q = adjust32(q, -1 if q > 0 else 1, mode)
            elif mode > R_RN and q == q and abs(q) != np.inf and q != 0:
                resid = np.float64(q) * x - 1.0
                s = -1 if resid > 0 else (1 if resid < 0 else 0)  # sign(exact - q)
                if x < 0:
                    s = -s
                q = adjust32(q, s, mode)
            return f32_result(q, md)
        else:  # OP_SQRT
            q = np.float32(np.sqrt(x))
            if mode > R_RN and q == q and q != 0 and abs(q) != np.inf:
                resid = np.float64(q) * np.float64(q) - x
                s = -1 if resid > 0 else (1 if resid < 0 else 0)  # sign(exact - q)
                q = adjust32(q, s, mode)
            return f32_result(q, md)
        if hi != hi:
            return CANON_NAN32
        if hi == 0 and lo == 0 and mode == R_RM and op != OP_MUL:
            # IEEE: an exact-zero sum is -0 when rounding down, unless both addends are +0
            return f32_result(np.float32(zero_sum_rm(x * y if op == OP_FMA else x, z if op == OP_FMA else y)), md)
        r = round_f32(hi, lo, mode if mode != 0 else R_RN)
        return f32_result(r, md)
    # f64
    if op == OP_ADD or op == OP_SUB:
        if op == OP_SUB:
            y = -y
        r, e = two_sum(x, y)
        if r != r or abs(r) == np.inf:
            # overflow of finite operands: the exact sum is finite, below |inf|
            e = (-1.0 if r > 0 else 1.0) if (r == r and abs(x) != np.inf and abs(y) != np.inf) else 0.0
        if r == 0 and e == 0 and mode == R_RM:
            r = zero_sum_rm(x, y)
        return fwrite(round_f64(r, sign(e), mode), 8, md)
    if op == OP_MUL:
        r = x * y
        if r == 0 and x != 0 and y != 0:
            e = 1.0 if (x > 0) == (y > 0) else -1.0  # underflow to zero
        elif abs(r) != np.inf:
            e = fma64(x, y, -r)
        else:
            e = (-1.0 if r > 0 else 1.0) if (abs(x) != np.inf and abs(y) != np.inf) else 0.0
        return fwrite(round_f64(r, sign(e), mode), 8, md)
    if op == OP_FMA:
        r = fma64(x, y, z)
        if r == 0 and mode == R_RM:
            p0 = x * y
            if p0 == 0 or fma64(x, y, -p0) == 0:
                return fwrite(zero_sum_rm(p0, z), 8, md)
        if mode > R_RN and abs(r) == np.inf and abs(x) != np.inf and abs(y) != np.inf and abs(z) != np.inf:
            return fwrite(round_f64(r, -1 if r > 0 else 1, mode), 8, md)
        if mode > R_RN and r == r and abs(r) != np.inf:
            p = x * y
            pe = fma64(x, y, -p)
            s, se = two_sum(p, z)
            return fwrite(round_f64(r, sign(((s - r) + se) + pe), mode), 8, md)
        return fwrite(round_f64(r, 0, mode), 8, md)
    if op == OP_DIV or op == OP_RCP:
        if op == OP_RCP:
            y = x
            x = 1.0
        r = x / y
        if mode > R_RN and abs(r) == np.inf and abs(x) != np.inf and y != 0:
            r = round_f64(r, -1 if r > 0 else 1, mode)
        elif mode > R_RN and r == 0 and x != 0 and abs(y) != np.inf:
            r = round_f64(r, 1 if (x > 0) == (y > 0) else -1, mode)
        elif mode > R_RN and r == r and abs(r) != np.inf and r != 0:
            resid = fma64(-r, y, x)  # exact: x - r*y
            s = sign(resid)
            if y < 0:
                s = -s
            r = round_f64(r, s, mode)
        return fwrite(r, 8, md)
    # sqrt
    r = np.sqrt(x)
    if mode > R_RN and r == r and r != 0 and abs(r) != np.inf:
        r = round_f64(r, sign(fma64(-r, r, x)), mode)
    return fwrite(r, 8, md)


@jit
def zero_sum_rm(p, q):
    """The sum of two addends whose exact sum is zero, rounded toward -inf (IEEE 754 §6.3)."""
    if p == 0 and q == 0 and not np.signbit(p) and not np.signbit(q):
        return 0.0
    return -0.0


@jit
def sign(e):
    if e > 0:
        return 1
    if e < 0:
        return -1
    return 0


@jit
def adjust32(q, s, mode):
    """Step the RN result q one ulp for a directed mode, given s = sign(exact - q)."""
    if s == 0:
        return q
    if mode == R_RM and s < 0:
        return next32(q, False)
    if mode == R_RP and s > 0:
        return next32(q, True)
    if mode == R_RZ:
        if q > 0 and s < 0:
            return next32(q, False)
        if q < 0 and s > 0:
            return next32(q, True)
    return q


@jit
def float_minmax(is_max, size, md, a, b):
    ftz = (md & M_FTZ) != 0
    x = fread(a, size, ftz)
    y = fread(b, size, ftz)
    if x != x or y != y:
        if (md & M_SAT) or (x != x and y != y):  # .NaN variant, or both NaN: canonical NaN
            return CANON_NAN32 if size == 4 else np.uint64(0x7FFFFFFFFFFFFFFF)
        r = y if x != x else x
    elif x == y:
        # -0 is smaller than +0 (IEEE 754-2019 minimum/maximum)
        neg_x = np.float64(x).view(np.uint64) >> np.uint64(63)
        if is_max:
            r = y if neg_x else x
        else:
            r = x if neg_x else y
    elif is_max:
        r = x if x > y else y
    else:
        r = x if x < y else y
    if size == 4:
        return b32(np.float32(r))
    return b64(r)


@jit
def approx32(op, md, a):
    """The .approx f32 transcendentals: computed in f64 and rounded once (docs/emu.md bounds)."""
    x = fread(a, 4, (md & M_FTZ) != 0)
    if op == OP_EX2:
        r = np.exp2(x)
    elif op == OP_LG2:
        r = np.log2(x) if x >= 0 else np.nan
        if x == 0:
            r = -np.inf
    elif op == OP_SIN:
        r = np.sin(x) if abs(x) != np.inf else np.nan
    elif op == OP_COS:
        r = np.cos(x) if abs(x) != np.inf else np.nan
    elif op == OP_TANH:
        r = np.tanh(x)
    elif op == OP_RSQRT:
        if x < 0:
            r = np.nan
        elif x == 0:
            r = np.inf if np.float64(x).view(np.uint64) >> np.uint64(63) == U0 else -np.inf
        else:
            r = 1.0 / np.sqrt(x)
    else:  # OP_SQRT/OP_RCP .approx
        r = np.sqrt(x) if op == OP_SQRT else 1.0 / x
    return f32_result(np.float32(r), md)


@jit
def approx64(op, md, a):
    x = f64(a)
    if op == OP_EX2:
        r = np.exp2(x)
    elif op == OP_LG2:
        r = np.log2(x) if x > 0 else (-np.inf if x == 0 else np.nan)
    elif op == OP_SIN:
        r = np.sin(x) if abs(x) != np.inf else np.nan
    elif op == OP_COS:
        r = np.cos(x) if abs(x) != np.inf else np.nan
    elif op == OP_TANH:
        r = np.tanh(x)
    elif op == OP_RSQRT:
        r = 1.0 / np.sqrt(x) if x > 0 else (np.inf if x == 0 else np.nan)
    elif op == OP_SQRT:
        r = np.sqrt(x) if x >= 0 else np.nan
    else:
        r = 1.0 / x
    return b64(r)


@jit
def float_to_int(x, dsize, dsigned, mode):
    """cvt.rXi from a float to an integer type: round, then saturate (NaN -> 0), as PTX defines."""
    if x != x:
        return U0
    if mode == R_RZ:
        r = np.trunc(x)
    elif mode == R_RM:
        r = np.floor(x)
    elif mode == R_RP:
        r = np.ceil(x)
    else:
        r = np.rint(x)  # round half to even
    if dsigned:
        lo = -np.ldexp(1.0, 8 * dsize - 1)
        hi = np.ldexp(1.0, 8 * dsize - 1)
        if r < lo:
            return np.uint64(np.int64(-9223372036854775807 - 1) >> np.int64(64 - 8 * dsize)) & mask(dsize)
        if r >= hi:
            return mask(dsize) >> U1
        return np.uint64(np.int64(r)) & mask(dsize)
    if r <= 0:
        return U0
    if r >= np.ldexp(1.0, 8 * dsize):
        return mask(dsize)
    if r >= 9223372036854775808.0:
        return np.uint64(np.int64(r - 9223372036854775808.0)) + np.uint64(9223372036854775808)
    return np.uint64(np.int64(r))


@jit
def int_to_float(v, ssize, ssigned, dsize, mode):
    """cvt from an integer to f32/f64 with rounding mode (RN default), exactly rounded."""
    if ssigned:
        iv = sx(v, ssize)
        neg = iv < 0
        mag = np.uint64(0) - np.uint64(iv) if neg else np.uint64(iv)
    else:
        neg = False
        mag = v & mask(ssize)
    # split the magnitude into two exactly representable halves: hi + lo == mag exactly
    hi_part = np.float64(mag >> np.uint64(32)) * 4294967296.0
    lo_part = np.float64(mag & M32)
    hi, lo = two_sum(hi_part, lo_part)
    if neg:
        hi = -hi
        lo = -lo
    if mode == 0:
        mode = R_RN
    if dsize == 4:
        return b32(round_f32(hi, lo, mode))
    return b64(round_f64(hi, sign(lo), mode))


@jit
def cvt(ty, ty2, md, a):
    dsize = ty & 0xF
    dkind = ty >> 4
    ssize = ty2 & 0xF
    skind = ty2 >> 4
    mode = md & M_RMASK
    if skind != KIND_F and dkind != KIND_F:
        # integer -> integer: extend the source per its type, then truncate or saturate
        if skind == KIND_S:
            iv = sx(a, ssize)
        else:
            iv = np.int64(a & mask(ssize)) if ssize < 8 else np.int64(-1)
        if md & M_SAT:
            if skind != KIND_S and ssize == 8:
                uv = a  # u64 source: compare unsigned
                if dkind == KIND_S:
                    if uv > (mask(dsize) >> U1):
                        return mask(dsize) >> U1
                    return uv
                return uv if uv <= mask(dsize) else mask(dsize)
            if dkind == KIND_S:
                hi = np.int64(mask(dsize) >> U1)
                lo = -hi - 1
                if iv > hi:
                    return np.uint64(hi) & mask(dsize)
                if iv < lo:
                    return np.uint64(lo) & mask(dsize)
                return np.uint64(iv) & mask(dsize)
            if iv < 0:
                return U0
            if dsize < 8 and np.uint64(iv) > mask(dsize):
                return mask(dsize)
            return np.uint64(iv) & mask(dsize)
        if skind == KIND_S:
            return np.uint64(iv) & mask(dsize)
        return a & mask(ssize) & mask(dsize)
    if skind == KIND_F and dkind == KIND_F:
        x = fread(a, ssize, (md & M_FTZ) != 0)
        if md & M_IRND:
            # round to an integral value in the same format
            if x == x and abs(x) != np.inf:
                if mode == R_RZ:
                    x = np.trunc(x)
                elif mode == R_RM:
                    x = np.floor(x)
                elif mode == R_RP:
                    x = np.ceil(x)
                else:
                    x = np.rint(x)
            if dsize == 4:
                return f32_result(np.float32(x), md)
            return fwrite(x, 8, md)
        if dsize == 4:
            if ssize == 8:
                if x != x:
                    return CANON_NAN32
                return f32_result(round_f32(x, 0.0, mode if mode else R_RN), md)
            return f32_result(np.float32(x), md)
        return fwrite(x, 8, md)
    if skind == KIND_F:
        x = fread(a, ssize, (md & M_FTZ) != 0)
        return float_to_int(x, dsize, dkind == KIND_S, mode)
    r = int_to_float(a, ssize, skind == KIND_S, dsize, mode)
    if dsize == 4:
        return f32_result(f32(r), md)
    return fwrite(f64(r), 8, md)


@jit
def alu(op, ty, ty2, md, sub, a, b, c, d, cin):
    """One thread's register result of a non-memory, non-control instruction (module docstring)."""
    size = ty & 0xF
    kind = ty >> 4
    m = mask(size)
    if op == OP_MOV:
        return a & m, U0
    if op == OP_ADD or op == OP_SUB:
        if kind == KIND_F:
            return float_arith(op, size, md, a, b, b), U0
        if md & M_SAT:  # add.sat.s32: clamp to the s32 range instead of wrapping
            x = sx(a, 4)
            y = sx(b, 4)
            r = x + y if op == OP_ADD else x - y
            if r > 2147483647:
                r = 2147483647
            elif r < -2147483648:
                r = -2147483648
            return np.uint64(r) & M32, U0
        carry = cin if (md & M_CIN) else U0
        x = a & m
        y = b & m
        if op == OP_ADD:
            r = (x + y + carry) & m
            if size == 8:
                co = U1 if (r < x or (carry == U1 and r == x)) else U0
            else:
                co = ((x + y + carry) >> np.uint64(8 * size)) & U1
        else:
            r = (x - y - carry) & m
            co = U1 if (x < y or (x - y) < carry) else U0  # borrow out
        return r, co
    if op == OP_MUL:
        if kind == KIND_F:
            return float_arith(OP_MUL, size, md, a, b, b), U0
        r, rs = int_mul(ty, md, a, b)
        return r, U0
    if op == OP_MAD:
        p, psize = int_mul(ty, md, a, b)
        pm = mask(psize)
        carry = cin if (md & M_CIN) else U0
        if md & M_SAT:  # mad.hi.sat.s32
            r = sx(p, 4) + sx(c, 4)
            if r > 2147483647:
                r = 2147483647
            elif r < -2147483648:
                r = -2147483648
            return np.uint64(r) & M32, U0
        x = p & pm
        y = c & pm
        r = (x + y + carry) & pm
        if psize == 8:
            co = U1 if (r < x or (carry == U1 and r == x)) else U0
        else:
            co = ((x + y + carry) >> np.uint64(8 * psize)) & U1
        return r, co
    if op == OP_FMA:
        return float_arith(OP_FMA, size, md, a, b, c), U0
    if op == OP_MUL24 or op == OP_MAD24:
        if kind == KIND_S:
            p = np.uint64(sx(a & np.uint64(0xFFFFFF), 3) * sx(b & np.uint64(0xFFFFFF), 3))
        else:
            p = (a & np.uint64(0xFFFFFF)) * (b & np.uint64(0xFFFFFF))
        r = (p >> np.uint64(16)) if (md & M_HI) else p
        if op == OP_MAD24:
            r = r + c
        return r & M32, U0
    if op == OP_SAD:
        if kind == KIND_S:
            dlt = sx(a, size) - sx(b, size)
            ad = np.uint64(dlt if dlt >= 0 else -dlt)
        else:
            x = a & m
            y = b & m
            ad = x - y if x >= y else y - x
        return (c + ad) & m, U0
    if op == OP_DIV:
        if kind == KIND_F:
            return float_arith(OP_DIV, size, md, a, b, b), U0
        return int_div(ty, a, b, False), U0
    if op == OP_REM:
        return int_div(ty, a, b, True), U0
    if op == OP_MIN or op == OP_MAX:
        if kind == KIND_F:
            return float_minmax(op == OP_MAX, size, md, a, b), U0
        if kind == KIND_S:
            x = sx(a, size)
            y = sx(b, size)
            if op == OP_MIN:
                return np.uint64(x if x < y else y) & m, U0
            return np.uint64(x if x > y else y) & m, U0
        x = a & m
        y = b & m
        if op == OP_MIN:
            return (x if x < y else y), U0
        return (x if x > y else y), U0
    if op == OP_ABS or op == OP_NEG:
        if kind == KIND_F:
            sbit = U1 << np.uint64(8 * size - 1)
            v = a & m
            if (md & M_FTZ) and size == 4:
                v = b32(ftz32(f32(v))) if f32(v) == f32(v) else v
            if op == OP_ABS:
                return v & ~sbit & m, U0
            return (v ^ sbit) & m, U0
        x = sx(a, size)
        if op == OP_NEG or x < 0:
            return (U0 - (a & m)) & m, U0
        return a & m, U0
    if op == OP_AND:
        return a & b & m, U0
    if op == OP_OR:
        return (a | b) & m, U0
    if op == OP_XOR:
        return (a ^ b) & m, U0
    if op == OP_NOT:
        if kind == KIND_P:
            return (a & U1) ^ U1, U0
        return ~a & m, U0
    if op == OP_CNOT:
        return (U1 if (a & m) == U0 else U0), U0
    if op == OP_SHL or op == OP_SHR:
        n = b & M32
        bits = np.uint64(8 * size)
        if op == OP_SHL:
            if n >= bits:
                return U0, U0
            return (a << n) & m, U0
        if kind == KIND_S:
            if n >= bits:
                n = bits - U1
            return np.uint64(sx(a, size) >> np.int64(n)) & m, U0
        if n >= bits:
            return U0, U0
        return (a & m) >> n, U0
    if op == OP_SETP or op == OP_SET:
        cmp = sub & 0xFF
        bop = sub >> 8
        sty = ty2 if op == OP_SET else ty
        ssize = sty & 0xF
        if (sty >> 4) == KIND_F:
            t = float_cmp(cmp, fread(a, ssize, (md & M_FTZ) != 0), fread(b, ssize, (md & M_FTZ) != 0))
        else:
            t = int_cmp(cmp, (sty >> 4) == KIND_S, a, b, ssize)
        p = U1 if t else U0
        q = U0 if t else U1
        cc = c & U1
        if bop == 1:
            p = p & cc
            q = q & cc
        elif bop == 2:
            p = p | cc
            q = q | cc
        elif bop == 3:
            p = p ^ cc
            q = q ^ cc
        if op == OP_SET:
            if kind == KIND_F:
                return (b32(np.float32(1.0)) if p == U1 else U0), U0
            return (m if p == U1 else U0), U0
        return p, q
    if op == OP_SELP:
        return (a & m) if (c & U1) else (b & m), U0
    if op == OP_SLCT:
        if (ty2 >> 4) == KIND_F:
            z = fread(c, 4, (md & M_FTZ) != 0)
            take = z >= 0
        else:
            take = sx(c, 4) >= 0
        return (a & m) if take else (b & m), U0
    if op == OP_CVT:
        return cvt(ty, ty2, md, a), U0
    if op == OP_PRMT:
        x = (a & M32) | ((b & M32) << np.uint64(32))
        r = U0
        for k in range(4):
            sel = (c >> np.uint64(4 * k)) & np.uint64(0xF)
            byte = (x >> (np.uint64(8) * (sel & np.uint64(7)))) & np.uint64(0xFF)
            if sel & np.uint64(8):  # replicate the byte's sign bit
                byte = np.uint64(0xFF) if (byte & np.uint64(0x80)) else U0
            r = r | (byte << np.uint64(8 * k))
        return r, U0
    if op == OP_BFE:
        bits = 8 * size
        pos = np.int64(b & np.uint64(0xFF))
        ln = np.int64(c & np.uint64(0xFF))
        if kind == KIND_S:
            msb = pos + ln - 1
            if msb > bits - 1:
                msb = bits - 1
            if ln == 0:
                sbit = U0
            else:
                sbit = (a >> np.uint64(msb)) & U1
            r = U0
            for k in range(bits):
                if k < ln and pos + k <= bits - 1:
                    bit = (a >> np.uint64(pos + k)) & U1
                else:
                    bit = sbit
                r = r | (bit << np.uint64(k))
            return r & m, U0
        if ln == 0 or pos >= bits:
            return U0, U0
        v = (a & m) >> np.uint64(pos)
        if ln < 64:
            v = v & ((U1 << np.uint64(ln)) - U1)
        return v & m, U0
    if op == OP_BFI:
        bits = 8 * size
        pos = np.int64(c & np.uint64(0xFF))
        ln = np.int64(d & np.uint64(0xFF))
        r = b & m
        for k in range(ln):
            if pos + k >= bits:
                break
            bit = (a >> np.uint64(k)) & U1
            r = (r & ~(U1 << np.uint64(pos + k))) | (bit << np.uint64(pos + k))
        return r & m, U0
    if op == OP_POPC:
        return np.uint64(popc64(a & m)), U0
    if op == OP_CLZ:
        return np.uint64(clz64(a & m) - (64 - 8 * size)), U0
    if op == OP_BREV:
        r = U0
        for k in range(8 * size):
            r = r | (((a >> np.uint64(k)) & U1) << np.uint64(8 * size - 1 - k))
        return r, U0
    if op == OP_BFIND:
        v = a & m
        if kind == KIND_S and sx(a, size) < 0:
            v = ~a & m  # for negatives: the most significant non-sign bit
        if v == U0:
            return M32, U0
        idx = 63 - clz64(v)
        if sub == 1:
            return np.uint64(8 * size - 1 - idx), U0
        return np.uint64(idx), U0
    if op == OP_COPYSIGN:
        sbit = U1 << np.uint64(8 * size - 1)
        return ((b & m) & ~sbit) | (a & sbit), U0
    if op == OP_SQRT or op == OP_RCP:
        if md & M_APPROX:
            if size == 4:
                return approx32(op, md, a), U0
            return approx64(op, md, a), U0
        return float_arith(op, size, md, a, a, a), U0
    if op == OP_RSQRT or op == OP_EX2 or op == OP_LG2 or op == OP_SIN or op == OP_COS or op == OP_TANH:
        if size == 4:
            return approx32(op, md, a), U0
        return approx64(op, md, a), U0
    if op == OP_TESTP:
        x = fread(a, size, False)
        ax = abs(x)
        tiny = 1.1754943508222875e-38 if size == 4 else 2.2250738585072014e-308
        if sub == 0:
            t = x == x and ax != np.inf
        elif sub == 1:
            t = ax == np.inf
        elif sub == 2:
            t = x == x
        elif sub == 3:
            t = x != x
        elif sub == 4:
            t = x == x and ax != np.inf and ax >= tiny
        else:
            t = x == x and ax != 0 and ax < tiny
        return (U1 if t else U0), U0
    if op == OP_SHF:
        n = c & M32
        if sub & 2:
            if n > np.uint64(32):
                n = np.uint64(32)
        else:
            n = n & np.uint64(31)
        x = (a & M32) | ((b & M32) << np.uint64(32))
        if sub & 1:  # shf.r: low word of the right-shifted pair
            return (x >> n) & M32, U0
        return ((x << n) >> np.uint64(32)) & M32, U0
    if op == OP_LOP3:
        r = U0
        for k in range(8):
            if (d >> np.uint64(k)) & U1:
                ta = a if (k & 4) else ~a
                tb = b if (k & 2) else ~b
                tc = c if (k & 1) else ~c
                r = r | (ta & tb & tc)
        return r & M32, U0
    return U0, U0
