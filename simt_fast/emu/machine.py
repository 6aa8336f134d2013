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

This module is the driver: CTA set-up, group selection, guard predicates and the dispatch of each
instruction to its family (one module each, inlined into this loop at compile time, as MGPUSim
splits its emulator by instruction format): :mod:`~simt_fast.emu.exec_control` (branches, exits,
barriers), :mod:`~simt_fast.emu.exec_memory` (ld/st/atom/cvta), :mod:`~simt_fast.emu.exec_warp`
(shfl/vote/activemask), :mod:`~simt_fast.emu.exec_texture` (tex) and :mod:`~simt_fast.emu.exec_alu`
(everything register-to-register).
Every exit goes through :func:`simt_fast.emu.ctl.suspend`; a family that faults notes it with
:func:`simt_fast.emu.ctl.fault` and the driver stops the run in one place.
"""

from __future__ import annotations

import numpy as np

from .._jit import jit
from .alu import M32, U0, U1
from .codes import (
    K_ADDR, K_SREG, N_SREGS, OP_ACTIVEMASK, OP_ATOM, OP_BAR, OP_BRA, OP_BRX, OP_CVTA, OP_EXIT, OP_LD, OP_MEMHINT, OP_NOP,
    OP_SHFL, OP_ST, OP_TEX, OP_TRAP, OP_VOTE,
)
from .ctl import (
    BATCH_CTA0, CTA, CTA_END, DONE, EV_SOFT, F_CTA, F_LIMIT, F_NONE, INSTS, MAX_INSTS, NEV, NMEV, PHASE,
    RG_LOCAL, RG_LOCAL_N, RG_SHARED, RG_SHARED_N, RUN, ST_DONE, ST_EV_FULL, ST_FAULT, ST_FLUSH, ST_MEV_FULL, fault,
    suspend,
)
from .exec_alu import exec_alu
from .exec_control import exec_bar, exec_branch, exec_trap, release_barrier
from .exec_memory import exec_cvta, exec_ldst_fast, exec_mem, exec_memhint
from .exec_texture import exec_tex
from .exec_warp import exec_warp


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


# No reference counting in the interpreter (``_nrt=False``): it allocates nothing, and the families
# inlined into it receive a dozen arrays per instruction, whose atomic incref/decref pairs LLVM
# cannot prune across the families' loops (they cost up to 2.7x on one-thread CTAs).
@jit(_nrt=False)
def run(op, fast, ty, ty2, md, sub, okind, oval, ooff, space, vec, amask, mem_rec, gpred, gneg, target, jt_ptr,
        jt_idx, is_leader, block_of, blk_mem, n_regs, grid, block, dyn_smem,
        mem, gbuf_lo, gbuf_hi, gbuf_off, rgn, texd,
        regs, sregs, pc, st, lanes, act, vals, barv,
        ctl, ev_t, ev_b, record_mem, mev_t, mev_a):
    # argument groups of the families (a call of more than 30 arguments becomes f(*args) in CPython's
    # bytecode, which numba cannot inline)
    mv = (mem, mem.view(np.uint16), mem.view(np.uint32), mem.view(np.uint64))  # the flat memory's word views
    amap = (gbuf_lo, gbuf_hi, gbuf_off, rgn)  # where each state space lives in it
    mlog = (mev_t, mev_a)  # the memory-access log
    n = len(op)
    T = block[0] * block[1] * block[2]
    NW = (T + 31) // 32
    RS = n_regs + 1
    NS = N_SREGS
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
            if nev + 2 * T > ev_cap:
                return suspend(ctl, ST_EV_FULL, nev, nmev, insts)
            # registers, shared and local memory start zeroed in every CTA (deterministic runs)
            regs[:] = 0
            mem[rgn[RG_SHARED]: rgn[RG_SHARED] + rgn[RG_SHARED_N]] = 0
            mem[rgn[RG_LOCAL]: rgn[RG_LOCAL] + T * rgn[RG_LOCAL_N]] = 0
            init_sregs(sregs, T, cta, grid, block, dyn_smem, rgn[RG_SHARED_N])
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
                    if nev + gn > ev_cap:
                        return suspend(ctl, ST_EV_FULL, nev, nmev, insts)
                    if record_mem and nmev + gn * blk_mem[block_of[pcm]] > mev_cap:
                        return suspend(ctl, ST_MEV_FULL, nev, nmev, insts)
                    # the group runs to the end of its block
                    p = pcm
                    act_all = False
                    f = F_NONE
                    while True:
                        o = op[p]
                        insts += gn
                        if insts > max_insts:
                            f = fault(ctl, F_LIMIT, lanes[0], p, 0, 0)
                            break
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
                            f, nev = exec_branch(o, p, n, gn, lanes, act, regs, RS, sregs, NS, okind, oval, target,
                                                 jt_ptr, jt_idx, block_of, pc, st, tbase, ev_t, ev_b, nev, ctl)
                            break
                        if o == OP_BAR:
                            nev = exec_bar(p, n, gn, lanes, act, regs, RS, sregs, NS, okind, oval, sub, block_of,
                                           pc, st, barv, tbase, ev_t, ev_b, nev)
                            break
                        if (o == OP_LD or o == OP_ST) and act_all and vec[p] == 1 and okind[p, 0] == K_ADDR \
                                and okind[p, 1] != K_SREG:
                            f, nmev = exec_ldst_fast(o, p, gn, lanes, regs, RS, ty, okind, oval, ooff, space, amask, mem_rec,
                                                     mv, amap, ctl, record_mem, tbase, mlog, nmev)
                        elif o == OP_LD or o == OP_ST or o == OP_ATOM:
                            f, nmev = exec_mem(o, p, gn, lanes, act, regs, RS, sregs, NS, ty, sub, okind, oval, ooff,
                                               space, vec, amask, mem_rec, mv, amap, ctl, record_mem, tbase, mlog,
                                               nmev)
                        elif o == OP_TEX:
                            f, nmev = exec_tex(p, gn, lanes, act, regs, RS, sregs, NS, ty, ty2, sub, okind, oval, vec,
                                               texd, mv, amap, ctl, record_mem, tbase, mlog, nmev)
                        elif o == OP_MEMHINT:
                            if record_mem:
                                nmev = exec_memhint(gn, lanes, tbase, mlog, nmev)
                        elif o == OP_SHFL or o == OP_VOTE or o == OP_ACTIVEMASK:
                            f = exec_warp(o, p, gn, lanes, act, t0, t1, regs, RS, sregs, NS, okind, oval, sub, st,
                                          vals, ctl)
                        elif o == OP_TRAP:
                            f = exec_trap(p, gn, lanes, act, ctl)
                        elif o == OP_CVTA:
                            exec_cvta(p, gn, lanes, act, regs, RS, sregs, NS, ty, sub, okind, oval, space)
                        elif o != OP_NOP:
                            exec_alu(o, p, gn, lanes, act, act_all, regs, RS, sregs, NS, fast, ty, ty2, md, sub,
                                     okind, oval, vec, n_regs)
                        if f != F_NONE:
                            break
                        p += 1
                        if is_leader[p]:  # fell through into the next block
                            for k in range(gn):
                                t = lanes[k]
                                pc[t] = p
                                if p >= n:
                                    st[t] = DONE
                                ev_t[nev] = np.int32(tbase + t)
                                ev_b[nev] = block_of[p]
                                nev += 1
                            break
                    if f != F_NONE:
                        ctl[F_CTA] = cta
                        return suspend(ctl, ST_FAULT, nev, nmev, insts)
            # every warp is blocked: release the barrier, or finish the CTA
            f, nwait = release_barrier(T, st, pc, sub, okind, oval, regs, RS, barv, ctl)
            if f != F_NONE:
                ctl[F_CTA] = cta
                return suspend(ctl, ST_FAULT, nev, nmev, insts)
            if nwait == 0:
                break
        ctl[CTA] = cta + 1
        ctl[PHASE] = 0
        if (nev >= ctl[EV_SOFT] or nmev >= ctl[EV_SOFT]) and cta + 1 < ctl[CTA_END]:
            # the logs of this batch are big (long paths): let the caller flush finished CTAs first
            return suspend(ctl, ST_FLUSH, nev, nmev, insts)
    return suspend(ctl, ST_DONE, nev, nmev, insts)


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
