"""The emulator's hot loop (numba): run CTAs of a decoded kernel, recording block paths.

One call of :func:`run` executes CTAs ``ctl[CTA] .. ctl[CTA_END]-1`` one after another. Inside a
CTA, warps of 32 consecutive threads (thread linear id order) run one at a time; a warp executes
in lock step the threads at its *smallest* PC ("min-PC first"): those threads are the group that
executes one instruction together, which is what makes ``vote``/``shfl``/``activemask`` see the
threads that arrive together (docs/emu.md). A group runs until its block ends (a branch, exit or
barrier, or the next instruction starts another block), then the warp picks its min PC again.
A warp runs until all its threads have exited or wait at a barrier; when every warp is blocked,
the barrier releases (or, if some threads exited without reaching it, the launch faults).

The function is *resumable*: all state lives in the arrays passed in, so when an output buffer
(the block-event log ``ev_*`` or the memory-address log ``mev_*``) is full it returns
``ST_EV_FULL``/``ST_MEV_FULL`` before starting the next group, the caller grows the buffer and
calls again, and execution continues exactly where it stopped.

Events are ``(thread index within the batch, block id)`` pairs in execution order; each thread's
events, in order, are its block path (entry first, virtual exit last).
"""

from __future__ import annotations

import numpy as np

from .._jit import jit
from . import decode as D
from .alu import ALL, CANON_NAN32, M32, U0, U1, alu, b32, f32, f64, float_cmp, int_cmp, mask, sx
from .fp import R_RN, fma64, round_f32, two_sum

# ---- control block layout (ctl, int64) --------------------------------------------------------
CTA, CTA_END, BATCH_CTA0, PHASE, NEV, NMEV, INSTS, MAX_INSTS = 0, 1, 2, 3, 4, 5, 6, 7
F_CODE, F_THREAD, F_PC, F_ADDR, F_AUX, F_CTA = 8, 9, 10, 11, 12, 13
EV_SOFT = 14  # flush after the CTA that takes either log past this many entries
CTL_SIZE = 16

# ---- statuses and faults ----------------------------------------------------------------------
ST_DONE, ST_EV_FULL, ST_MEV_FULL, ST_FAULT, ST_FLUSH = 0, 1, 2, 3, 4
F_OOB, F_MISALIGNED, F_BARRIER, F_LIMIT, F_TRAP, F_WARPSYNC, F_BRX, F_CONST_WRITE = 1, 2, 3, 4, 5, 6, 7, 8

# ---- region table (rgn, int64) ----------------------------------------------------------------
RG_CONST, RG_CONST_N, RG_PARAM, RG_PARAM_N, RG_SHARED, RG_SHARED_N, RG_LOCAL, RG_LOCAL_N = range(8)

RUN, WAIT, DONE = 0, 1, 2

OP_MOV, OP_PACK, OP_UNPACK = D.OP_MOV, D.OP_PACK, D.OP_UNPACK
OP_LD, OP_ST, OP_ATOM, OP_CVTA = D.OP_LD, D.OP_ST, D.OP_ATOM, D.OP_CVTA
OP_BRA, OP_BRX, OP_EXIT, OP_BAR, OP_TRAP, OP_NOP = D.OP_BRA, D.OP_BRX, D.OP_EXIT, D.OP_BAR, D.OP_TRAP, D.OP_NOP
OP_SHFL, OP_VOTE, OP_ACTIVEMASK, OP_SETP = D.OP_SHFL, D.OP_VOTE, D.OP_ACTIVEMASK, D.OP_SETP
K_REG, K_IMM, K_SREG, K_ADDR = D.K_REG, D.K_IMM, D.K_SREG, D.K_ADDR
S_GENERIC, S_GLOBAL, S_SHARED, S_LOCAL, S_CONST, S_PARAM = D.S_GENERIC, D.S_GLOBAL, D.S_SHARED, D.S_LOCAL, D.S_CONST, D.S_PARAM
KIND_S, KIND_F = D.KIND_S, D.KIND_F
N_SREGS = D.N_SREGS
WIN_SHARED = np.uint64(D.WINDOW[D.S_SHARED])
WIN_LOCAL = np.uint64(D.WINDOW[D.S_LOCAL])
WIN_CONST = np.uint64(D.WINDOW[D.S_CONST])
WIN_PARAM = np.uint64(D.WINDOW[D.S_PARAM])
WIN_SHIFT = np.uint64(D.WINDOW_SHIFT)
ATOM_ADD, ATOM_MIN, ATOM_MAX, ATOM_EXCH, ATOM_CAS, ATOM_AND, ATOM_OR, ATOM_XOR, ATOM_INC, ATOM_DEC = range(10)


