"""The memory model: coalescing, shared-memory banks, the load/store unit, L1/L2 sector caches, DRAM
bandwidth (docs/memory.md; the plain-Python twin is ``simt_fast.sim.reference.memory``).

One module per rule: :mod:`.coalesce` (sectors of a global/local access, constant addresses),
:mod:`.shared_banks` (bank conflicts), :mod:`.lsu` (the SM's load/store unit), :mod:`.cache` (a sector
cache), :mod:`.dram` (partitions and queueing), :mod:`.hierarchy` (``access``: what a warp-level
memory instruction does, level by level), :mod:`.trace_walk` (a trace's access patterns without a
cycle loop); the cycle loops' side: :mod:`.program` (a trace's addresses flattened for them, a run's
state) and :mod:`.issue` (their gather of an issuing warp's lanes). This module sizes and allocates
the state in plain Python.

How a timing kernel uses it (docs/memory.md, *In the timing model*)::

    state, params = memory.allocate(config, n_sms, n_warp_slots, trace.threads_per_cta, ctas_per_sm)
    counters = np.zeros(memory.C_N, np.int64)
    facts = memory.instruction_facts(trace)   # per instruction: space, kind, bytes (-1: not memory)
    ...
    # issue path, a memory instruction: lanes' /mem entries (NO_ACCESS for inactive lanes), then
    ready = access(state, params, sm, warp, now, space, kind, nbytes, writes_reg, addrs, resident, n_lanes, counters)

Only the per-SM parts (coalescing, banks, LSU, L1) may run SM by SM; with an L2 or a DRAM bandwidth
limit the SMs share state, and the kernel must visit them cycle by cycle (:func:`couples_sms`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...trace.model import MEM_LOAD, Trace
from ..config import LINE_BYTES, SECTOR_BYTES, SimConfig, cta_limit
from . import layout
from .hierarchy import access, replay
from .layout import (
    C_N, CONTROL_BYTES, EXTRA_COUNTERS, L_LRU, L_NF, L_TAG, MAX_LANES, P_N, SCRATCH_WORDS, SL_NF, SM_NF, STAT_COUNTERS,
    int64_addresses, STATE_FIELDS, SPACE_CONST, SPACE_GLOBAL, SPACE_LOCAL, SPACE_SHARED,
)
from .trace_walk import _walk

__all__ = [
    "access", "replay", "allocate", "instruction_facts", "model_enabled", "couples_sms", "stats_from_counters",
    "cache_contents", "profile", "MemoryProfile", "C_N", "int64_addresses",
]

MEMORY_SPACES = (SPACE_GLOBAL, SPACE_SHARED, SPACE_LOCAL, SPACE_CONST)


def model_enabled(config: SimConfig, trace: Trace) -> bool:
    """Whether a run models memory: not under ``perfect_memory`` (fixed latencies, today's behaviour),
    and only for traces whose addresses the model can align with instructions (``trace.has_mem``);
    otherwise memory instructions keep their op class's fixed latency."""
    return not config.perfect_memory and trace.has_mem


def couples_sms(config: SimConfig, trace: Trace) -> bool:
    """Whether a run's memory model has state shared by SMs (an L2, a DRAM bandwidth limit, the L2
    slices' or the interconnect's ports): then the requests of all SMs must reach it in global issue
    order, and the kernel must visit the SMs cycle by cycle (docs/core.md, *Visit order*). Without
    them (or without the model) every SM's results are the same in either order."""
    return model_enabled(config, trace) and (config.l2_bytes > 0 or config.dram_bytes_per_cycle > 0
                                             or config.l2_slice_bytes_per_cycle > 0 or config.icnt_bytes_per_cycle > 0)


def _sets(size: int, assoc: int) -> int:
    return size // (LINE_BYTES * assoc)


def packet_bytes(data: int, flit: int) -> int:
    """An interconnect packet: its control bytes and ``data``, in whole flits."""
    return -(-(CONTROL_BYTES + data) // flit) * flit


def make_params(config: SimConfig, n_sms: int, tpc: int, ctas_per_sm: int) -> np.ndarray:
    """The int64 parameter vector (``layout.P_*``) of ``config`` on ``n_sms`` SMs, for a launch of CTAs of
    ``tpc`` threads of which an SM holds ``ctas_per_sm``."""
    p = np.zeros(P_N, np.int64)
    p[layout.P_TPC] = tpc
    cta_threads = -(-tpc // config.warp_size) * config.warp_size
    p[layout.P_CTA_THREADS] = cta_threads
    p[layout.P_LOCAL_STRIDE] = cta_threads * ctas_per_sm * n_sms
    p[layout.P_N_SMS] = n_sms
    p[layout.P_L2_SLICES] = config.l2_slices
    p[layout.P_SLICE_BPC] = config.l2_slice_bytes_per_cycle
    p[layout.P_ICNT_BPC] = config.icnt_bytes_per_cycle
    p[layout.P_PKT_BARE] = packet_bytes(0, config.icnt_flit_bytes)
    p[layout.P_PKT_SECTOR] = packet_bytes(SECTOR_BYTES, config.icnt_flit_bytes)
    p[layout.P_L1_MSHRS] = config.l1_mshrs
    p[layout.P_MISS_QUEUE] = config.l1_miss_queue
    p[layout.P_L1_MERGE] = config.l1_mshr_merge
    p[layout.P_L2_MERGE] = config.l2_mshr_merge
    p[layout.P_LSU_SECTORS] = config.lsu_sectors_per_cycle
    p[layout.P_BANKS] = config.shared_banks
    p[layout.P_BANK_GROUP] = config.shared_bank_group
    p[layout.P_L1_SETS] = _sets(config.l1_bytes, config.l1_assoc)
    p[layout.P_L1_ASSOC] = config.l1_assoc
    p[layout.P_L1_WRITE_EVICT] = config.l1_write_policy == "write-evict"
    p[layout.P_L2_SETS] = _sets(config.l2_bytes, config.l2_assoc)
    p[layout.P_L2_ASSOC] = config.l2_assoc
    p[layout.P_L2_WRITE_FETCH] = config.l2_write_miss == "fetch"
    p[layout.P_LAT_L1] = config.lat_l1
    p[layout.P_LAT_L2] = config.lat_l2
    p[layout.P_LAT_DRAM] = config.lat_global
    p[layout.P_LAT_SHARED] = config.lat_shared
    p[layout.P_LAT_CONST] = config.lat_const
    p[layout.P_LAT_NONE] = config.lat_alu
    p[layout.P_DRAM_BPC] = config.dram_bytes_per_cycle
    p[layout.P_DRAM_PARTS] = config.dram_partitions
    p[layout.P_DRAM_INTERLEAVE] = config.dram_interleave_bytes
    for field, n in ((layout.P_L1_SET_MASK, p[layout.P_L1_SETS]), (layout.P_L2_SET_MASK, p[layout.P_L2_SETS]),
                     (layout.P_L2_SLICE_MASK, p[layout.P_L2_SLICES]), (layout.P_DRAM_PART_MASK, p[layout.P_DRAM_PARTS])):
        p[field] = n - 1 if n > 0 and n & (n - 1) == 0 else -1
    il = config.dram_interleave_bytes
    p[layout.P_DRAM_SHIFT] = il.bit_length() - 1 if il & (il - 1) == 0 else -1
    return p


def _cache(n_caches: int, sets: int, assoc: int) -> np.ndarray:
    lines = np.zeros((n_caches, max(sets, 1), L_NF, assoc if sets else 1), np.int64)
    lines[:, :, L_TAG, :] = -1
    return lines


def allocate(config: SimConfig, n_sms: int, n_warps: int, tpc: int, ctas_per_sm: int) -> tuple:
    """The model's state for a run, allocated once: ``(state, params)``, where ``state`` is the tuple
    of arrays named by ``STATE_FIELDS`` and ``params`` the int64 vector indexed by ``layout.P_*``.
    ``n_warps``: the kernel's warp slots (``warp`` in ``access`` indexes them); ``tpc`` (threads per
    CTA) and ``ctas_per_sm`` (CTAs an SM holds at once) place local memory."""
    if config.warp_size > MAX_LANES:  # pragma: no cover - SimConfig caps warp_size at 64
        raise ValueError(f"warp_size {config.warp_size} exceeds the memory model's {MAX_LANES} lanes")
    params = make_params(config, n_sms, tpc, ctas_per_sm)
    state = (
        np.zeros((n_sms, SM_NF), np.int64),
        _cache(n_sms, int(params[layout.P_L1_SETS]), config.l1_assoc),
        np.zeros(n_sms, np.int64),
        _cache(1, int(params[layout.P_L2_SETS]), config.l2_assoc),
        np.zeros(1, np.int64),
        np.zeros((config.dram_partitions, 1), np.int64),
        np.zeros(max(n_warps, 1), np.int64),
        np.zeros(SCRATCH_WORDS, np.int64),
        np.zeros((config.l2_slices, SL_NF), np.int64),
        np.zeros((n_sms, config.l1_mshrs + 1), np.int64),  # (`mshr`: the busy cycles, then their count)
    )
    return state, params


def instruction_facts(trace: Trace) -> tuple:
    """Per instruction (int64 arrays): memory space (its op_class for the four memory classes, -1 for
    any other instruction), access kind (``/instr/mem_kind``; loads when the trace has none) and bytes
    per thread (``/instr/mem_bytes``; 4 when the trace has none)."""
    op = np.asarray(trace.op_class, np.int64)
    space = np.where(np.isin(op, MEMORY_SPACES), op, -1).astype(np.int64)
    n = len(op)
    kind = np.full(n, MEM_LOAD, np.int64) if trace.mem_kind is None else np.asarray(trace.mem_kind, np.int64)
    nbytes = np.full(n, 4, np.int64) if trace.mem_bytes is None else np.asarray(trace.mem_bytes, np.int64)
    return space, kind, nbytes


def stats_from_counters(counters: np.ndarray) -> dict:
    """The results-file stats (simt_fast.sim.stats) the counters hold."""
    return {name: int(counters[i]) for name, i in STAT_COUNTERS.items()}


def cache_contents(state: tuple, level: str, index: int = 0) -> list:
    """One cache's lines, per set, least recently used first: ``[(line, valid mask, dirty mask), ...]``
    (``level`` = ``"l1"`` with the SM as ``index``, or ``"l2"``). For tests and debugging."""
    lines = state[STATE_FIELDS.index(level)][index]
    out = []
    for s in range(lines.shape[0]):
        used = [w for w in range(lines.shape[2]) if lines[s, L_TAG, w] >= 0]
        used.sort(key=lambda w: lines[s, L_LRU, w])
        out.append([(int(lines[s, L_TAG, w]), int(lines[s, layout.L_VALID, w]), int(lines[s, layout.L_DIRTY, w]))
                    for w in used])
    return out


@dataclass
class MemoryProfile:
    """What :func:`profile` counts: totals (the results-file stat names where one exists) and, per
    instruction, the warp-level accesses and their sectors (global/local), passes (shared) or
    distinct addresses (constant)."""

    mem_requests: int
    mem_sectors: int
    mem_lines: int
    shared_requests: int
    shared_replays: int
    shared_passes: int
    const_requests: int
    const_accesses: int
    l1_hits: int
    l1_misses: int
    l2_hits: int
    l2_misses: int
    dram_bytes: int
    inst_requests: np.ndarray
    inst_units: np.ndarray

    @property
    def sectors_per_request(self) -> float:
        return self.mem_sectors / self.mem_requests if self.mem_requests else 0.0


def profile(trace: Trace, config: SimConfig) -> MemoryProfile:
    """Walk ``trace``'s addresses warp by warp (fixed warps of ``config.warp_size`` consecutive
    threads, fully converged; CTA c on SM c % n_sms in its slot (c // n_sms) % CTAs per SM;
    :mod:`.trace_walk`) through the memory model of ``config`` (its caches, banks, ``n_sms``); no
    cycle loop. ``perfect_memory`` is ignored: this measures the addresses."""
    if not trace.has_mem:
        raise ValueError(f"trace of kernel '{trace.kernel}' has no per-instruction addresses (/mem); "
                         f"emulate it with addresses recorded (the default)")
    space, kind, nbytes = instruction_facts(trace)
    ctas_per_sm = cta_limit(config, trace.threads_per_cta)
    state, params = allocate(config, config.n_sms, 1, trace.threads_per_cta, ctas_per_sm)
    counters = np.zeros(C_N, np.int64)
    inst_requests = np.zeros(trace.n_instrs, np.int64)
    inst_units = np.zeros(trace.n_instrs, np.int64)
    # each block's memory instructions (CSR), so the walk skips the others
    is_mem = space >= 0
    block_start = np.asarray(trace.block_start, np.int64)
    block_mem_ptr = np.concatenate(([0], np.cumsum(is_mem)))[block_start]
    _walk(block_mem_ptr, np.flatnonzero(is_mem).astype(np.int64), space, kind, nbytes, np.asarray(trace.dst_reg, np.int64),
          np.asarray(trace.path_ptr, np.int64), np.asarray(trace.path, np.int64), np.asarray(trace.mem_ptr, np.int64),
          int64_addresses(trace.mem_addr), config.warp_size, trace.threads_per_cta, config.n_sms,
          int(params[layout.P_CTA_THREADS]), ctas_per_sm, state, params, counters, inst_requests, inst_units)
    named = {**STAT_COUNTERS, **EXTRA_COUNTERS}
    return MemoryProfile(**{k: int(counters[named[k]]) for k in (
        "mem_requests", "mem_sectors", "mem_lines", "shared_requests", "shared_replays", "shared_passes",
        "const_requests", "const_accesses", "l1_hits", "l1_misses", "l2_hits", "l2_misses", "dram_bytes")},
        inst_requests=inst_requests, inst_units=inst_units)
