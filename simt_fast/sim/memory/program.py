"""What the cycle loops read to run the memory model (docs/memory.md, *In the timing model*).

``prepare_memory(trace, config)`` gives the kernels a trace's addresses (``/mem``: each thread's
entries in its path order) and each instruction's memory facts. A kernel keeps a cursor per thread
(``MemoryRun.cursor``): the thread's next entry is its row ``row0[t >> shift] + cursor[t]``, and
the cursor moves on each time the thread issues a memory instruction.

Row j of a group of ``2**shift`` consecutive threads holds entry j of each of its threads, as
`trace.mem_rows` encodes them: an affine row is two words, any other keeps its lanes in ``full``.
A trace loaded from a file that stores its rows hands them over as they are (`Trace.stored_rows`);
any other is encoded here once (and kept while its arrays live). So a warp's access usually reads 16 bytes rather than one address per lane: with many SMs in
cycle-major order thousands of warps each stream their own part of the addresses, and reading 32
lanes' addresses missed the host's caches most of the time (measured: the gather was a third of a
replicated-CTA run). A trace whose rows are mostly not affine and sparse (threads of a group with
very different entry counts) takes groups of one thread instead (``shift`` 0: every row affine)
rather than more than double its addresses in ``full``.
``allocate_memory`` gives each run (each visit order `simulate` tries) a fresh model state and
cursors.

Without the model (``perfect_memory``, a trace without addresses or with the older ``/mem``
layout) ``on`` is 0 and the kernels get None for both tuples: they keep the op classes' fixed
latencies, and numba drops their memory branch before typing (the memory model is not compiled).
"""

from __future__ import annotations

import weakref
from collections import namedtuple

import numpy as np

from ...trace import mem_rows
from ...trace.model import Trace
from .. import memory
from ..config import SimConfig
from . import layout
from ._jit import helper

MemoryProgram = namedtuple("MemoryProgram", [
    "on",  # 1: memory instructions go through `memory.access`; 0: fixed latencies
    "space",  # int64[n_instrs]: op_class of a memory instruction, -1 for any other
    "kind",  # int64[n_instrs]: load, store or atomic (`memory.layout.KIND_*`)
    "nbytes",  # int64[n_instrs]: bytes one thread accesses
    "shift",  # log2 of the threads per group (GROUP_SHIFT, or 0)
    "row0",  # int64[n_groups]: the first row of each group of 2**shift consecutive threads
    "rows",  # int64[2 * n_rows]: per row (base, stride << 32 | void), or (offset in `full`, NOT_AFFINE)
    "full",  # int64[...]: the lanes of the rows that are not affine (NO_ACCESS for no entry)
])
GROUP_SHIFT = mem_rows.GROUP_SHIFT
NOT_AFFINE = mem_rows.NOT_AFFINE

# a run's model state, allocated in Python (the kernels never allocate)
MemoryRun = namedtuple("MemoryRun", [
    "state",  # the tuple `memory.allocate` returns
    "params",  # int64[memory.layout.P_N]
    "counters",  # int64[memory.C_N]
    "lane_addr",  # scratch int64[warp_size]: the issuing warp's lanes' addresses
    "lane_resident",  # scratch int64[warp_size]: their threads' slots on the SM (`memory.access`)
    "owner",  # int64[warp keys]: formation: the warp id a warp record's stall interval belongs to
    "cursor",  # int32 (int64 for 2**31 entries or more)[n_threads]: each thread's /mem entries taken so far
])

NOTE_PERFECT = ("memory is treated as perfect coalescing: the trace has no per-instruction addresses (/mem); "
                "memory instructions take their op class's fixed latency")


def _off(n_instrs: int) -> MemoryProgram:
    one = np.zeros(1, np.int64)
    return MemoryProgram(on=0, space=np.full(max(n_instrs, 1), -1, np.int64), kind=one, nbytes=one, shift=0,
                         row0=one, rows=np.zeros(2, np.int64), full=one)


@helper
def lane_address(rows, full, r, lane):
    """The address of lane ``lane`` (its thread's index in its group) in row ``r``."""
    second = rows[2 * r + 1]
    if second == NOT_AFFINE:
        return full[rows[2 * r] + lane]
    if (second >> lane) & 1:
        return layout.NO_ACCESS
    return rows[2 * r] + lane * (second >> 32)