@jit(inline="always")
def rdop(okind, oval, i, j, regs, rb, sregs, sb):
    """Operand ``j`` of instruction ``i`` for the thread whose registers start at ``rb``."""
    k = okind[i, j]
    if k == K_REG:
        return regs[rb + np.int64(oval[i, j])]
    if k == K_IMM:
        return oval[i, j]
    if k == K_SREG:
        return sregs[sb + np.int64(oval[i, j])]
    return U0


FAST_MOV, FAST_ADD, FAST_SUB, FAST_MUL, FAST_AND, FAST_OR, FAST_XOR, FAST_SHL, FAST_SHR_U = D.FAST_CODES[:9]
FAST_SETP, FAST_MAD, FAST_SELP = D.FAST_SETP, D.FAST_MAD, D.FAST_SELP
FAST_FADD, FAST_FSUB, FAST_FMUL, FAST_FFMA, FAST_FSETP = D.FAST_FADD, D.FAST_FSUB, D.FAST_FMUL, D.FAST_FFMA, D.FAST_FSETP
FAST_MULWIDE_S, FAST_MULWIDE_U, FAST_SHR_S = D.FAST_MULWIDE_S, D.FAST_MULWIDE_U, D.FAST_SHR_S
FAST_CVT_SEXT, FAST_CVT_ZEXT = D.FAST_CVT_SEXT, D.FAST_CVT_ZEXT
FAST_DADD, FAST_DSUB, FAST_DMUL, FAST_DFMA = D.FAST_DADD, D.FAST_DSUB, D.FAST_DMUL, D.FAST_DFMA


@jit(inline="always")
def opval(k, v, i, regs, rb, sregs, sb):
    """A hoisted operand (kind k, value v, index i) for the thread at register base rb."""
    if k == K_REG:
        return regs[rb + i]
    if k == K_SREG:
        return sregs[sb + i]
    return v


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


@jit(inline="always")
def resolve(sp, addr, size, gbuf_lo, gbuf_hi, gbuf_off, rgn, t):
    """Byte offset into the flat memory of an access of ``size`` bytes at ``addr`` in space ``sp``.

    Returns (offset, recorded address); offset -1 = out of bounds, -2 = misaligned.
    """
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
def mload(m8, m16, m32, m64, off, size):
    if size == 4:
        return np.uint64(m32[off >> 2])
    if size == 8:
        return m64[off >> 3]
    if size == 1:
        return np.uint64(m8[off])
    return np.uint64(m16[off >> 1])


@jit(inline="always")
def mstore(m8, m16, m32, m64, off, size, v):
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


