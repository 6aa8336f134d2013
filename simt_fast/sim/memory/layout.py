"""Named indices of the memory model's flat state (docs/memory.md), shared by its numba modules.

The model's state is a handful of int64 arrays allocated once by :func:`simt_fast.sim.memory.allocate`;
every function in this package reads and writes them through the indices below, so a field has one
name everywhere. Geometry is fixed: 32-byte sectors, 128-byte lines (four sectors per line).
"""

from __future__ import annotations

import numpy as np

from ...ir.model import OpClass
from ...trace.model import MEM_ATOMIC, MEM_LOAD, MEM_STORE
from ..config import LINE_BYTES, LOCAL_BASE, SECTOR_BYTES  # noqa: F401  (LOCAL_BASE: re-exported)

SECTOR_SHIFT = 5  # log2(SECTOR_BYTES)
SECTORS_PER_LINE = LINE_BYTES // SECTOR_BYTES
assert 1 << SECTOR_SHIFT == SECTOR_BYTES and SECTORS_PER_LINE == 4

# An address the kernel passes for a lane that makes no access: the trace's NO_ACCESS (2**64 - 1)
# read as int64, and what the kernel writes for inactive lanes.
NO_ACCESS = -1

# the spaces and kinds `access` takes (the trace's op_class and mem_kind values)
SPACE_GLOBAL = int(OpClass.MEM_GLOBAL)
SPACE_SHARED = int(OpClass.MEM_SHARED)
SPACE_LOCAL = int(OpClass.MEM_LOCAL)
SPACE_CONST = int(OpClass.MEM_CONST)
KIND_LOAD = MEM_LOAD
KIND_STORE = MEM_STORE
KIND_ATOMIC = MEM_ATOMIC

# the arrays of a run's state tuple (`memory.allocate`), in order
STATE_FIELDS = ("sm_state", "l1", "l1_clock", "l2", "l2_clock", "dram", "warp_wait", "scratch", "slices", "mshr")

# ---- params: int64[P_N], read-only after allocate() --------------------------------------------
P_CTA_THREADS = 0  # threads per CTA, whole warps (local memory: a thread's slot on its SM = CTA slot x this + index)
P_LSU_SECTORS = 1  # sectors of one line the LSU takes per cycle
P_BANKS = 2  # shared-memory banks (4 bytes wide)
P_BANK_GROUP = 3  # lanes checked for bank conflicts together
P_L1_SETS = 4  # 0: no L1
P_L1_ASSOC = 5
P_L1_WRITE_EVICT = 6  # 1: global stores evict, local stores write back (Fermi); 0: write-through
P_L2_SETS = 7  # 0: no L2
P_L2_ASSOC = 8
P_L2_WRITE_FETCH = 9  # 1: a write miss writes on to DRAM and reads the sector in; 0: allocate dirty
P_LAT_L1 = 10
P_LAT_L2 = 11
P_LAT_DRAM = 12  # lat_global
P_LAT_SHARED = 13
P_LAT_CONST = 14
P_LAT_NONE = 15  # an instruction none of whose lanes accesses memory: lat_alu
P_DRAM_BPC = 16  # bytes per cycle for the whole GPU; 0: unlimited
P_DRAM_PARTS = 17
P_DRAM_INTERLEAVE = 18
# power-of-two divisors as masks/shifts (-1: not a power of two), so the hot path avoids divisions
P_L1_SET_MASK = 19
P_L2_SET_MASK = 20
P_DRAM_SHIFT = 21  # log2(dram_interleave_bytes)
P_LOCAL_STRIDE = 22  # threads the machine holds at once (CTA threads x CTAs per SM x SMs): local memory's stride
P_N_SMS = 23
P_L2_SLICES = 24
P_SLICE_BPC = 25  # each slice's data port, bytes per cycle (0: unlimited)
P_ICNT_BPC = 26  # each interconnect port, bytes per cycle (0: unlimited)
P_PKT_BARE = 27  # bytes of a packet without data (a read request, a write's acknowledgement), whole flits
P_PKT_SECTOR = 28  # bytes of a packet carrying a sector
P_L1_MSHRS = 29  # per SM: sectors the L1 may have outstanding (0: unbounded)
P_MISS_QUEUE = 30  # per SM: requests that may wait for the interconnect (0: unbounded)
P_TPC = 31  # threads per CTA (the cycle loops' gather: a thread's index in its CTA)
P_L1_MERGE = 32  # requests one L1 register holds (the miss and the loads merged with it; 0: unbounded)
P_L2_MERGE = 33  # the same in the L2
P_L2_SLICE_MASK = 34  # l2_slices - 1 when a power of two, else -1 (as the set masks above)
P_DRAM_PART_MASK = 35  # dram_partitions - 1 when a power of two, else -1
P_N = 36

