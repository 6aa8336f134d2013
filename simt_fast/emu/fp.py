"""IEEE-754 helpers for the emulator: a correctly rounded f64 fma and directed-rounding adjusters.

* :func:`fma64` is LLVM's ``llvm.fma.f64`` (one rounding) under numba; with
  ``NUMBA_DISABLE_JIT=1`` it is an exact rational computation, so both modes agree bit for bit.
* f32 results in any rounding mode are obtained from an *exact* value ``hi + lo`` (two f64s,
  produced by error-free transformations) by :func:`round_f32`: round-to-odd at 53 bits makes
  the final rounding to 24 bits correct (53 >= 24 + 2), and directed modes step one ulp from the
  round-to-nearest result when the exact residual has the wrong sign.
* f64 results in directed modes use the sign of the exact residual (:func:`round_f64`).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numba
import numpy as np

from .._jit import jit
from .codes import R_RM, R_RN, R_RP

if numba.config.DISABLE_JIT:

    def fma64(a, b, c):
        a, b, c = float(a), float(b), float(c)
        if not (math.isfinite(a) and math.isfinite(b) and math.isfinite(c)):
            return np.float64(a * b + c)
        exact = Fraction(a) * Fraction(b) + Fraction(c)
        if exact == 0:
            # the sign of an exact zero sum follows IEEE: -0 only if both addends are -0
            p = a * b
            return np.float64(p + c)
        try:
            return np.float64(float(exact))  # Fraction -> float rounds to nearest even
        except OverflowError:
            return np.float64(math.copysign(math.inf, exact))

else:
    from llvmlite import ir as _llvm_ir
    from numba.core import types as _types
    from numba.extending import intrinsic

    @intrinsic
    def _llvm_fma(typingctx, a, b, c):
        sig = _types.float64(_types.float64, _types.float64, _types.float64)

        def codegen(context, builder, signature, args):
            dbl = _llvm_ir.DoubleType()
            fn = builder.module.declare_intrinsic("llvm.fma", [dbl], _llvm_ir.FunctionType(dbl, [dbl, dbl, dbl]))
            return builder.call(fn, args)

        return sig, codegen

    @jit
    def fma64(a, b, c):
        return _llvm_fma(a, b, c)


@jit
def two_sum(a, b):
    """(s, e) with s = fl(a + b) and a + b == s + e exactly (Knuth)."""
    s = a + b
    bb = s - a
    e = (a - (s - bb)) + (b - bb)
    return s, e


@jit
def next32(x, up):
    """The f32 neighbour of ``x`` towards +inf (``up``) or -inf."""
    if x != x:
        return x
    b = np.float32(x).view(np.uint32)
    if x == 0:
        if up:
            return np.uint32(1).view(np.float32)
        return np.uint32(0x80000001).view(np.float32)
    if (x > 0) == up:
        return np.uint32(b + np.uint32(1)).view(np.float32)
    return np.uint32(b - np.uint32(1)).view(np.float32)


@jit
def next64(x, up):
    if x != x:
        return x
    b = np.float64(x).view(np.uint64)
    if x == 0:
        if up:
            return np.uint64(1).view(np.float64)
        return np.uint64(0x8000000000000001).view(np.float64)
    if (x > 0) == up:
        return np.uint64(b + np.uint64(1)).view(np.float64)
    return np.uint64(b - np.uint64(1)).view(np.float64)


@jit
def round_f32(hi, lo, mode):
    """The f32 rounding (mode R_*) of the exact value hi + lo (|lo| <= ulp(hi)/2, both f64)."""
    h = hi
    if lo != 0.0 and hi == hi and abs(hi) != np.inf:
        b = np.float64(hi).view(np.uint64)
        if (b & np.uint64(1)) == np.uint64(0):
            # round to odd: the sticky bit keeps the second rounding from creating a false tie
            if (lo > 0) == (hi > 0):
                h = np.uint64(b + np.uint64(1)).view(np.float64)
            else:
                h = np.uint64(b - np.uint64(1)).view(np.float64)
    r = np.float32(h)
    if mode <= R_RN or r != r:
        return r
    # sign of (r - exact): r - hi is exact (Sterbenz) unless r is infinite
    d = (np.float64(r) - hi) - lo
    if mode == R_RM:
        if d > 0:
            r = next32(r, False)
    elif mode == R_RP:
        if d < 0:
            r = next32(r, True)
    else:  # R_RZ
        if r > 0 and d > 0:
            r = next32(r, False)
        elif r < 0 and d < 0:
            r = next32(r, True)
    return r


@jit
def round_f64(r, resid_sign, mode):
    """Adjust the round-to-nearest f64 result ``r`` to mode R_*, given sign(exact - r)."""
    if mode <= R_RN or r != r or resid_sign == 0:
        return r
    if mode == R_RM:
        if resid_sign < 0:
            return next64(r, False)
    elif mode == R_RP:
        if resid_sign > 0:
            return next64(r, True)
    else:
        if r > 0 and resid_sign < 0:
            return next64(r, False)
        if r < 0 and resid_sign > 0:
            return next64(r, True)
        if r == np.inf and resid_sign < 0:
            return next64(r, False)
        if r == -np.inf and resid_sign > 0:
            return next64(r, True)
    return r
