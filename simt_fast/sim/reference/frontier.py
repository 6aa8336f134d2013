"""Reference `frontier`: the warp issues its unit at the highest-priority (lowest RPO) PC."""

from __future__ import annotations


def schedulable(warp, prio) -> list:
    ready = [i for i, u in enumerate(warp.st) if not u.waiting]  # barrier waiters leave the frontier
    if not ready:
        return []
    best = min(ready, key=lambda i: (prio[warp.st[i].blk], warp.st[i].off, i))
    return [best]


def merge_same_pc(warp) -> None:
    i = 0
    while i < len(warp.st):
        j = i + 1
        while j < len(warp.st):
            a, b = warp.st[i], warp.st[j]
            if a.pc == b.pc and not a.waiting and not b.waiting:
                a.mask |= b.mask
                a.not_before = max(a.not_before, b.not_before)
                del warp.st[j]
            else:
                j += 1
        i += 1
