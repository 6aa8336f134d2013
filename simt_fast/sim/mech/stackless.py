"""`stackless`: stackless SIMT with compiler-placed ``syncwarp`` reconvergence (Lee et al. 2013, §5.2).

Every thread has its own PC; there is no divergence stack and no hardware PC comparison. A warp's
threads at one PC that moved together form an issue unit (a split-table row); on a divergent branch
the first target group keeps the row and every other group gets a new row, and rows never merge by
themselves -- diverged threads run independently, like MIMD threads sharing the warp's issue slot (one
unit issues per warp per cycle). Reconvergence happens only at ``syncwarp`` points, which the compiler
puts at the entry of every *convergent block that has a divergent predecessor* (Lee et al. 2013, §5.2;
``syncwarp_blocks = "auto"``, from the convergence analysis) or, as a comparison point, at the
immediate post-dominator of every branch (``"ipdom"``); where they are is `simt_fast.sim.syncwarp`.

A ``syncwarp`` is a barrier for the warp's live threads: a unit entering a syncwarp block waits
(row state ``SYNC_WAIT``); when no unit of the warp can issue any more (every live thread waits at a
syncwarp or at ``bar.sync``), the units waiting at the syncwarp block of highest priority (reverse
post-order) merge into one unit and go on. With a correct convergence analysis every live thread is
then waiting at that one block -- a full reconvergence; if threads wait at different syncwarp blocks
(possible with the ``"ipdom"`` placement or an unsound flag), releasing the highest-priority group is
what keeps the warp from deadlocking, and the others stay diverged.
"""

from __future__ import annotations

from ._tables import S_BLK, S_MASK, S_OFF, S_STATE, S_T, W_STN, helper, st_remove

SYNC_WAIT = 2  # row state: waiting at a syncwarp (0 ready, 1 at a CTA barrier: the core's states)


@helper
def arrive(st, winfo, w, first, syncwarp):
    """Rows ``first..`` of warp ``w`` just entered a new block: those at a syncwarp block start waiting."""
    for i in range(first, winfo[w, W_STN]):
        if st[w, i, S_STATE] == 0 and st[w, i, S_OFF] == 0 and syncwarp[st[w, i, S_BLK]]:
            st[w, i, S_STATE] = SYNC_WAIT


@helper
def arrive_row(st, winfo, w, i, syncwarp):
    """Row ``i`` moved into a new block (the row the core reuses for the first target group)."""
    if 0 <= i < winfo[w, W_STN] and st[w, i, S_STATE] == 0 and st[w, i, S_OFF] == 0 and syncwarp[st[w, i, S_BLK]]:
        st[w, i, S_STATE] = SYNC_WAIT


@helper
def release(st, winfo, w, prio):
    """If no unit of warp ``w`` can issue, merge the units waiting at the highest-priority syncwarp
    block into one ready unit (the oldest row keeps it). Returns 1 if a syncwarp released, else 0."""
    n = winfo[w, W_STN]
    best = -1
    for i in range(n):
        s = st[w, i, S_STATE]
        if s == 0:
            return 0  # some thread can still make progress: keep waiting
        if s == SYNC_WAIT and (best < 0 or prio[st[w, i, S_BLK]] < prio[st[w, best, S_BLK]]):
            best = i
    if best < 0:
        return 0
    blk = st[w, best, S_BLK]
    first = -1
    i = 0
    while i < winfo[w, W_STN]:
        if st[w, i, S_STATE] == SYNC_WAIT and st[w, i, S_BLK] == blk:
            if first < 0:
                first = i
                st[w, i, S_STATE] = 0
                i += 1
            else:
                st[w, first, S_MASK] |= st[w, i, S_MASK]
                if st[w, i, S_T] > st[w, first, S_T]:
                    st[w, first, S_T] = st[w, i, S_T]
                st_remove(st, winfo, w, i)
        else:
            i += 1
    return 1
