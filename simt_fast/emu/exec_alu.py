"""The arithmetic family of the interpreter (numba, inlined into :func:`simt_fast.emu.machine.run`).

Every register-to-register instruction of a group: vector ``mov`` (pack/unpack), the fast-path ops
(``decode.fast_code``: integer/f32/f64 arithmetic without flags, comparisons, ``mad``/``selp``/
``fma``) in tight per-operand-shape lane loops that LLVM specialises on the loop-invariant opcode,
and everything else through the per-thread semantics :func:`simt_fast.emu.alu.alu`.
"""

from __future__ import annotations

import numpy as np

from .._jit import hot_helper, jit
from .alu import ALL, CANON_NAN32, M32, U0, U1, alu, b32, f32, f64, float_cmp, int_cmp, mask, sx
from .codes import (
    FAST_ADD, FAST_AND, FAST_CVT_SEXT, FAST_CVT_ZEXT, FAST_DADD, FAST_DFMA, FAST_DMUL, FAST_DSUB, FAST_FADD,
    FAST_FFMA, FAST_FMUL, FAST_FSETP, FAST_FSUB, FAST_MAD, FAST_MOV, FAST_MUL, FAST_MULWIDE_S, FAST_MULWIDE_U,
    FAST_OR, FAST_SELP, FAST_SETP, FAST_SHL, FAST_SHR_S, FAST_SHR_U, FAST_SUB, FAST_XOR, K_REG, K_SREG, KIND_S,
    M_CC, OP_PACK, OP_SETP, OP_UNPACK, R_RN,
)
from .fp import fma64, round_f32, two_sum
from .operands import opval, rdop


@jit(inline="always")
def fast_op(fc, a, b, m, sz, sz2):
    """The common ops without flags (decode.fast_code): the interpreter's fast path.

    ``m``/``sz``: mask and size of the instruction type; ``sz2``: size of cvt's source type.
    """
    if fc == FAST_MOV:
        return a & m
    if fc == FAST_ADD:
        return (a + b) & m
    if fc == FAST_SUB:
        return (a - b) & m
    if fc == FAST_MUL:
        return (a * b) & m
    if fc == FAST_AND:
        return a & b & m
    if fc == FAST_OR:
        return (a | b) & m
    if fc == FAST_XOR:
        return (a ^ b) & m
    if fc == FAST_FADD:
        return b32(f32(a) + f32(b))
    if fc == FAST_FSUB:
        return b32(f32(a) - f32(b))
    if fc == FAST_FMUL:
        return b32(f32(a) * f32(b))
    if fc == FAST_DADD:
        return np.float64(f64(a) + f64(b)).view(np.uint64)
    if fc == FAST_DSUB:
        return np.float64(f64(a) - f64(b)).view(np.uint64)
    if fc == FAST_DMUL:
        return np.float64(f64(a) * f64(b)).view(np.uint64)
    if fc == FAST_MULWIDE_S:
        return np.uint64(sx(a, sz) * sx(b, sz)) & mask(2 * sz)
    if fc == FAST_MULWIDE_U:
        return ((a & m) * (b & m)) & mask(2 * sz)
    if fc == FAST_CVT_SEXT:
        return np.uint64(sx(a, sz2)) & m
    if fc == FAST_CVT_ZEXT:
        return a & mask(sz2) & m
    if fc == FAST_SHR_S:
        n = b & M32
        w = shift_width(m)
        if n >= w:
            n = w - U1
        return np.uint64(sx(a, sz) >> np.int64(n)) & m
    if fc == FAST_SHL:
        n = b & M32
        return U0 if n >= shift_width(m) else (a << n) & m
    # FAST_SHR_U
    n = b & M32
    return U0 if n >= shift_width(m) else (a & m) >> n


@jit(inline="always")
def shift_width(m):
    if m == M32:
        return np.uint64(32)
    if m == ALL:
        return np.uint64(64)
    if m == np.uint64(0xFFFF):
        return np.uint64(16)
    return np.uint64(8)


