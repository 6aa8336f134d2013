"""Miss-status holding registers of an SM's L1 (docs/memory.md, *Contention*).

A load that misses the L1 needs a register for its sector until the data is back; a load of a
sector already in flight merges with it and needs none (the L1 shows the sector with its arrival
cycle). With every register busy the load waits for the earliest to free, and the LSU with it.
An SM's registers are a binary min-heap of the cycles each is free again (row ``sm`` of
``mshr``), so the earliest is the root: the registers serve requests first come, first served.
"""

from __future__ import annotations

from ._jit import helper


@helper
def earliest_free(mshr, sm):
    """The cycle the SM's first register frees (its registers all free at 0 at the start)."""
    return mshr[sm, 0]


@helper
def occupy_earliest(mshr, sm, n, until):
    """The earliest-freed register of the SM's ``n`` is busy until cycle ``until`` (the root replaced,
    then sifted down)."""
    i = 0
    while True:
        child = 2 * i + 1
        if child >= n:
            break
        if child + 1 < n and mshr[sm, child + 1] < mshr[sm, child]:
            child += 1
        if mshr[sm, child] >= until:
            break
        mshr[sm, i] = mshr[sm, child]
        i = child
    mshr[sm, i] = until