@jit
def init_sregs(sregs, T, cta, grid, block, dyn_smem, total_smem):
    """Per-thread special registers of CTA ``cta`` (decode.SREGS order)."""
    cx = cta % grid[0]
    cy = (cta // grid[0]) % grid[1]
    cz = cta // (grid[0] * grid[1])
    nw = (T + 31) // 32
    for t in range(T):
        b = t * N_SREGS
        lane = t % 32
        sregs[b + 0] = np.uint64(t % block[0])
        sregs[b + 1] = np.uint64((t // block[0]) % block[1])
        sregs[b + 2] = np.uint64(t // (block[0] * block[1]))
        sregs[b + 3] = np.uint64(block[0])
        sregs[b + 4] = np.uint64(block[1])
        sregs[b + 5] = np.uint64(block[2])
        sregs[b + 6] = np.uint64(cx)
        sregs[b + 7] = np.uint64(cy)
        sregs[b + 8] = np.uint64(cz)
        sregs[b + 9] = np.uint64(grid[0])
        sregs[b + 10] = np.uint64(grid[1])
        sregs[b + 11] = np.uint64(grid[2])
        sregs[b + 12] = np.uint64(lane)
        sregs[b + 13] = np.uint64(t // 32)
        sregs[b + 14] = np.uint64(nw)
        bit = U1 << np.uint64(lane)
        sregs[b + 15] = bit
        sregs[b + 16] = (bit | (bit - U1)) & M32
        sregs[b + 17] = bit - U1
        sregs[b + 18] = (~(bit - U1)) & M32
        sregs[b + 19] = (~(bit | (bit - U1))) & M32
        sregs[b + 20] = U0  # %smid: one SM
        sregs[b + 21] = U1
        sregs[b + 22] = U0
        sregs[b + 23] = U0  # %clock / %clock64: deterministic 0 (no timing in the functional model)
        sregs[b + 24] = U0
        sregs[b + 25] = np.uint64(dyn_smem)
        sregs[b + 26] = np.uint64(total_smem)


@jit
def run(op, fast, ty, ty2, md, sub, okind, oval, ooff, space, vec, gpred, gneg, target, jt_ptr, jt_idx,
        is_leader, block_of, blk_mem, n_regs, grid, block, dyn_smem,
        mem, gbuf_lo, gbuf_hi, gbuf_off, rgn,
        regs, sregs, pc, st, lanes, act, vals, barv,
        ctl, ev_t, ev_b, record_mem, mev_t, mev_a):
    m8 = mem
    m16 = mem.view(np.uint16)
    m32 = mem.view(np.uint32)
    m64 = mem.view(np.uint64)
    n = len(op)
    T = block[0] * block[1] * block[2]
    NW = (T + 31) // 32
    RS = n_regs + 1
    NS = N_SREGS
    exit_b = block_of[n]
    nev = ctl[NEV]
    nmev = ctl[NMEV]
    insts = ctl[INSTS]
    max_insts = ctl[MAX_INSTS]
    ev_cap = len(ev_t)
    mev_cap = len(mev_t)
    while ctl[CTA] < ctl[CTA_END]:
        cta = ctl[CTA]
        tbase = (cta - ctl[BATCH_CTA0]) * T
        if ctl[PHASE] == 0:
            if nev + T > ev_cap:
                ctl[NEV] = nev
                ctl[NMEV] = nmev
                ctl[INSTS] = insts
                return ST_EV_FULL
            # registers, shared and local memory start zeroed in every CTA (deterministic runs)
            regs[:] = 0
            mem[rgn[RG_SHARED]: rgn[RG_SHARED] + rgn[RG_SHARED_N]] = 0
            mem[rgn[RG_LOCAL]: rgn[RG_LOCAL] + T * rgn[RG_LOCAL_N]] = 0
            init_sregs(sregs, T, cta, grid, block, dyn_smem, rgn[RG_SHARED_N])
            if nev + 2 * T > ev_cap:
                ctl[NEV] = nev
                ctl[NMEV] = nmev
                ctl[INSTS] = insts
                return ST_EV_FULL
            for t in range(T):
                pc[t] = 0
                st[t] = RUN
                ev_t[nev] = np.int32(tbase + t)
                ev_b[nev] = 0  # every path starts at the entry block
                nev += 1
                if n == 0:  # an empty body: entry -> virtual exit
                    st[t] = DONE
                    ev_t[nev] = np.int32(tbase + t)
                    ev_b[nev] = block_of[0]
                    nev += 1
            ctl[PHASE] = 1
        while True:
            for w in range(NW):
                t0 = w * 32
                t1 = min(T, t0 + 32)
                while True:
                    # the group: running threads of warp w at its smallest PC
                    pcm = n + 1
                    gn = 0
                    for t in range(t0, t1):
                        if st[t] == RUN:
                            pt = pc[t]
                            if pt < pcm:
                                pcm = pt
                                gn = 0
                            if pt == pcm:
                                lanes[gn] = t
                                gn += 1
                    if pcm > n:
                        break
                    if nev + gn > ev_cap or (record_mem and nmev + gn * blk_mem[block_of[pcm]] > mev_cap):
                        ctl[NEV] = nev
                        ctl[NMEV] = nmev
                        ctl[INSTS] = insts
                        return ST_EV_FULL if nev + gn > ev_cap else ST_MEV_FULL
                    p = pcm
                    act_all = False
                    while True:
                        o = op[p]
                        insts += gn
                        if insts > max_insts:
                            ctl[F_CODE] = F_LIMIT
                            ctl[F_THREAD] = lanes[0]
                            ctl[F_PC] = p
                            ctl[F_CTA] = cta
                            ctl[NEV] = nev
                            ctl[INSTS] = insts
                            return ST_FAULT
                        gp = gpred[p]
                        if gp < 0:
                            if not act_all:
                                for k in range(gn):
                                    act[k] = 1
                                act_all = True
                        else:
                            act_all = False
                            for k in range(gn):
                                pv = (regs[lanes[k] * RS + gp] & U1) != U0
                                act[k] = 1 if pv != (gneg[p] != 0) else 0
                        if o == OP_BRA or o == OP_BRX or o == OP_EXIT:
                            for k in range(gn):
                                t = lanes[k]
                                npc = p + 1
                                if act[k]:
                                    if o == OP_BRA:
                                        npc = target[p]
                                    elif o == OP_EXIT:
                                        npc = n
                                    else:
                                        idx = rdop(okind, oval, p, 1, regs, t * RS, sregs, t * NS) & M32
                                        cnt = jt_ptr[p + 1] - jt_ptr[p]
                                        if idx >= np.uint64(cnt):
                                            ctl[F_CODE] = F_BRX
                                            ctl[F_THREAD] = t
                                            ctl[F_PC] = p
                                            ctl[F_ADDR] = np.int64(idx)
                                            ctl[F_AUX] = cnt
                                            ctl[F_CTA] = cta
                                            ctl[NEV] = nev
                                            ctl[INSTS] = insts
                                            return ST_FAULT
                                        npc = jt_idx[jt_ptr[p] + np.int64(idx)]
                                pc[t] = npc
                                if npc >= n:
                                    st[t] = DONE
                                ev_t[nev] = np.int32(tbase + t)
                                ev_b[nev] = block_of[npc]
                                nev += 1
                            break
                        if o == OP_BAR:
                            # bar.sync ends its block: threads wait at the start of the next block
                            for k in range(gn):
                                t = lanes[k]
                                pc[t] = p + 1
                                if act[k]:
                                    st[t] = WAIT
                                    if sub[p] != 0:  # bar.red: remember this thread's predicate
                                        barv[t] = np.uint8(rdop(okind, oval, p, 2, regs, t * RS, sregs, t * NS) & U1)
                                if p + 1 >= n:
                                    st[t] = DONE
                                ev_t[nev] = np.int32(tbase + t)
                                ev_b[nev] = block_of[p + 1]
                                nev += 1
                            break
                        if (o == OP_LD or o == OP_ST) and act_all and vec[p] == 1 and okind[p, 0] == K_ADDR \
                                and not record_mem and okind[p, 1] != K_SREG:
                            # the commonest memory case, unswitched: unguarded scalar ld/st through a register
                            sz = ty[p] & 0xF
                            sp = space[p]
                            ab = np.int64(oval[p, 0])
                            aoff = np.uint64(ooff[p, 0])
                            k1m = okind[p, 1]
                            v1m = oval[p, 1]
                            i1m = np.int64(v1m)
                            sgn = (ty[p] >> 4) == KIND_S
                            for k in range(gn):
                                t = lanes[k]
                                rb = t * RS
                                addr = regs[rb + ab] + aoff
                                off, rec = resolve(sp, addr, sz, gbuf_lo, gbuf_hi, gbuf_off, rgn, t)
                                if off < 0 or (o == OP_ST and (rec >> WIN_SHIFT) == np.uint64(3)):
                                    ctl[F_CODE] = (F_OOB if off == -1 else F_MISALIGNED) if off < 0 else F_CONST_WRITE
                                    ctl[F_THREAD] = t
                                    ctl[F_PC] = p
                                    ctl[F_ADDR] = np.int64(addr)
                                    ctl[F_AUX] = sz
                                    ctl[F_CTA] = cta
                                    ctl[NEV] = nev
                                    ctl[INSTS] = insts
                                    return ST_FAULT
                                if o == OP_LD:
                                    v = mload(m8, m16, m32, m64, off, sz)
                                    if sgn:
                                        v = np.uint64(sx(v, sz))
                                    if k1m == K_REG:
                                        regs[rb + i1m] = v
                                else:
                                    mstore(m8, m16, m32, m64, off, sz, regs[rb + i1m] if k1m == K_REG else v1m)
                        elif o == OP_LD or o == OP_ST or o == OP_ATOM:
                            sz = ty[p] & 0xF
                            sp = space[p]
                            nv = vec[p]
                            for k in range(gn):
                                if act[k] == 0:
                                    continue
                                t = lanes[k]
                                rb = t * RS
                                if okind[p, 0] == K_ADDR:
                                    base = regs[rb + np.int64(oval[p, 0])] + np.uint64(ooff[p, 0])
                                else:
                                    base = oval[p, 0]
                                for j in range(nv):
                                    addr = base + np.uint64(j * sz)
                                    off, rec = resolve(sp, addr, sz, gbuf_lo, gbuf_hi, gbuf_off, rgn, t)
                                    if off < 0:
                                        ctl[F_CODE] = F_OOB if off == -1 else F_MISALIGNED
                                        ctl[F_THREAD] = t
                                        ctl[F_PC] = p
                                        ctl[F_ADDR] = np.int64(addr)
                                        ctl[F_AUX] = sz
                                        ctl[F_CTA] = cta
                                        ctl[NEV] = nev
                                        ctl[INSTS] = insts
                                        return ST_FAULT
                                    if record_mem and (rec >> WIN_SHIFT) <= U1:
                                        mev_t[nmev] = np.int32(tbase + t)
                                        mev_a[nmev] = rec
                                        nmev += 1
                                    if o == OP_LD:
                                        v = mload(m8, m16, m32, m64, off, sz)
                                        if (ty[p] >> 4) == KIND_S:
                                            v = np.uint64(sx(v, sz))
                                        if okind[p, 1 + j] == K_REG:
                                            regs[rb + np.int64(oval[p, 1 + j])] = v
                                    elif o == OP_ST:
                                        if (rec >> WIN_SHIFT) == np.uint64(3):
                                            ctl[F_CODE] = F_CONST_WRITE
                                            ctl[F_THREAD] = t
                                            ctl[F_PC] = p
                                            ctl[F_ADDR] = np.int64(addr)
                                            ctl[F_CTA] = cta
                                            ctl[NEV] = nev
                                            ctl[INSTS] = insts
                                            return ST_FAULT
                                        v = rdop(okind, oval, p, 1 + j, regs, rb, sregs, t * NS)
                                        mstore(m8, m16, m32, m64, off, sz, v)
                                    else:
                                        old = mload(m8, m16, m32, m64, off, sz)
                                        bv = rdop(okind, oval, p, 2, regs, rb, sregs, t * NS)
                                        cv = rdop(okind, oval, p, 3, regs, rb, sregs, t * NS)
                                        mstore(m8, m16, m32, m64, off, sz, atom_apply(sub[p], ty[p], old, bv, cv))
                                        if okind[p, 1] == K_REG:
                                            if (ty[p] >> 4) == KIND_S:
                                                old = np.uint64(sx(old, sz))
                                            regs[rb + np.int64(oval[p, 1])] = old
                        elif o == OP_SHFL or o == OP_VOTE or o == OP_ACTIVEMASK:
                            # warp-level: the group is the set of threads executing together
                            gmask = U0
                            for k in range(gn):
                                if act[k]:
                                    gmask = gmask | (U1 << np.uint64(lanes[k] % 32))
                            if o == OP_ACTIVEMASK:
                                for k in range(gn):
                                    if act[k]:
                                        regs[lanes[k] * RS + np.int64(oval[p, 0])] = gmask
                            else:
                                mslot = 5 if o == OP_SHFL else 2
                                for k in range(gn):
                                    if act[k] == 0:
                                        continue
                                    t = lanes[k]
                                    mm = rdop(okind, oval, p, mslot, regs, t * RS, sregs, t * NS) & M32
                                    lane = t % 32
                                    if (mm >> np.uint64(lane)) & U1 == U0:
                                        ctl[F_CODE] = F_WARPSYNC
                                        ctl[F_THREAD] = t
                                        ctl[F_PC] = p
                                        ctl[F_ADDR] = np.int64(mm)
                                        ctl[F_AUX] = -1
                                        ctl[F_CTA] = cta
                                        ctl[NEV] = nev
                                        ctl[INSTS] = insts
                                        return ST_FAULT
                                    # every live thread named in membermask must execute this with us
                                    for l2 in range(32):
                                        t2 = t0 + l2
                                        if t2 < t1 and (mm >> np.uint64(l2)) & U1 and (gmask >> np.uint64(l2)) & U1 == U0 and st[t2] != DONE:
                                            ctl[F_CODE] = F_WARPSYNC
                                            ctl[F_THREAD] = t
                                            ctl[F_PC] = p
                                            ctl[F_ADDR] = np.int64(mm)
                                            ctl[F_AUX] = t2
                                            ctl[F_CTA] = cta
                                            ctl[NEV] = nev
                                            ctl[INSTS] = insts
                                            return ST_FAULT
                                if o == OP_VOTE:
                                    ballot = U0
                                    for k in range(gn):
                                        if act[k]:
                                            t = lanes[k]
                                            if rdop(okind, oval, p, 1, regs, t * RS, sregs, t * NS) & U1:
                                                ballot = ballot | (U1 << np.uint64(t % 32))
                                    mode = sub[p]
                                    for k in range(gn):
                                        if act[k] == 0:
                                            continue
                                        t = lanes[k]
                                        mm = rdop(okind, oval, p, 2, regs, t * RS, sregs, t * NS) & M32 & gmask
                                        bm = ballot & mm
                                        if mode == 3:
                                            r = bm
                                        elif mode == 0:
                                            r = U1 if bm == mm else U0
                                        elif mode == 1:
                                            r = U1 if bm != U0 else U0
                                        else:
                                            r = U1 if (bm == U0 or bm == mm) else U0
                                        if okind[p, 0] == K_REG:
                                            regs[t * RS + np.int64(oval[p, 0])] = r
                                else:
                                    # shfl.sync: read every source value before any lane writes
                                    for l2 in range(32):
                                        t2 = t0 + l2
                                        if t2 < t1:
                                            vals[l2] = rdop(okind, oval, p, 2, regs, t2 * RS, sregs, t2 * NS) & M32
                                    mode = sub[p]
                                    for k in range(gn):
                                        if act[k] == 0:
                                            continue
                                        t = lanes[k]
                                        rb = t * RS
                                        lane = np.int64(t % 32)
                                        bval = np.int64(rdop(okind, oval, p, 3, regs, rb, sregs, t * NS) & np.uint64(0x1F))
                                        cfull = rdop(okind, oval, p, 4, regs, rb, sregs, t * NS)
                                        cval = np.int64(cfull & np.uint64(0x1F))
                                        segmask = np.int64((cfull >> np.uint64(8)) & np.uint64(0x1F))
                                        max_lane = (lane & segmask) | (cval & ~segmask)
                                        min_lane = lane & segmask
                                        if mode == 0:
                                            j = lane - bval
                                            ok = j >= max_lane
                                        elif mode == 1:
                                            j = lane + bval
                                            ok = j <= max_lane
                                        elif mode == 2:
                                            j = lane ^ bval
                                            ok = j <= max_lane
                                        else:
                                            j = min_lane | (bval & ~segmask)
                                            ok = j <= max_lane
                                        if not ok or t0 + j >= t1:
                                            j = lane
                                        if okind[p, 0] == K_REG:
                                            regs[rb + np.int64(oval[p, 0])] = vals[j]
                                        if okind[p, 1] == K_REG:
                                            regs[rb + np.int64(oval[p, 1])] = U1 if ok else U0
                        elif o == OP_TRAP:
                            for k in range(gn):
                                if act[k]:
                                    ctl[F_CODE] = F_TRAP
                                    ctl[F_THREAD] = lanes[k]
                                    ctl[F_PC] = p
                                    ctl[F_CTA] = cta
                                    ctl[NEV] = nev
                                    ctl[INSTS] = insts
                                    return ST_FAULT
                        elif o == OP_CVTA:
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
                                    r = (a - win) if sub[p] == 1 else (a + win)
                                    regs[rb + np.int64(oval[p, 0])] = r & m
                        elif o == OP_PACK:
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
                        elif o != OP_NOP:
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
                                        if o_md & D.M_CC:
                                            regs[rb + cc_idx] = aux
                        p += 1
                        if is_leader[p]:
                            for k in range(gn):
                                t = lanes[k]
                                pc[t] = p
                                if p >= n:
                                    st[t] = DONE
                                ev_t[nev] = np.int32(tbase + t)
                                ev_b[nev] = block_of[p]
                                nev += 1
                            break
            # every warp is blocked: release the barrier, or finish the CTA
            nwait = 0
            ndone = 0
            tw = -1
            td = -1
            for t in range(T):
                if st[t] == WAIT:
                    nwait += 1
                    tw = t
                elif st[t] == DONE:
                    ndone += 1
                    td = t
            if nwait == 0:
                break
            if ndone > 0:
                ctl[F_CODE] = F_BARRIER
                ctl[F_THREAD] = tw
                ctl[F_PC] = pc[tw] - 1
                ctl[F_AUX] = td
                ctl[F_ADDR] = ndone
                ctl[F_CTA] = cta
                ctl[NEV] = nev
                ctl[INSTS] = insts
                return ST_FAULT
            # bar.red: every waiting thread gets the reduction over the CTA's predicates
            pop = 0
            for t in range(T):
                if st[t] == WAIT and sub[pc[t] - 1] != 0:
                    pop += np.int64(barv[t])
            for t in range(T):
                st[t] = RUN
                pb = pc[t] - 1
                kind = sub[pb]
                if kind != 0 and okind[pb, 0] == K_REG:
                    if kind == 1:
                        r = np.uint64(pop)
                    elif kind == 2:
                        r = U1 if pop == nwait else U0
                    else:
                        r = U1 if pop > 0 else U0
                    regs[t * RS + np.int64(oval[pb, 0])] = r
        ctl[CTA] = cta + 1
        ctl[PHASE] = 0
        if (nev >= ctl[EV_SOFT] or nmev >= ctl[EV_SOFT]) and cta + 1 < ctl[CTA_END]:
            # the logs of this batch are big (long paths): let the caller flush finished CTAs first
            ctl[NEV] = nev
            ctl[NMEV] = nmev
            ctl[INSTS] = insts
            return ST_FLUSH
    ctl[NEV] = nev
    ctl[NMEV] = nmev
    ctl[INSTS] = insts
    return ST_DONE


@jit
def events_to_csr(ev_t, ev_b, nev, n_threads, path):
    """Stable counting sort of (thread, value) events into CSR: fills ``path``, returns the offsets.

    Used for both block paths (values are block ids) and memory addresses (values are addresses)."""
    ptr = np.zeros(n_threads + 1, np.int64)
    for k in range(nev):
        ptr[ev_t[k] + 1] += 1
    for t in range(n_threads):
        ptr[t + 1] += ptr[t]
    fill = ptr[:-1].copy()
    for k in range(nev):
        t = ev_t[k]
        path[fill[t]] = ev_b[k]
        fill[t] += 1
    return ptr
