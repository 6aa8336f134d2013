"""What the cycle loops read to run the memory model (docs/memory.md, *In the timing model*).

``prepare_memory(trace, config)`` gives the kernels a trace's addresses (``/mem``: each thread's
entries in its path order) and each instruction's memory facts. A kernel keeps a cursor per thread
(``MemoryRun.cursor``): the thread's next entry is ``addr[start[t] + cursor[t] * stride]``, and the
cursor moves on each time the thread issues a memory instruction. The entries of 32 consecutive
threads are interleaved (``stride`` 32: entry j of the group's lanes side by side), so a warp's
access reads a few host cache lines instead of one per lane — with many SMs in cycle-major order
the per-thread layout missed the host's caches on most lanes (measured: a third of the run on a
replicated-CTA trace). A trace whose threads of one group have very different entry counts keeps
the per-thread layout (``stride`` 1) rather than more than double its addresses with padding.
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

from ...trace.model import Trace
from .. import memory
from ..config import SimConfig
from . import layout
from ._jit import stream

MemoryProgram = namedtuple("MemoryProgram", [
    "on",  # 1: memory instructions go through `memory.access`; 0: fixed latencies
    "space",  # int64[n_instrs]: op_class of a memory instruction, -1 for any other
    "kind",  # int64[n_instrs]: load, store or atomic (`memory.layout.KIND_*`)
    "nbytes",  # int64[n_instrs]: bytes one thread accesses
    "start",  # int64[n_threads]: where thread t's first entry is in `addr`
    "stride",  # entries between a thread's consecutive entries in `addr` (INTERLEAVE, or 1)
    "addr",  # int64[...]: the trace's /mem/mem_addr, interleaved (NO_ACCESS = -1, also the padding)
])
INTERLEAVE = 32  # threads whose entries are interleaved (a power of two: `memory.issue` masks by it)
MAX_PADDING = 2  # interleave only if that takes at most this many times the trace's entries

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
    return MemoryProgram(on=0, space=np.full(max(n_instrs, 1), -1, np.int64), kind=one, nbytes=one, start=one,
                         stride=1, addr=one)


@stream
def _interleave(mem_ptr, addr, group, group_start, out, start):
    """Thread t's j-th entry to ``out[start[t] + j * group]``, ``start[t]`` = its group's first entry
    + its index in the group."""
    for t in range(mem_ptr.shape[0] - 1):
        first = group_start[t // group] + t % group
        start[t] = first
        for j in range(mem_ptr[t + 1] - mem_ptr[t]):
            out[first + j * group] = addr[mem_ptr[t] + j]


# the last trace's layout, kept while its /mem arrays live: a run is often one of several on one
# trace (mechanisms, configs, the bench's repeats), and its copy is as large as the trace's addresses
_last_layout: list = [None, None, None]  # weakrefs to mem_ptr and mem_addr, the layout


def interleaved_addresses(mem_ptr: np.ndarray, addr: np.ndarray) -> tuple:
    """(addresses, start, stride) of the kernels' layout (module doc) for the trace's /mem."""
    ptr_ref, addr_ref, known = _last_layout
    if known is not None and ptr_ref() is mem_ptr and addr_ref() is addr:
        return known
    out = _interleaved(np.asarray(mem_ptr, np.int64), memory.int64_addresses(addr))
    try:
        _last_layout[:] = [weakref.ref(mem_ptr), weakref.ref(addr), out]
    except TypeError:  # (an array view that takes no weak reference: no reuse)
        _last_layout[:] = [None, None, None]
    return out


def _interleaved(mem_ptr: np.ndarray, addr: np.ndarray) -> tuple:
    n = mem_ptr.shape[0] - 1
    counts = np.zeros(-(-n // INTERLEAVE) * INTERLEAVE, np.int64)
    counts[:n] = np.diff(mem_ptr)
    rows = counts.reshape(-1, INTERLEAVE).max(axis=1)  # each group's entries per lane, with padding
    size = int(rows.sum()) * INTERLEAVE
    if size > MAX_PADDING * (mem_ptr[-1] - mem_ptr[0]) + INTERLEAVE:
        return addr, np.ascontiguousarray(mem_ptr[:-1]), 1
    group_start = np.zeros(rows.shape[0], np.int64)
    np.cumsum(rows[:-1] * INTERLEAVE, out=group_start[1:])
    out = np.full(max(size, 1), layout.NO_ACCESS, np.int64)
    start = np.zeros(max(n, 1), np.int64)
    _interleave(mem_ptr, addr, INTERLEAVE, group_start, out, start)
    return out, start, INTERLEAVE


def prepare_memory(trace: Trace, config: SimConfig) -> MemoryProgram:
    """The kernels' view of ``trace``'s addresses under ``config`` (``on`` = 0 without the model)."""
    if not memory.model_enabled(config, trace):
        return _off(trace.n_instrs)
    space, kind, nbytes = memory.instruction_facts(trace)
    addr, start, stride = interleaved_addresses(trace.mem_ptr, trace.mem_addr)
    return MemoryProgram(on=1, space=space, kind=kind, nbytes=nbytes, start=start, stride=stride, addr=addr)


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
