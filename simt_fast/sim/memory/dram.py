"""DRAM: a base latency plus queueing behind earlier requests on a partition (docs/memory.md).

The GPU's ``dram_bytes_per_cycle`` is split evenly over ``dram_partitions``; consecutive
``dram_interleave_bytes`` chunks of the address space go to consecutive partitions. A partition is a
port (:mod:`.ports`) that moves one 32-byte sector in ``32 * dram_partitions / dram_bytes_per_cycle``
cycles: its clock counts in units of 1 / dram_bytes_per_cycle cycle, so a fractional service time
(GTX480: 127 bytes per cycle over 6 partitions) stays exact in integers. A read's data is ready
``lat_global`` cycles after it arrives plus the cycles it waited for the partition.
"""

from __future__ import annotations

from ..config import SECTOR_BYTES
from ._jit import helper
from .layout import C_DRAM_BYTES, P_DRAM_BPC, P_DRAM_PART_MASK, P_DRAM_PARTS
from .ports import transfer
from .slices import chunk_of


@helper
def dram_transfer(dram, params, sector, t, counters):
    """Move one sector to or from DRAM, arriving at cycle ``t``; returns the cycles it queued."""
    counters[C_DRAM_BYTES] += SECTOR_BYTES
    parts = params[P_DRAM_PARTS]
    mask = params[P_DRAM_PART_MASK]
    part = chunk_of(sector, params) & mask if mask >= 0 else chunk_of(sector, params) % parts
    return transfer(dram, part, 0, t, SECTOR_BYTES * parts, params[P_DRAM_BPC])
