"""What the cycle loops read to run the memory model (docs/memory.md, *In the timing model*).

``prepare_memory(trace, config)`` gives the kernels a trace's addresses as they are (``/mem``: each
thread's entries in its path order, from ``mem_ptr[t]``) and each instruction's memory facts. A
kernel keeps a cursor per thread (``MemoryRun.cursor``): the thread's next entry is
``addr[mem_ptr[t] + cursor[t]]``, and the cursor moves on each time the thread issues a memory
instruction. ``allocate_memory`` gives each run (each visit order `simulate` tries) a fresh model
state and cursors.

Without the model (``perfect_memory``, a trace without addresses or with the older ``/mem``
layout) ``on`` is 0 and the kernels get None for both tuples: they keep the op classes' fixed
latencies, and numba drops their memory branch before typing (the memory model is not compiled).
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from ...trace.model import Trace
from .. import memory
from ..config import SimConfig

MemoryProgram = namedtuple("MemoryProgram", [
    "on",  # 1: memory instructions go through `memory.access`; 0: fixed latencies
    "space",  # int64[n_instrs]: op_class of a memory instruction, -1 for any other
    "kind",  # int64[n_instrs]: load, store or atomic (`memory.layout.KIND_*`)
    "nbytes",  # int64[n_instrs]: bytes one thread accesses
    "mem_ptr",  # int64[n_threads + 1]: the trace's /mem/mem_ptr (thread t's first entry)
    "addr",  # int64[n accesses]: the trace's /mem/mem_addr (NO_ACCESS = -1)
])

# a run's model state, allocated in Python (the kernels never allocate)
MemoryRun = namedtuple("MemoryRun", [
    "state",  # the tuple `memory.allocate` returns
    "params",  # int64[memory.layout.P_N]
    "counters",  # int64[memory.C_N]
    "lane_addr",  # scratch int64[warp_size]: the issuing warp's lanes' addresses
    "lane_resident",  # scratch int64[warp_size]: their threads' slots on the SM (`memory.access`)
    "owner",  # int64[warp keys]: formation: the warp id a warp record's stall interval belongs to
    "cursor",  # int64[n_threads]: each thread's /mem entries taken so far
])

NOTE_PERFECT = ("memory is treated as perfect coalescing: the trace has no per-instruction addresses (/mem); "
                "memory instructions take their op class's fixed latency")


def _off(n_instrs: int) -> MemoryProgram:
    one = np.zeros(1, np.int64)
    return MemoryProgram(on=0, space=np.full(max(n_instrs, 1), -1, np.int64), kind=one, nbytes=one, mem_ptr=one,
                         addr=one)


def prepare_memory(trace: Trace, config: SimConfig) -> MemoryProgram:
    """The kernels' view of ``trace``'s addresses under ``config`` (``on`` = 0 without the model)."""
    if not memory.model_enabled(config, trace):
        return _off(trace.n_instrs)
    space, kind, nbytes = memory.instruction_facts(trace)
    return MemoryProgram(on=1, space=space, kind=kind, nbytes=nbytes, mem_ptr=np.asarray(trace.mem_ptr, np.int64),
                         addr=memory.int64_addresses(trace.mem_addr))


def note(config: SimConfig, trace: Trace) -> str | None:
    """The one-line note for a run that could model memory but the trace has no addresses."""
    if config.perfect_memory or trace.has_mem:
        return None
    return NOTE_PERFECT


def allocate_memory(config: SimConfig, n_sms: int, n_warp_keys: int, tpc: int, ctas_per_sm: int,
                    n_threads: int) -> MemoryRun:
    """A fresh model state for one run with the model on (``n_warp_keys``: the warps the kernel keys
    stall time by; ``tpc`` threads per CTA, ``ctas_per_sm`` CTAs an SM holds)."""
    state, params = memory.allocate(config, n_sms, n_warp_keys, tpc, ctas_per_sm)
    w = max(config.warp_size, 1)
    return MemoryRun(state=state, params=params, counters=np.zeros(memory.C_N, np.int64),
                     lane_addr=np.zeros(w, np.int64), lane_resident=np.zeros(w, np.int64),
                     owner=np.full(max(n_warp_keys, 1), -1, np.int64), cursor=np.zeros(max(n_threads, 1), np.int64))