# ---- counters: int64[C_N], accumulated by access() ----------------------------------------------
C_MEM_REQUESTS = 0
C_MEM_SECTORS = 1
C_SHARED_REQUESTS = 2
C_SHARED_REPLAYS = 3
C_L1_HITS = 4
C_L1_MISSES = 5
C_L2_HITS = 6
C_L2_MISSES = 7
C_DRAM_BYTES = 8
C_MEM_STALL = 9
C_MEM_LINES = 10  # distinct 128-byte lines of the global/local requests (not a results column)
C_CONST_REQUESTS = 11  # constant-memory instructions that accessed memory
C_CONST_ACCESSES = 12  # their distinct addresses (serialised accesses)
C_SHARED_PASSES = 13  # shared-memory passes (the LSU cycles shared requests took)
C_MSHR_STALL = 14  # LSU cycles lost waiting for a miss-status holding register or room in the miss queue
C_ICNT_WAIT = 15  # cycles requests and replies waited for interconnect ports
C_SLICE_WAIT = 16  # cycles requests waited for their L2 slice's data port
C_N = 17

# the results-file stats (simt_fast.sim.stats) and their counters
STAT_COUNTERS = {
    "mem_requests": C_MEM_REQUESTS,
    "mem_sectors": C_MEM_SECTORS,
    "shared_requests": C_SHARED_REQUESTS,
    "shared_replays": C_SHARED_REPLAYS,
    "l1_hits": C_L1_HITS,
    "l1_misses": C_L1_MISSES,
    "l2_hits": C_L2_HITS,
    "l2_misses": C_L2_MISSES,
    "dram_bytes": C_DRAM_BYTES,
    "mem_stall_cycles": C_MEM_STALL,
    "mshr_stall_cycles": C_MSHR_STALL,
    "icnt_wait_cycles": C_ICNT_WAIT,
    "slice_wait_cycles": C_SLICE_WAIT,
}
EXTRA_COUNTERS = {
    "mem_lines": C_MEM_LINES,
    "const_requests": C_CONST_REQUESTS,
    "const_accesses": C_CONST_ACCESSES,
    "shared_passes": C_SHARED_PASSES,
}

# ---- per-SM state: int64[n_sms, SM_NF] ----------------------------------------------------------
SM_LSU_FREE = 0  # first cycle the load/store unit can take another line or shared pass
SM_CONST_FREE = 1  # first cycle the constant cache can take another address
SM_OUT = 2  # the SM's interconnect port for requests (clock in 1/P_ICNT_BPC cycles: `ports`)
SM_IN = 3  # its port for replies
SM_NF = 4

# ---- per-slice state: int64[l2_slices, SL_NF] (port clocks, `ports`) ------------------------------
SL_IN = 0  # the slice's interconnect port for requests
SL_PORT = 1  # its data port
SL_NF = 2

# ---- miss-status holding registers: int64[n_sms, l1_mshrs + 1], per SM the cycles the registers taken
# since the last sweep are free again, then their count (`mshr`)

# ---- cache lines: int64[n_caches, n_sets, L_NF, assoc] (one cache per SM for L1, one for L2; a set's
# tags are one contiguous row, so a lookup reads one host cache line for up to 8 ways), and
# each cache's LRU clock int64[n_caches] (a use counter, so two uses never tie)
L_TAG = 0  # line number (address >> 7); -1: the way was never filled
L_LRU = 1  # the cache's clock at the line's last use
L_VALID = 2  # sector mask (bit s: sector s of the line holds data)
L_DIRTY = 3  # sector mask of modified sectors
L_FILL = 4  # L_FILL + s: cycle sector s's data arrives (a hit before that waits for it)
L_MERGED = 8  # bits 16s..16s+15: requests sector s's miss-status holding register holds (the miss + merges)
L_MRU = 9  # way 0 of this row: the set's most recently used way, looked at first (a lookup's hint)
L_NF = 10
MERGED_MAX = 0x7FFF  # (a 16-bit field per sector, kept clear of the sign bit)

# ---- scratch: int64[...] --------------------------------------------------------------------------
MAX_LANES = 64  # SimConfig.warp_size <= 64
MAX_ITEMS_PER_LANE = 65  # 4-byte words of one lane's access: mem_bytes <= 255 spans at most 65
BANK_BASE = MAX_LANES * MAX_ITEMS_PER_LANE  # bank counters live after the sorted item list
BYTE_BASE = BANK_BASE + 64  # shared_banks <= 64; then an atomic's per-byte lane counts (one sector)
REPEAT_BASE = BYTE_BASE + 32  # then an atomic's transactions per sorted item
SCRATCH_WORDS = REPEAT_BASE + MAX_LANES * MAX_ITEMS_PER_LANE
CONTROL_BYTES = 8  # an interconnect packet's header (GPGPU-Sim's READ_PACKET_SIZE, WRITE_PACKET_SIZE)


def int64_addresses(mem_addr: np.ndarray) -> np.ndarray:
    """The trace's ``/mem/mem_addr`` (uint64, NO_ACCESS = 2**64 - 1) as the int64 the model takes
    (a view: NO_ACCESS reads as -1, every device address is below 2**63)."""
    return np.asarray(mem_addr, np.uint64).view(np.int64)
