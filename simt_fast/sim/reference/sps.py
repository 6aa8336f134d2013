"""Reference `sps`: only the newest split (the top of the PDOM stack) issues."""


def schedulable(warp, prio) -> list:
    return [len(warp.st) - 1] if warp.st else []
