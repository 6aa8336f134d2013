"""The warp-level family of the interpreter (numba, inlined into :func:`simt_fast.emu.machine.run`).

``shfl.sync``, ``vote.sync`` and ``activemask`` see the group: the threads of one warp executing the
instruction together (docs/emu.md, "Scheduling order"), of which the guard-true ones take part.
"""

from __future__ import annotations

import numpy as np

from .._jit import hot_helper
from .alu import M32, U0, U1
from .codes import K_REG, OP_ACTIVEMASK, OP_SHFL, OP_VOTE, SHFL_BFLY, SHFL_DOWN, SHFL_UP, VOTE_ALL, VOTE_ANY, VOTE_BALLOT
from .ctl import DONE, F_NONE, F_WARPSYNC, fault
from .operands import rdop


@hot_helper
def exec_warp(o, p, gn, lanes, act, t0, t1, regs, RS, sregs, NS, okind, oval, sub, st, vals, ctl):
    """Run warp-level instruction ``p`` for the group; returns a fault code or F_NONE.

    ``t0``/``t1``: the warp's first thread and one past its last (a CTA's last warp may be short)."""
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
                return fault(ctl, F_WARPSYNC, t, p, np.int64(mm), -1)
            # every live thread named in membermask must execute this with us
            for l2 in range(32):
                t2 = t0 + l2
                if t2 < t1 and (mm >> np.uint64(l2)) & U1 and (gmask >> np.uint64(l2)) & U1 == U0 and st[t2] != DONE:
                    return fault(ctl, F_WARPSYNC, t, p, np.int64(mm), t2)
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
                if mode == VOTE_BALLOT:
                    r = bm
                elif mode == VOTE_ALL:
                    r = U1 if bm == mm else U0
                elif mode == VOTE_ANY:
                    r = U1 if bm != U0 else U0
                else:  # uni
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
                if mode == SHFL_UP:
                    j = lane - bval
                    ok = j >= max_lane
                elif mode == SHFL_DOWN:
                    j = lane + bval
                    ok = j <= max_lane
                elif mode == SHFL_BFLY:
                    j = lane ^ bval
                    ok = j <= max_lane
                else:  # idx
                    j = min_lane | (bval & ~segmask)
                    ok = j <= max_lane
                if not ok or t0 + j >= t1:
                    j = lane
                if okind[p, 0] == K_REG:
                    regs[rb + np.int64(oval[p, 0])] = vals[j]
                if okind[p, 1] == K_REG:
                    regs[rb + np.int64(oval[p, 1])] = U1 if ok else U0
    return F_NONE
