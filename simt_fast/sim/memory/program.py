"""What the cycle loops read to run the memory model (docs/memory.md, *In the timing model*).

``prepare_memory(trace, config)`` gives the kernels a trace's addresses (``/mem``: each thread's
entries in its path order) and each instruction's memory facts. A kernel keeps a cursor per thread
(``MemoryRun.cursor``): the thread's next entry is its row ``row0[t >> shift] + cursor[t]``, and
the cursor moves on each time the thread issues a memory instruction.

Row j of a group of ``2**shift`` consecutive threads holds entry j of each of its threads. Most
rows are affine in the lane (``base + lane * stride``: a coalesced access, a broadcast, a strided
one, with some lanes NO_ACCESS for a false guard): such a row is two words, its base and
``stride << 32 | void`` (bit l of ``void``: lane l has NO_ACCESS, or no entry j). A row that is not
(``NOT_AFFINE`` in its second word) keeps its lanes' addresses in ``full``, from its first word on.
So a warp's access usually reads 16 bytes rather than one address per lane: with many SMs in
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

from ...trace.model import Trace
from .. import memory
from ..config import SimConfig
from . import layout
from ._jit import helper, stream

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
GROUP_SHIFT = 5  # 32 threads per group (the lanes' void bits fill the low word of a row's second word)
NOT_AFFINE = -1  # a row's second word when its lanes are in `full` (an affine row's is never -1: a row
# with stride -1 has an address, so not every lane is void)
MAX_PADDING = 2  # groups of 32 only if `full` takes at most this many times the trace's entries
LOW32 = (1 << 32) - 1

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


@stream
def _row_records(mem_ptr, addr, shift, row0, rows):
    """Fill ``rows`` (module doc) with ``full`` offsets left 0; returns how many rows are not affine."""
    n = mem_ptr.shape[0] - 1
    size = 1 << shift
    not_affine = 0
    for g in range(row0.shape[0] - 1):
        for j in range(row0[g + 1] - row0[g]):
            r = row0[g] + j
            void = 0
            first = -1  # the first lane with an address, and that address
            a0 = 0
            stride = 0
            have_stride = False  # set by the second lane with an address
            affine = True
            for lane in range(size):
                t = (g << shift) + lane
                a = addr[mem_ptr[t] + j] if t < n and mem_ptr[t] + j < mem_ptr[t + 1] else layout.NO_ACCESS
                if a == layout.NO_ACCESS:
                    void |= 1 << lane
                elif first < 0:
                    first = lane
                    a0 = a
                elif not have_stride:
                    have_stride = True
                    stride = (a - a0) // (lane - first)
                    affine = affine and a == a0 + (lane - first) * stride
                elif a != a0 + (lane - first) * stride:
                    affine = False
            if affine and -(1 << 31) <= stride < (1 << 31):
                rows[2 * r] = a0 - first * stride if first >= 0 else 0
                rows[2 * r + 1] = (stride << 32) | void
            else:
                rows[2 * r] = 0
                rows[2 * r + 1] = NOT_AFFINE
                not_affine += 1
    return not_affine


@stream
def _fill_full(mem_ptr, addr, shift, row0, rows, full):
    """Copy the lanes of every row that is not affine into ``full`` and point the row at them."""
    n = mem_ptr.shape[0] - 1
    size = 1 << shift
    at = 0
    for g in range(row0.shape[0] - 1):
        for j in range(row0[g + 1] - row0[g]):
            r = row0[g] + j
            if rows[2 * r + 1] != NOT_AFFINE:
                continue
            rows[2 * r] = at
            for lane in range(size):
                t = (g << shift) + lane
                full[at + lane] = addr[mem_ptr[t] + j] if t < n and mem_ptr[t] + j < mem_ptr[t + 1] \
                    else layout.NO_ACCESS
            at += size


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
    n = mem_ptr.shape[0] - 1
    n_entries = int(mem_ptr[-1] - mem_ptr[0])
    for shift in (GROUP_SHIFT, 0):
        size = 1 << shift
        counts = np.zeros(-(-max(n, 1) // size) * size, np.int64)
        counts[:n] = np.diff(mem_ptr)
        row0 = np.zeros(counts.shape[0] // size + 1, np.int64)
        np.cumsum(counts.reshape(-1, size).max(axis=1), out=row0[1:])  # each group's rows: its most entries
        rows = np.empty(2 * max(int(row0[-1]), 1), np.int64)
        not_affine = _row_records(mem_ptr, addr, shift, row0, rows)
        if shift == 0 or not_affine * size <= MAX_PADDING * n_entries + size:
            break
    full = np.empty(max(not_affine * size, 1), np.int64)
    _fill_full(mem_ptr, addr, shift, row0, rows, full)
    return shift, row0, rows, full


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
