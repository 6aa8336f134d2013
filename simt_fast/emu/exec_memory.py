"""The memory family of the interpreter (numba, inlined into :func:`simt_fast.emu.machine.run`).

``ld``/``st``/``atom``/``red`` and ``cvta``. The flat memory (one uint8 array, viewed as 8/16/32/64-bit
words) holds every state space of a launch: the global arena (``gbuf_*``: one row per allocation),
then the constant bank, the parameter buffer, one CTA's shared memory and one CTA's local frames
(``rgn``: offset and size of each region, :mod:`simt_fast.emu.ctl`). :func:`resolve` maps an address
of a state space to its byte offset there, or reports out-of-bounds / misaligned.
"""

from __future__ import annotations

import numpy as np

from .._jit import hot_helper, jit
from .alu import M32, U0, U1, b32, f32, f64, mask, sx
from .codes import (
    ATOM_ADD, ATOM_AND, ATOM_CAS, ATOM_DEC, ATOM_EXCH, ATOM_INC, ATOM_MIN, ATOM_OR, ATOM_XOR, CVTA_TO_SPACE, K_ADDR,
    K_REG, KIND_F, KIND_S, NO_ACCESS, OP_LD, OP_ST, PARAM_TAG, REC_GENERIC, REC_PARAM, S_CONST, S_GENERIC, S_GLOBAL,
    S_LOCAL, S_PARAM, S_SHARED, WINDOW, WINDOW_SHIFT,
)
from .ctl import F_CONST_WRITE, F_MISALIGNED, F_NONE, F_OOB, RG_CONST, RG_CONST_N, RG_LOCAL, RG_LOCAL_N, RG_PARAM, \
    RG_PARAM_N, RG_SHARED, RG_SHARED_N, fault
from .operands import rdop

WIN_SHARED = np.uint64(WINDOW[S_SHARED])
WIN_LOCAL = np.uint64(WINDOW[S_LOCAL])
WIN_CONST = np.uint64(WINDOW[S_CONST])
WIN_PARAM = np.uint64(WINDOW[S_PARAM])
WIN_SHIFT = np.uint64(WINDOW_SHIFT)
OFFSET_MASK = np.uint64((1 << WINDOW_SHIFT) - 1)  # a generic address's offset in its window


@jit(inline="always")
def resolve(sp, addr, size, amap, t):
    """Byte offset into the flat memory of an access of ``size`` bytes at ``addr`` in space ``sp``.

    ``amap`` = (gbuf_lo, gbuf_hi, gbuf_off, rgn): the global allocations and the region table.
    Returns (offset, the generic form of the address); offset -1 = out of bounds, -2 = misaligned.
    """
    gbuf_lo, gbuf_hi, gbuf_off, rgn = amap
    if (addr & np.uint64(size - 1)) != U0:
        return np.int64(-2), addr
    if sp == S_GENERIC:
        w = addr >> WIN_SHIFT
        if w == U0:
            sp = S_GLOBAL
        elif w == U1:
            sp = S_SHARED
            addr = addr - WIN_SHARED
        elif w == np.uint64(2):
            sp = S_LOCAL
            addr = addr - WIN_LOCAL
        elif w == np.uint64(3):
            sp = S_CONST
            addr = addr - WIN_CONST
        elif w == np.uint64(4):
            sp = S_PARAM
            addr = addr - WIN_PARAM
        else:
            return np.int64(-1), addr
    if sp == S_GLOBAL:
        end = addr + np.uint64(size)
        for k in range(len(gbuf_lo)):
            if addr >= gbuf_lo[k] and end <= gbuf_hi[k] and end > addr:
                return gbuf_off[k] + np.int64(addr - gbuf_lo[k]), addr
        return np.int64(-1), addr
    if sp == S_SHARED:
        if addr + np.uint64(size) <= np.uint64(rgn[RG_SHARED_N]):
            return rgn[RG_SHARED] + np.int64(addr), addr + WIN_SHARED
        return np.int64(-1), addr + WIN_SHARED
    if sp == S_LOCAL:
        if addr + np.uint64(size) <= np.uint64(rgn[RG_LOCAL_N]):
            return rgn[RG_LOCAL] + t * rgn[RG_LOCAL_N] + np.int64(addr), addr + WIN_LOCAL
        return np.int64(-1), addr + WIN_LOCAL
    if sp == S_CONST:
        if addr + np.uint64(size) <= np.uint64(rgn[RG_CONST_N]):
            return rgn[RG_CONST] + np.int64(addr), addr + WIN_CONST
        return np.int64(-1), addr + WIN_CONST
    if addr + np.uint64(size) <= np.uint64(rgn[RG_PARAM_N]):
        return rgn[RG_PARAM] + np.int64(addr), addr + WIN_PARAM
    return np.int64(-1), addr + WIN_PARAM


