"""Where a sector lives below the SMs (docs/memory.md, *Contention*): its L2 slice (memory
sub-partition) and its DRAM partition, both interleaved by ``dram_interleave_bytes``: consecutive
chunks of that size go to consecutive slices, and to consecutive partitions."""

from __future__ import annotations

from ._jit import helper
from .layout import P_DRAM_INTERLEAVE, P_DRAM_SHIFT, P_L2_SLICE_MASK, P_L2_SLICES, SECTOR_SHIFT


@helper
def chunk_of(sector, params):
    """The interleave chunk ``sector`` falls in (address // dram_interleave_bytes)."""
    shift = params[P_DRAM_SHIFT]
    return (sector << SECTOR_SHIFT) >> shift if shift >= 0 else (sector << SECTOR_SHIFT) // params[P_DRAM_INTERLEAVE]


@helper
def slice_of(sector, params):
    mask = params[P_L2_SLICE_MASK]
    return chunk_of(sector, params) & mask if mask >= 0 else chunk_of(sector, params) % params[P_L2_SLICES]
