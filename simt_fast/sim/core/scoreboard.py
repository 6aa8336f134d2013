"""The core's register scoreboard (docs/core.md).

Per (warp, register): K slots of (ready cycle, thread mask). A pending write carries the writing
unit's mask, so splits of one warp with disjoint masks never block each other (the multi-path
paper's concern). Masks in a register's slots are kept disjoint.

Layout (for cache footprint: kernels have hundreds of virtual registers, and every issue writes
one): slot 0 lives in a compact 4-word entry ``sb[e:e+4]``, e = (w * n_regs + r) * 4, with the
latest ready cycle written to the overflow record and the union of its masks; slots 1..K-1 live
in the overflow record ``sbr[rb:rb + 2(K-1)]`` (K-1 ready cycles, then K-1 masks), which is read
only while it may hold a pending write of one of the reading unit's threads (so the other splits'
writes, the multi-path case, cost no look at it). With at most one write in flight per register (the
common case) an issue touches half a cache line. Slot order and the rules are the plain K-slot
array's (`sim.reference.core.Scoreboard`): a write takes the first free slot (empty mask or
landed), else folds into the first slot with the latest ready cycle.
"""

from __future__ import annotations

from ..._jit import hot_helper

SB_T0 = 0  # slot 0: ready cycle
SB_M0 = 1  # slot 0: thread mask
SB_RMAX = 2  # latest ready cycle written to the overflow record (<= now: it holds nothing pending)
SB_RUNION = 3  # union of the overflow slots' masks (a superset): a unit outside it skips the record


@hot_helper
def sb_write(sb, sbr, k1, e, rb, mask, ready, now):
    """Record a pending write of ``mask``'s threads, ready at ``ready`` (entry ``e``, record ``rb``;
    ``k1`` = K - 1 overflow slots)."""
    rec_live = sb[e + SB_RMAX] > now
    sb[e + SB_M0] &= ~mask  # this write supersedes older ones for these threads
    if rec_live:
        for j in range(k1):
            sbr[rb + k1 + j] &= ~mask
        sb[e + SB_RUNION] &= ~mask
    if sb[e + SB_M0] == 0 or sb[e + SB_T0] <= now:
        sb[e + SB_T0] = ready
        sb[e + SB_M0] = mask
        return
    if k1 > 0 and not rec_live:
        # every overflow slot has landed: the write takes slot 1; the others are cleared
        sbr[rb] = ready
        sbr[rb + k1] = mask
        for j in range(1, k1):
            sbr[rb + j] = 0
            sbr[rb + k1 + j] = 0
        sb[e + SB_RMAX] = ready
        sb[e + SB_RUNION] = mask
        return
    free = -1
    latest = -1  # -1: slot 0
    latest_t = sb[e + SB_T0]
    for j in range(k1):
        if free < 0 and (sbr[rb + k1 + j] == 0 or sbr[rb + j] <= now):
            free = j
        if sbr[rb + j] > latest_t:
            latest_t = sbr[rb + j]
            latest = j
    if free >= 0:
        sbr[rb + free] = ready
        sbr[rb + k1 + free] = mask
        sb[e + SB_RUNION] |= mask
        if ready > sb[e + SB_RMAX]:
            sb[e + SB_RMAX] = ready
    elif latest < 0:
        # every slot holds another pending write: fold into the latest one (conservative: these
        # threads may wait a little longer, never less). Impossible when K >= warp_size (mimd).
        sb[e + SB_M0] |= mask
        if ready > sb[e + SB_T0]:
            sb[e + SB_T0] = ready
    else:
        sbr[rb + k1 + latest] |= mask
        sb[e + SB_RUNION] |= mask
        if ready > sbr[rb + latest]:
            sbr[rb + latest] = ready
            if ready > sb[e + SB_RMAX]:
                sb[e + SB_RMAX] = ready


@hot_helper
def sb_write_lane(sb, sbr, W, e, rb, lane, ready, now):
    """mimd's scoreboard write: every unit is one thread and K = warp_size slots never fold, so the
    K-slot rules reduce to "a thread's latest write is its only pending one" — one ready cycle per
    lane in the record (whose stale contents are cleared when it next gets a pending write)."""
    if sb[e + SB_RMAX] <= now:
        for j in range(W):
            sbr[rb + j] = 0
    if ready > sb[e + SB_RMAX]:
        sb[e + SB_RMAX] = ready
    sbr[rb + lane] = ready