@hot_helper
def exec_alu(o, p, gn, lanes, act, act_all, regs, RS, sregs, NS, fast, ty, ty2, md, sub, okind, oval, vec, n_regs):
    """Run arithmetic instruction ``p`` (opcode ``o``) for the group's ``gn`` threads ``lanes``.

    ``act[k]``: lane k's guard is true; ``act_all``: every lane's is (no guard)."""
    if o == OP_PACK:
        esz = np.uint64(8 * ty2[p])
        em = mask(ty2[p])
        for k in range(gn):
            if act[k]:
                t = lanes[k]
                rb = t * RS
                r = U0
                for j in range(vec[p]):
                    r = r | ((rdop(okind, oval, p, 1 + j, regs, rb, sregs, t * NS) & em) << (esz * np.uint64(j)))
                regs[rb + np.int64(oval[p, 0])] = r
    elif o == OP_UNPACK:
        esz = np.uint64(8 * ty2[p])
        em = mask(ty2[p])
        for k in range(gn):
            if act[k]:
                t = lanes[k]
                rb = t * RS
                a = rdop(okind, oval, p, 0, regs, rb, sregs, t * NS)
                for j in range(vec[p]):
                    if okind[p, 1 + j] == K_REG:
                        regs[rb + np.int64(oval[p, 1 + j])] = (a >> (esz * np.uint64(j))) & em
    else:
        # operand kinds and values are per instruction: read them once
        o_ty = ty[p]
        o_ty2 = ty2[p]
        o_md = md[p]
        o_sub = sub[p]
        fc = fast[p]
        cc_idx = n_regs
        d0 = np.int64(oval[p, 0])
        k1 = okind[p, 1]
        v1 = oval[p, 1]
        i1 = np.int64(v1)
        k2 = okind[p, 2]
        v2 = oval[p, 2]
        i2 = np.int64(v2)
        k3 = okind[p, 3]
        v3 = oval[p, 3]
        i3 = np.int64(v3)
        k4 = okind[p, 4]
        v4 = oval[p, 4]
        i4 = np.int64(v4)
        m = mask(o_ty & 0xF)
        sz = o_ty & 0xF
        simple = fc != 0 and (fc <= FAST_SHR_U or (fc >= FAST_FADD and fc <= FAST_FMUL) or (fc >= FAST_MULWIDE_S and fc <= FAST_DMUL))
        if simple and act_all and k1 != K_SREG and k2 != K_SREG:
            # the commonest cases, unswitched (one tight loop per operand shape, which
            # LLVM specialises on the loop-invariant opcode): unguarded, no special regs
            sz2 = o_ty2 & 0xF
            if k1 == K_REG and k2 == K_REG:
                for k in range(gn):
                    rb = lanes[k] * RS
                    regs[rb + d0] = fast_op(fc, regs[rb + i1], regs[rb + i2], m, sz, sz2)
            elif k1 == K_REG:
                for k in range(gn):
                    rb = lanes[k] * RS
                    regs[rb + d0] = fast_op(fc, regs[rb + i1], v2, m, sz, sz2)
            else:
                for k in range(gn):
                    rb = lanes[k] * RS
                    b = regs[rb + i2] if k2 == K_REG else v2
                    regs[rb + d0] = fast_op(fc, v1, b, m, sz, sz2)
        elif fc == FAST_SETP and act_all and k2 == K_REG and k3 != K_SREG:
            signed = (o_ty >> 4) == KIND_S
            for k in range(gn):
                rb = lanes[k] * RS
                c = regs[rb + i3] if k3 == K_REG else v3
                tv = int_cmp(o_sub, signed, regs[rb + i2], c, sz)
                regs[rb + d0] = U1 if tv else U0
                if k1 == K_REG:
                    regs[rb + i1] = U0 if tv else U1
        elif fc == FAST_FFMA and act_all and k1 == K_REG and k2 != K_SREG and k3 != K_SREG:
            for k in range(gn):
                rb = lanes[k] * RS
                b = regs[rb + i2] if k2 == K_REG else v2
                c = regs[rb + i3] if k3 == K_REG else v3
                # exact x*y in f64, exact sum as hi+lo, one rounding to f32
                hi, lo = two_sum(np.float64(f32(regs[rb + i1])) * np.float64(f32(b)), np.float64(f32(c)))
                regs[rb + d0] = b32(round_f32(hi, lo, R_RN)) if hi == hi else CANON_NAN32
        elif fc == FAST_DFMA and act_all and k1 == K_REG and k2 != K_SREG and k3 != K_SREG:
            for k in range(gn):
                rb = lanes[k] * RS
                b = regs[rb + i2] if k2 == K_REG else v2
                c = regs[rb + i3] if k3 == K_REG else v3
                regs[rb + d0] = np.float64(fma64(f64(regs[rb + i1]), f64(b), f64(c))).view(np.uint64)
        elif (fc == FAST_MAD or fc == FAST_SELP) and act_all and k1 == K_REG and k2 != K_SREG and k3 != K_SREG:
            for k in range(gn):
                rb = lanes[k] * RS
                a = regs[rb + i1]
                b = regs[rb + i2] if k2 == K_REG else v2
                c = regs[rb + i3] if k3 == K_REG else v3
                if fc == FAST_MAD:
                    regs[rb + d0] = (a * b + c) & m
                else:
                    regs[rb + d0] = (a & m) if (c & U1) else (b & m)
        elif fc != 0:
            for k in range(gn):
                if act[k] == 0:
                    continue
                t = lanes[k]
                rb = t * RS
                sb = t * NS
                a = opval(k1, v1, i1, regs, rb, sregs, sb)
                b = opval(k2, v2, i2, regs, rb, sregs, sb)
                if fc == FAST_SETP:
                    c = opval(k3, v3, i3, regs, rb, sregs, sb)
                    regs[rb + d0] = U1 if int_cmp(o_sub, (o_ty >> 4) == KIND_S, b, c, sz) else U0
                    if k1 == K_REG:
                        regs[rb + i1] = U0 if int_cmp(o_sub, (o_ty >> 4) == KIND_S, b, c, sz) else U1
                elif fc == FAST_MAD:
                    c = opval(k3, v3, i3, regs, rb, sregs, sb)
                    regs[rb + d0] = (a * b + c) & m
                elif fc == FAST_SELP:
                    c = opval(k3, v3, i3, regs, rb, sregs, sb)
                    regs[rb + d0] = (a & m) if (c & U1) else (b & m)
                elif fc == FAST_DFMA:
                    c = opval(k3, v3, i3, regs, rb, sregs, sb)
                    regs[rb + d0] = np.float64(fma64(f64(a), f64(b), f64(c))).view(np.uint64)
                elif fc == FAST_FFMA:
                    # exact x*y in f64, exact sum as hi+lo, one rounding to f32
                    c = opval(k3, v3, i3, regs, rb, sregs, sb)
                    hi, lo = two_sum(np.float64(f32(a)) * np.float64(f32(b)), np.float64(f32(c)))
                    regs[rb + d0] = b32(round_f32(hi, lo, R_RN)) if hi == hi else CANON_NAN32
                elif fc == FAST_FSETP:
                    c = opval(k3, v3, i3, regs, rb, sregs, sb)
                    tv = float_cmp(o_sub & 0xFF, np.float64(f32(b)), np.float64(f32(c)))
                    regs[rb + d0] = U1 if tv else U0
                    if k1 == K_REG:
                        regs[rb + i1] = U0 if tv else U1
                else:
                    regs[rb + d0] = fast_op(fc, a, b, m, sz, o_ty2 & 0xF)
        else:
            for k in range(gn):
                if act[k] == 0:
                    continue
                t = lanes[k]
                rb = t * RS
                sb = t * NS
                a = opval(k1, v1, i1, regs, rb, sregs, sb)
                b = opval(k2, v2, i2, regs, rb, sregs, sb)
                c = opval(k3, v3, i3, regs, rb, sregs, sb)
                d = opval(k4, v4, i4, regs, rb, sregs, sb)
                if o == OP_SETP:
                    r, aux = alu(o, o_ty, o_ty2, o_md, o_sub, b, c, d, U0, U0)
                    regs[rb + d0] = r
                    if k1 == K_REG:
                        regs[rb + i1] = aux
                else:
                    r, aux = alu(o, o_ty, o_ty2, o_md, o_sub, a, b, c, d, regs[rb + cc_idx])
                    regs[rb + d0] = r
                    if o_md & M_CC:
                        regs[rb + cc_idx] = aux
