"""Texture fetches (numba, inlined into :func:`simt_fast.emu.machine.run`): ``tex.{1d,2d,3d}.v4``.

A texture is a row of the launch's descriptor table ``texd`` (:mod:`simt_fast.emu.texture` builds
it): where its texels lie in the flat memory (and at which device address), its size per
dimension, channels, element size and kind, address mode per dimension and whether coordinates are
normalised. Sampling is point sampling, as CUDA's ``cudaFilterModePoint``: the texel containing the
coordinate. Integer coordinates (``tex1Dfetch``) index texels directly and read zero outside the
texture, as CUDA's fetches from linear memory do; float coordinates apply the address mode.
A fetch is one global access in /mem: the texel's device address, or NO_ACCESS when it reads the
border (no memory is touched).
"""

from __future__ import annotations

import numpy as np

from .._jit import hot_helper, jit
from .alu import M32, U0, f32, sx
from .codes import (
    ADDR_BORDER, ADDR_CLAMP, ADDR_WRAP, K_REG, KIND_F, KIND_S, NO_ACCESS, S_GLOBAL, TEX_HANDLE_BASE, TEX_VIA_TEXREF, TX_ADDR,
    TX_CHANNELS, TX_EKIND, TX_ESIZE, TX_MODE0, TX_NORM, TX_OFF, TX_SIZE0,
)
from .ctl import F_NONE, F_OOB, F_TEXTURE, fault
from .exec_memory import log_mem, mload, resolve
from .operands import rdop

_COORD_LIMIT = 2.0**31  # coordinates beyond this are out of every texture (and fit an int64)


@jit(inline="always")
def texel_index(x, size, mode, norm):
    """(index, inside) of the texel a float coordinate ``x`` samples in a dimension of ``size``."""
    if x != x:  # NaN samples nothing
        return np.int64(0), mode != ADDR_BORDER
    if norm:
        if mode == ADDR_WRAP:
            x = x - np.floor(x)
        elif mode != ADDR_CLAMP and mode != ADDR_BORDER:  # mirror: reflect every other repetition
            x = abs(x) - 2.0 * np.floor(abs(x) * 0.5)
            if x > 1.0:
                x = 2.0 - x
        x = x * size
    x = min(max(x, -_COORD_LIMIT), _COORD_LIMIT)
    i = np.int64(np.floor(x))
    if mode == ADDR_BORDER:
        return i, i >= 0 and i < size
    return min(max(i, np.int64(0)), np.int64(size - 1)), True


@hot_helper
def exec_tex(p, gn, lanes, act, regs, RS, sregs, NS, ty, ty2, sub, okind, oval, vec, texd, mv, amap, ctl,
             record_mem, tbase, mlog, nmev):
    """tex for the group: returns (fault code or F_NONE, memory-log entries so far)."""
    dims = vec[p]
    fcoord = (ty2[p] >> 4) == KIND_F
    n_tex = texd.shape[0]
    for k in range(gn):
        t = lanes[k]
        if act[k] == 0:
            if record_mem:
                nmev = log_mem(mlog, nmev, tbase + t, NO_ACCESS)
            continue
        rb = t * RS
        sb = t * NS
        h = rdop(okind, oval, p, 0, regs, rb, sregs, sb)
        if sub[p] & TEX_VIA_TEXREF:  # a .texref variable: the handle is stored in it
            off, rec = resolve(S_GLOBAL, h, 8, amap, t)
            if off < 0:
                return fault(ctl, F_OOB, t, p, np.int64(h), 8), nmev
            h = mload(mv, off, 8)
        ti = np.int64(h - np.uint64(TEX_HANDLE_BASE)) if h >= np.uint64(TEX_HANDLE_BASE) else np.int64(-1)
        if ti < 0 or ti >= n_tex:
            return fault(ctl, F_TEXTURE, t, p, np.int64(h), n_tex), nmev
        lin = np.int64(0)
        inside = True
        stride = np.int64(1)
        for d in range(dims):
            size = texd[ti, TX_SIZE0 + d]
            c = rdop(okind, oval, p, 5 + d, regs, rb, sregs, sb)
            if fcoord:
                i, ok = texel_index(np.float64(f32(c)), size, texd[ti, TX_MODE0 + d], texd[ti, TX_NORM] != 0)
            else:
                i = sx(c, 4)
                ok = i >= 0 and i < size
            inside = inside and ok
            lin += i * stride
            stride *= size
        esize = texd[ti, TX_ESIZE]
        texel = lin * texd[ti, TX_CHANNELS] * esize
        for j in range(4):
            v = U0
            if inside and j < texd[ti, TX_CHANNELS]:
                v = mload(mv, texd[ti, TX_OFF] + texel + j * esize, esize)
                if texd[ti, TX_EKIND] == KIND_S:
                    v = np.uint64(sx(v, esize)) & M32
            if okind[p, 1 + j] == K_REG:
                regs[rb + np.int64(oval[p, 1 + j])] = v
        if record_mem:
            nmev = log_mem(mlog, nmev, tbase + t, np.uint64(texd[ti, TX_ADDR] + texel) if inside else NO_ACCESS)
    return F_NONE, nmev