@jit(inline="always")
def mload(mv, off, size):
    """The ``size``-byte word at byte ``off`` of the flat memory (``mv``: its 8/16/32/64-bit views)."""
    m8, m16, m32, m64 = mv
    if size == 4:
        return np.uint64(m32[off >> 2])
    if size == 8:
        return m64[off >> 3]
    if size == 1:
        return np.uint64(m8[off])
    return np.uint64(m16[off >> 1])


@jit(inline="always")
def mstore(mv, off, size, v):
    m8, m16, m32, m64 = mv
    if size == 4:
        m32[off >> 2] = np.uint32(v & M32)
    elif size == 8:
        m64[off >> 3] = v
    elif size == 1:
        m8[off] = np.uint8(v & np.uint64(0xFF))
    else:
        m16[off >> 1] = np.uint16(v & np.uint64(0xFFFF))


@jit
def atom_apply(sub, ty, old, b, c):
    """New memory value of an atomic read-modify-write (PTX atom semantics)."""
    size = ty & 0xF
    kind = ty >> 4
    m = mask(size)
    if sub == ATOM_EXCH:
        return b & m
    if sub == ATOM_CAS:
        return (c & m) if (old & m) == (b & m) else old
    if sub == ATOM_ADD:
        if kind == KIND_F:
            if size == 4:
                return b32(f32(old) + f32(b))
            return np.float64(f64(old) + f64(b)).view(np.uint64)
        return (old + b) & m
    if sub == ATOM_AND:
        return old & b & m
    if sub == ATOM_OR:
        return (old | b) & m
    if sub == ATOM_XOR:
        return (old ^ b) & m
    if sub == ATOM_INC:
        return U0 if (old & m) >= (b & m) else ((old + U1) & m)
    if sub == ATOM_DEC:
        return (b & m) if ((old & m) == U0 or (old & m) > (b & m)) else ((old - U1) & m)
    # min / max
    if kind == KIND_F:
        x = f32(old) if size == 4 else f64(old)
        y = f32(b) if size == 4 else f64(b)
        take_b = (y < x) if sub == ATOM_MIN else (y > x)
        if x != x:
            take_b = True
        return (b & m) if take_b else old
    if kind == KIND_S:
        x = sx(old, size)
        y = sx(b, size)
        take_b = (y < x) if sub == ATOM_MIN else (y > x)
    else:
        take_b = ((b & m) < (old & m)) if sub == ATOM_MIN else ((b & m) > (old & m))
    return (b & m) if take_b else old



@jit(inline="always")
def mem_entry(mode, rec):
    """The /mem value of an access whose generic address is ``rec`` (``mode``: its REC_* code)."""
    if mode == REC_GENERIC:
        return rec
    if mode == REC_PARAM:
        return (rec & OFFSET_MASK) | PARAM_TAG
    return rec & OFFSET_MASK


@jit(inline="always")
def log_mem(mlog, nmev, thread, value):
    """Append (thread, value) to the memory log ``mlog`` = (mev_t, mev_a); returns its new length."""
    mev_t, mev_a = mlog
    mev_t[nmev] = np.int32(thread)
    mev_a[nmev] = value
    return nmev + 1


@jit(inline="always")
def exec_ldst_fast(o, p, gn, lanes, regs, RS, ty, okind, oval, ooff, space, amask, mem_rec, mv, amap, ctl,
                   record_mem, tbase, mlog, nmev):
    """The commonest memory case, unswitched: an unguarded scalar ld/st through a register address.

    Returns (fault code or F_NONE, memory-log entries so far)."""
    sz = ty[p] & 0xF
    sp = space[p]
    mode = mem_rec[p]
    ab = np.int64(oval[p, 0])
    aoff = np.uint64(ooff[p, 0])
    am = amask[p]
    k1m = okind[p, 1]
    v1m = oval[p, 1]
    i1m = np.int64(v1m)
    sgn = (ty[p] >> 4) == KIND_S
    for k in range(gn):
        t = lanes[k]
        rb = t * RS
        addr = (regs[rb + ab] + aoff) & am
        off, rec = resolve(sp, addr, sz, amap, t)
        if off < 0 or (o == OP_ST and (rec >> WIN_SHIFT) == np.uint64(3)):
            code = (F_OOB if off == -1 else F_MISALIGNED) if off < 0 else F_CONST_WRITE
            return fault(ctl, code, t, p, np.int64(addr), sz), nmev
        if record_mem:
            nmev = log_mem(mlog, nmev, tbase + t, mem_entry(mode, rec))
        if o == OP_LD:
            v = mload(mv, off, sz)
            if sgn:
                v = np.uint64(sx(v, sz))
            if k1m == K_REG:
                regs[rb + i1m] = v
        else:
            mstore(mv, off, sz, regs[rb + i1m] if k1m == K_REG else v1m)
    return F_NONE, nmev


