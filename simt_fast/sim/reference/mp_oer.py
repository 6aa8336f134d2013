"""Reference `mp-oer`: mp + opportunistic early reconvergence of splits in the same block."""

from __future__ import annotations

from .mp import schedulable  # noqa: F401


def early_reconverge(warp) -> int:
    count = 0
    while True:
        hit = None
        for i, trailing in enumerate(warp.st):
            if trailing.off != 0 or trailing.waiting:
                continue
            for v, leading in enumerate(warp.st):
                if v == i or leading.waiting or leading.blk != trailing.blk:
                    continue
                if leading.rpc != trailing.rpc or leading.parent != trailing.parent:
                    continue
                if leading.off == 0 and v > i:
                    continue
                hit = (trailing, leading)
                break
            if hit:
                break
        if hit is None:
            return count
        trailing, leading = hit
        if leading.off == 0:
            # both at the block entry: one unit from now on
            leading.mask |= trailing.mask
            leading.not_before = max(leading.not_before, trailing.not_before)
            warp.st.remove(trailing)
        else:
            # the leading split waits at its next PC; the trailing one reconverges there
            entry = warp.new_rt(pc=leading.pc, rpc=leading.rpc, rmask=leading.mask | trailing.mask,
                                pending=trailing.mask, parent=leading.parent)
            trailing.rpc = leading.pc
            trailing.parent = entry.id
            warp.st.remove(leading)
        count += 1
