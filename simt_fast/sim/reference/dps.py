"""Reference `dps`: the paths of the top stack entry (children of the newest RT entry) issue."""


def schedulable(warp, prio) -> list:
    top = warp.rt[-1].id if warp.rt else -1
    return [i for i, u in enumerate(warp.st) if u.parent == top]
