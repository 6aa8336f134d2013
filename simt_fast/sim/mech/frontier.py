"""`frontier`: earliest reconvergence by thread frontiers (Diamos et al., MICRO 2011; Wu et al. 2012,
Fig. 7(d)).

Each thread has its own PC; a warp issues the threads at its highest-priority PC, the priority
being the block's reverse post-order number (then the offset). Threads at the same PC form one
unit, so diverged paths merge wherever they meet, not only at the IPDOM. A unit stalled on its
operands stalls the warp; a unit waiting at a barrier leaves the frontier until the release.
"""

from ._tables import S_BLK, S_MASK, S_OFF, S_STATE, S_T, W_STN, st_remove, helper


@helper
def schedulable(st, rt, winfo, w, prio, out):
    """The one unit at the highest-priority PC (lowest RPO number, then lowest offset).

    Units waiting at a barrier are not part of the frontier: the warp goes on with the next PC
    (otherwise threads the barrier waits for, at lower-priority PCs, could never get there).
    """
    best = -1
    for i in range(winfo[w, W_STN]):
        if st[w, i, S_STATE] != 0:
            continue
        if best < 0 or prio[st[w, i, S_BLK]] < prio[st[w, best, S_BLK]] or (
                st[w, i, S_BLK] == st[w, best, S_BLK] and st[w, i, S_OFF] < st[w, best, S_OFF]):
            best = i
    if best < 0:
        return 0
    out[0] = best
    return 1


@helper
def merge_same_pc(st, winfo, w):
    """Threads at the same PC are one unit: merge newer units into the oldest one at that PC."""
    merged = 0
    i = 0
    while i < winfo[w, W_STN]:
        j = i + 1
        while j < winfo[w, W_STN]:
            if st[w, j, S_BLK] == st[w, i, S_BLK] and st[w, j, S_OFF] == st[w, i, S_OFF] \
                    and st[w, i, S_STATE] == 0 and st[w, j, S_STATE] == 0:
                st[w, i, S_MASK] |= st[w, j, S_MASK]
                st[w, i, S_T] = max(st[w, i, S_T], st[w, j, S_T])
                st_remove(st, winfo, w, j)
                merged += 1
            else:
                j += 1
        i += 1
    return merged
