"""Miss-status holding registers of an SM's L1 (docs/memory.md, *Contention*).

A load that misses the L1 needs a register for its sector until the data is back; a load of a
sector already in flight merges with it and needs none (the L1 shows the sector with its arrival
cycle). With every register busy the load waits for the earliest to free, and the LSU with it.

An SM's LSU asks for registers in cycle order (its requests never go back in time), so a register
free by the cycle of one request is free for every later one: which free register a miss takes
does not matter, only how many are busy and, when all are, which frees first. Row ``sm`` of
``mshr`` keeps the cycles the registers taken since the last sweep free again, in the order taken,
and their count in its last column: a miss appends to the row while it has room, and only a full
row is swept for the registers free by then (a scan of ``n`` cycles once every ``n`` - busy misses,
instead of a heap's log2 ``n`` dependent steps on every miss: a 512-register L1 missing on every
sector spent a tenth of its run there).
"""

from __future__ import annotations

from ._jit import helper


@helper
def register_free(mshr, sm, n, t):
    """The first cycle at or after ``t`` one of the SM's ``n`` registers is free."""
    taken = mshr[sm, n]
    if taken < n:
        return t
    # a full row: keep only the registers still busy at t
    k = 0
    earliest = mshr[sm, 0]
    for i in range(n):
        v = mshr[sm, i]
        earliest = min(earliest, v)
        if v > t:
            mshr[sm, k] = v
            k += 1
    mshr[sm, n] = k
    return t if k < n else earliest


@helper
def take_register(mshr, sm, n, until):
    """A miss takes a free register (`register_free` said when there is one) until cycle ``until``;
    when all are busy, the one that frees first (the miss waited for it)."""
    taken = mshr[sm, n]
    if taken < n:
        mshr[sm, taken] = until
        mshr[sm, n] = taken + 1
        return
    first = 0
    for i in range(1, n):
        if mshr[sm, i] < mshr[sm, first]:
            first = i
    mshr[sm, first] = until
