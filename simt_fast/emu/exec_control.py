"""The control-flow family of the interpreter (numba, inlined into :func:`simt_fast.emu.machine.run`).

Branches, exits and barriers end a group's block: each thread of the group moves to its next PC
and logs the block it enters (``ev_t``/``ev_b``: thread index in the batch, block id), which is how
block paths are recorded. :func:`release_barrier` runs when every warp of a CTA is blocked.
"""

from __future__ import annotations

import numpy as np

from .._jit import hot_helper, jit
from .alu import M32, U0, U1
from .codes import BAR_RED_AND, BAR_RED_POPC, K_REG, OP_BRA, OP_EXIT
from .ctl import DONE, F_BARRIER, F_BRX, F_NONE, F_TRAP, RUN, WAIT, fault
from .operands import rdop


@hot_helper
def exec_branch(o, p, n, gn, lanes, act, regs, RS, sregs, NS, okind, oval, target, jt_ptr, jt_idx, block_of,
                pc, st, tbase, ev_t, ev_b, nev, ctl):
    """bra / brx.idx / exit for the group: returns (fault code or F_NONE, events logged so far)."""
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
                    return fault(ctl, F_BRX, t, p, np.int64(idx), cnt), nev
                npc = jt_idx[jt_ptr[p] + np.int64(idx)]
        pc[t] = npc
        if npc >= n:
            st[t] = DONE
        ev_t[nev] = np.int32(tbase + t)
        ev_b[nev] = block_of[npc]
        nev += 1
    return F_NONE, nev


@hot_helper
def exec_bar(p, n, gn, lanes, act, regs, RS, sregs, NS, okind, oval, sub, block_of, pc, st, barv,
             tbase, ev_t, ev_b, nev):
    """bar.sync / bar.red ends its block: guard-true threads wait at the start of the next block."""
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
    return nev


@jit(inline="always")
def exec_trap(p, gn, lanes, act, ctl):
    """trap faults on the first guard-true thread."""
    for k in range(gn):
        if act[k]:
            return fault(ctl, F_TRAP, lanes[k], p, 0, 0)
    return F_NONE


@hot_helper
def release_barrier(T, st, pc, sub, okind, oval, regs, RS, barv, ctl):
    """Every warp of the CTA is blocked: release the barrier.

    Returns (F_NONE or F_BARRIER, threads that were waiting; 0 = the CTA has finished)."""
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
        return F_NONE, 0
    if ndone > 0:  # some threads exited without reaching the barrier: it can never release
        return fault(ctl, F_BARRIER, tw, pc[tw] - 1, ndone, td), nwait
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
            if kind == BAR_RED_POPC:
                r = np.uint64(pop)
            elif kind == BAR_RED_AND:
                r = U1 if pop == nwait else U0
            else:
                r = U1 if pop > 0 else U0
            regs[t * RS + np.int64(oval[pb, 0])] = r
    return F_NONE, nwait
