"""Reference `mp`: multi-path IPDOM tables (ElTantawy et al. 2014). Rules: simt_fast/sim/mech/mp.py."""

from __future__ import annotations

from .tables import Unit, Warp


def schedulable(warp: Warp, prio) -> list:
    return list(range(len(warp.st)))  # every split in the ST may issue


def diverge(warp: Warp, i: int, ipdom_of_branch: int, groups: list, nb: int, collapse: bool = True) -> None:
    """Split i ends its block with several target groups [(block, mask)], which issue from cycle ``nb``."""
    split = warp.st[i]
    r = ipdom_of_branch
    if collapse and split.rpc == (r, 0):
        # the new entry would be redundant: reconverge straight into the split's own entry
        parent = warp.find_rt(split.parent)
        del warp.st[i]
        for blk, mask in groups:
            if blk == r:
                parent.pending &= ~mask
            else:
                warp.st.append(Unit(blk, 0, mask, rpc=(r, 0), parent=parent.id, not_before=nb))
        return
    entry = warp.new_rt(pc=(r, 0), rpc=split.rpc, rmask=split.mask, pending=split.mask, parent=split.parent)
    del warp.st[i]
    for blk, mask in groups:
        if blk == r:
            entry.pending &= ~mask  # these threads are already at the reconvergence point
        else:
            warp.st.append(Unit(blk, 0, mask, rpc=(r, 0), parent=entry.id, not_before=nb))


def clear_exited(warp: Warp, exited: int) -> None:
    for e in warp.rt:
        e.pending &= ~exited
        e.rmask &= ~exited


def settle(warp: Warp, nb: int) -> None:
    """Arrivals at RPCs, then RT entries with an empty pending mask back to the ST (issuing from
    cycle ``nb``: the last threads to arrive may have just branched), until stable."""
    while True:
        arrived = next((u for u in warp.st if not u.waiting and u.rpc is not None and u.pc == u.rpc), None)
        if arrived is not None:
            warp.find_rt(arrived.parent).pending &= ~arrived.mask
            warp.st.remove(arrived)
            continue
        done = next((e for e in warp.rt if e.pending == 0), None)
        if done is None:
            return
        mask = done.rmask & warp.live
        if mask:
            warp.st.append(Unit(done.pc[0], done.pc[1], mask, rpc=done.rpc, parent=done.parent, not_before=nb))
        warp.rt.remove(done)
