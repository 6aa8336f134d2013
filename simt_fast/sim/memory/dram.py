"""DRAM: a base latency plus queueing behind earlier requests on a partition (docs/memory.md).

The GPU's ``dram_bytes_per_cycle`` is split evenly over ``dram_partitions``; consecutive
``dram_interleave_bytes`` chunks of the address space go to consecutive partitions. A partition moves
one 32-byte sector in ``32 * dram_partitions / dram_bytes_per_cycle`` cycles, one request after the
other in the order they are made (issue order), each no earlier than it arrives. A read's data is
ready ``lat_global`` cycles after it arrives plus the cycles it waited for the partition.

The partitions' clocks count in units of 1 / dram_bytes_per_cycle cycle, so a fractional service
time (GTX480: 127 bytes per cycle over 6 partitions) stays exact in integers.
"""

from __future__ import annotations

from ..config import SECTOR_BYTES
from ._jit import helper
from .layout import C_DRAM_BYTES, P_DRAM_BPC, P_DRAM_INTERLEAVE, P_DRAM_PARTS, P_DRAM_SHIFT, SECTOR_SHIFT


@helper
def dram_transfer(dram, params, sector, t, counters):
    """Move one sector to or from DRAM, arriving at cycle ``t``; returns the cycles it queued."""
    counters[C_DRAM_BYTES] += SECTOR_BYTES
    bpc = params[P_DRAM_BPC]
    if bpc == 0:
        return 0
    parts = params[P_DRAM_PARTS]
    shift = params[P_DRAM_SHIFT]
    chunk = (sector << SECTOR_SHIFT) >> shift if shift >= 0 else (sector << SECTOR_SHIFT) // params[P_DRAM_INTERLEAVE]
    p = chunk % parts
    arrive = t * bpc
    start = arrive if arrive > dram[p] else dram[p]
    dram[p] = start + SECTOR_BYTES * parts
    return (start - arrive + bpc - 1) // bpc
