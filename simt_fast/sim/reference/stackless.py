"""Reference `stackless` (Lee et al. 2013, §5.2): per-thread PCs, reconvergence only at syncwarp blocks.

Same rules as :mod:`simt_fast.sim.mech.stackless`, on the reference model's ``Unit`` objects: a unit
that enters a syncwarp block waits (``sync_wait``); when no unit of the warp can issue, the units
waiting at the highest-priority (reverse post-order) syncwarp block merge into the oldest of them.
"""

from __future__ import annotations


def is_waiting(u) -> bool:
    return bool(getattr(u, "sync_wait", False))


def schedulable(warp, prio) -> list:
    """Every unit that is not waiting at a syncwarp, oldest first (the core skips barrier waiters)."""
    return [i for i, u in enumerate(warp.st) if not is_waiting(u)]


def arrive(units, syncwarp) -> None:
    """``units`` just entered a new block; those at a syncwarp block start waiting."""
    for u in units:
        if not u.waiting and u.off == 0 and syncwarp[u.blk]:
            u.sync_wait = True


def release(warp, prio) -> int:
    """Release the highest-priority syncwarp group once nothing of the warp can issue (1 if released)."""
    if any(not u.waiting and not is_waiting(u) for u in warp.st):
        return 0
    waiting = [u for u in warp.st if is_waiting(u)]
    if not waiting:
        return 0
    blk = min(waiting, key=lambda u: prio[u.blk]).blk  # min() keeps the oldest among equal priorities
    group = [u for u in warp.st if is_waiting(u) and u.blk == blk]
    head = group[0]
    head.sync_wait = False
    for u in group[1:]:
        head.mask |= u.mask
        head.not_before = max(head.not_before, u.not_before)
        warp.st.remove(u)
    return 1