# the last trace's layout, kept while its /mem arrays live: a run is often one of several on one
# trace (mechanisms, configs, the bench's repeats)
_last_layout: list = [None, None, None]  # weakrefs to mem_ptr and mem_addr, the layout


def address_rows(mem_ptr: np.ndarray, addr: np.ndarray) -> tuple:
    """(shift, row0, rows, full) of the kernels' layout (module doc) for the trace's /mem."""
    ptr_ref, addr_ref, known = _last_layout
    if known is not None and ptr_ref() is mem_ptr and addr_ref() is addr:
        return known
    out = _address_rows(np.asarray(mem_ptr, np.int64), memory.int64_addresses(addr))
    try:
        _last_layout[:] = [weakref.ref(mem_ptr), weakref.ref(addr), out]
    except TypeError:  # (an array view that takes no weak reference: no reuse)
        _last_layout[:] = [None, None, None]
    return out


def _address_rows(mem_ptr: np.ndarray, addr: np.ndarray) -> tuple:
    n_entries = int(mem_ptr[-1] - mem_ptr[0])
    row0, rows, full = mem_rows.encode(mem_ptr, addr, GROUP_SHIFT)
    if mem_rows.pays_off(n_entries, full, GROUP_SHIFT):
        return GROUP_SHIFT, row0, rows, full
    return (0, *mem_rows.encode(mem_ptr, addr, 0))


def thread_entries(layout_: tuple, t: int, count: int) -> list:
    """Thread ``t``'s first ``count`` entries as the kernels read them (for tests)."""
    shift, row0, rows, full = layout_
    lane = t & ((1 << shift) - 1)
    out = []
    for j in range(count):
        r = int(row0[t >> shift]) + j
        first, second = int(rows[2 * r]), int(rows[2 * r + 1])
        if second == NOT_AFFINE:
            out.append(int(full[first + lane]))
        else:
            out.append(layout.NO_ACCESS if (second >> lane) & 1 else first + lane * (second >> 32))
    return out


def prepare_memory(trace: Trace, config: SimConfig) -> MemoryProgram:
    """The kernels' view of ``trace``'s addresses under ``config`` (``on`` = 0 without the model)."""
    if not memory.model_enabled(config, trace):
        return _off(trace.n_instrs)
    space, kind, nbytes = memory.instruction_facts(trace)
    stored = trace.stored_rows()
    if stored is not None:  # the rows the file stores: the same layout, never decoded
        shift, rows, full = stored.shift, stored.rows, stored.full
        row0 = mem_rows.group_rows(trace.mem_ptr, shift)
    else:
        shift, row0, rows, full = address_rows(trace.mem_ptr, trace.mem_addr)
    return MemoryProgram(on=1, space=space, kind=kind, nbytes=nbytes, shift=shift, row0=row0, rows=rows, full=full)


def note(config: SimConfig, trace: Trace) -> str | None:
    """The one-line note for a run that could model memory but the trace has no addresses."""
    if config.perfect_memory or trace.has_mem:
        return None
    return NOTE_PERFECT


def allocate_memory(config: SimConfig, n_sms: int, n_warp_keys: int, tpc: int, ctas_per_sm: int,
                    n_threads: int, n_entries: int = 0) -> MemoryRun:
    """A fresh model state for one run with the model on (``n_warp_keys``: the warps the kernel keys
    stall time by; ``tpc`` threads per CTA, ``ctas_per_sm`` CTAs an SM holds; ``n_entries``: the
    addresses' entries, so at least any thread's). The cursors are 32-bit unless a thread could have
    more entries: with many CTAs resident, every gather reads and writes its lanes' cursors, and
    half the bytes keep more of them in the host's caches."""
    state, params = memory.allocate(config, n_sms, n_warp_keys, tpc, ctas_per_sm)
    w = max(config.warp_size, 1)
    cursor = np.zeros(max(n_threads, 1), np.int32 if n_entries < 2**31 else np.int64)
    return MemoryRun(state=state, params=params, counters=np.zeros(memory.C_N, np.int64),
                     lane_addr=np.zeros(w, np.int64), lane_resident=np.zeros(w, np.int64),
                     owner=np.full(max(n_warp_keys, 1), -1, np.int64), cursor=cursor)
