"""Bandwidth-limited first-in, first-out ports (docs/memory.md, *Contention*): DRAM partitions, the
interconnect's ports, the L2 slices' data ports.

A port moves ``bpc`` bytes per cycle, one transfer after the other in the order they are made
(the machine's issue order), each starting no earlier than it arrives. Its clock counts in units of
1 / bpc cycle, so a fractional service time (a 40-byte flit at 20 bytes per cycle, a sector on a
sixth of 127 bytes per cycle) stays exact in integers. ``bpc`` 0: the port is unlimited.
A port is a cell ``clocks[row, col]`` of an int64 array, so one array holds a family of ports.
"""

from __future__ import annotations

from ._jit import helper


@helper
def transfer(clocks, row, col, t, nbytes, bpc):
    """Move ``nbytes`` through the port arriving at cycle ``t``; returns the whole cycles they waited."""
    if bpc == 0:
        return 0
    arrive = t * bpc
    if arrive >= clocks[row, col]:  # the port is idle: no wait (and no division, the common case)
        clocks[row, col] = arrive + nbytes
        return 0
    start = clocks[row, col]
    clocks[row, col] = start + nbytes
    return (start - arrive + bpc - 1) // bpc


@helper
def room(clocks, row, col, t, queued_bytes, bpc):
    """The first cycle at or after ``t`` at which at most ``queued_bytes`` wait before the port."""
    if bpc == 0:
        return t
    over = clocks[row, col] - queued_bytes - t * bpc
    return t + (over + bpc - 1) // bpc if over > 0 else t


@helper
def hold(clocks, row, col, until, bpc):
    """The port moves nothing before cycle ``until`` (a stalled consumer behind it)."""
    if bpc > 0 and clocks[row, col] < until * bpc:
        clocks[row, col] = until * bpc