@hot_helper
def exec_mem(o, p, gn, lanes, act, regs, RS, sregs, NS, ty, sub, okind, oval, ooff, space, vec, amask, mem_rec,
             mv, amap, ctl, record_mem, tbase, mlog, nmev):
    """ld / st / atom / red for the group, element by element; one /mem entry per thread.

    Returns (fault code or F_NONE, memory-log entries so far)."""
    sz = ty[p] & 0xF
    sp = space[p]
    nv = vec[p]
    mode = mem_rec[p]
    for k in range(gn):
        t = lanes[k]
        if act[k] == 0:
            if record_mem:  # the guard is false: the thread makes no access
                nmev = log_mem(mlog, nmev, tbase + t, NO_ACCESS)
            continue
        rb = t * RS
        if okind[p, 0] == K_ADDR:
            base = (regs[rb + np.int64(oval[p, 0])] + np.uint64(ooff[p, 0])) & amask[p]
        else:
            base = oval[p, 0]
        for j in range(nv):
            addr = base + np.uint64(j * sz)
            off, rec = resolve(sp, addr, sz, amap, t)
            if off < 0:
                return fault(ctl, F_OOB if off == -1 else F_MISALIGNED, t, p, np.int64(addr), sz), nmev
            if record_mem and j == 0:  # a vector access is one entry: its first byte (mem_bytes says how many)
                nmev = log_mem(mlog, nmev, tbase + t, mem_entry(mode, rec))
            if o == OP_LD:
                v = mload(mv, off, sz)
                if (ty[p] >> 4) == KIND_S:
                    v = np.uint64(sx(v, sz))
                if okind[p, 1 + j] == K_REG:
                    regs[rb + np.int64(oval[p, 1 + j])] = v
            elif o == OP_ST:
                if (rec >> WIN_SHIFT) == np.uint64(3):
                    return fault(ctl, F_CONST_WRITE, t, p, np.int64(addr), sz), nmev
                v = rdop(okind, oval, p, 1 + j, regs, rb, sregs, t * NS)
                mstore(mv, off, sz, v)
            else:
                old = mload(mv, off, sz)
                bv = rdop(okind, oval, p, 2, regs, rb, sregs, t * NS)
                cv = rdop(okind, oval, p, 3, regs, rb, sregs, t * NS)
                mstore(mv, off, sz, atom_apply(sub[p], ty[p], old, bv, cv))
                if okind[p, 1] == K_REG:
                    if (ty[p] >> 4) == KIND_S:
                        old = np.uint64(sx(old, sz))
                    regs[rb + np.int64(oval[p, 1])] = old
    return F_NONE, nmev


@jit(inline="always")
def exec_memhint(gn, lanes, tbase, mlog, nmev):
    """prefetch: no architectural access; every thread of the group logs NO_ACCESS."""
    for k in range(gn):
        nmev = log_mem(mlog, nmev, tbase + lanes[k], NO_ACCESS)
    return nmev


@hot_helper
def exec_cvta(p, gn, lanes, act, regs, RS, sregs, NS, ty, sub, okind, oval, space):
    """cvta: add (to generic) or subtract (to a space) the state space's generic window."""
    win = U0
    s_ = space[p]
    if s_ == S_SHARED:
        win = WIN_SHARED
    elif s_ == S_LOCAL:
        win = WIN_LOCAL
    elif s_ == S_CONST:
        win = WIN_CONST
    elif s_ == S_PARAM:
        win = WIN_PARAM
    m = mask(ty[p] & 0xF)
    for k in range(gn):
        if act[k]:
            t = lanes[k]
            rb = t * RS
            a = rdop(okind, oval, p, 1, regs, rb, sregs, t * NS)
            r = (a - win) if sub[p] == CVTA_TO_SPACE else (a + win)
            regs[rb + np.int64(oval[p, 0])] = r & m
