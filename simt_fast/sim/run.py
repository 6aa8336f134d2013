"""``simulate``: one wrapper over both cycle loops (docs/DESIGN.md §4–5, docs/core.md, docs/formation.md).

It validates and flattens its inputs in plain Python (`program.prepare`), allocates each kernel
family's state, runs the family's numba loop on flat arrays (STUMPY's pattern), and wraps the
counters into :class:`Stats`. The same error sentences, the same SM-major retry and the same event
log for every mechanism. ``simt_fast.sim.reference.simulate`` is the slow, readable model with the
same contract.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from .._jit import ensure_compiled
from ..trace.model import Trace
from ..trace.validate import require_valid
from . import core, formation, memory
from .config import SimConfig
from .events import MAX_EVENTS, buffer as event_buffer, decode as decode_events
from .mechanisms import BY_NAME
from .memory.program import allocate_memory, prepare_memory
from .program import prepare
from .stats import (
    G_ERR, G_ERR_BLK, G_ERR_CYCLE, G_ERR_NEXT, G_ERR_OFF, G_ERR_WARP, G_EV_OVERFLOW, G_N, G_NEVENTS, Stats,
)
from .visits import (
    ERR_BAD_EDGE, ERR_DEADLOCK, ERR_MAX_CYCLES, ERR_NO_PROGRESS, ERR_TABLE_OVERFLOW, machine_state,
)

__all__ = ["simulate", "SimulationError"]

FAMILIES = {"core": core, "formation": formation}
# what a kernel family's first compile says on stderr: its mechanisms, and its cold compile CPU time
# measured by bench/bench_compile.py on a 2-core development machine
FAMILY_TEXT = {"core": "the simulator's core kernel (serial, sps, dps, mp, mp-oer, stackless, frontier, mimd)",
               "formation": "the simulator's formation kernel (dwf, en-dwf, tbc)"}
# (family, memory model on): each is a build of its own
COLD_COMPILE_SECONDS = {("core", False): 25, ("core", True): 30, ("formation", False): 40, ("formation", True): 50}

# what a kernel writes besides its state: the counter vector (stats.G_*), the histograms, events
Counters = namedtuple("Counters", ["g", "occ_hist", "q_hist", "ev"])


class SimulationError(RuntimeError):
    """The simulation could not finish (deadlock, no progress, a table overflow); one sentence."""


def simulate(trace: Trace, config: SimConfig, *, events: list | None = None, syncwarp=None,
             sm_major: bool = True) -> Stats:
    """Replay ``trace`` on the machine and mechanism of ``config``; returns :class:`Stats`.

    Pass a list as ``events`` to receive the debug event log (`sim.events`) — meant for golden
    tests on small traces. ``syncwarp`` (bool per block) overrides where the stackless mechanism's
    syncwarp points are. ``sm_major=False`` forces the kernels' cycle-major visit order (the same
    run, slower: for tests that compare the two; `sim.visits`). A memory model with state the SMs
    share (an L2, a DRAM bandwidth limit: `memory.couples_sms`) always runs cycle-major, so that
    requests reach it in the machine's issue order.
    """
    require_valid(trace)  # a damaged trace is one sentence, never numbers (docs/trace.md)
    params, program = prepare(trace, config, syncwarp)
    family = BY_NAME[config.mechanism].family
    kernel = FAMILIES[family]
    mp = prepare_memory(trace, config)
    # SM-major first; when it stops early (ERR_REPLAY, or an error one SM met on its own), the
    # cycle-major replay finds the error the machine meets first, as the reference does
    for order in ((1, 0) if sm_major and not params.hws_sync and not memory.couples_sms(config, trace) else (0,)):
        p, state = kernel.allocate(params._replace(sm_major=order), program)
        # stall time is keyed by warp: the core's global warp ids, the formation kernel's records
        mr = allocate_memory(config, p.n_sms, max(p.n_ctas * p.wpc, p.n_sms * p.NW), p.tpc, p.cta_lim,
                             trace.n_threads, int(trace.mem_ptr[-1])) \
            if mp.on else None
        out = Counters(g=np.zeros(G_N + p.n_sms, np.int64), occ_hist=np.zeros(p.W + 1, np.int64),
                       q_hist=np.zeros(p.n_q + 1, np.int64), ev=event_buffer(events is not None))
        out.g[G_ERR_WARP] = -1  # (no warp to blame unless the kernel names one)
        # without the model the loops get None: numba then drops their memory branch before typing, so
        # a run without addresses never compiles the memory model (each case is a build of its own)
        args = (p, program, machine_state(p), state, out, mp if mp.on else None, mr)
        ensure_compiled(kernel.run, FAMILY_TEXT[family] + (" with the memory model" if mp.on else ""),
                        COLD_COMPILE_SECONDS[family, bool(mp.on)], args)
        kernel.run(*args)
        if not out.g[G_ERR]:
            break
    g = out.g
    if g[G_ERR]:
        raise SimulationError(error_message(config, g))
    if events is not None:
        if g[G_EV_OVERFLOW]:
            raise SimulationError(f"the debug event log exceeded {MAX_EVENTS} rows; use a smaller trace with events=")
        events.extend(decode_events(out.ev, int(g[G_NEVENTS]), family))
    stats = Stats.from_counters(g, out.occ_hist, out.q_hist, config.warp_size)
    if mp.on:
        for name, value in memory.stats_from_counters(mr.counters).items():
            setattr(stats, name, value)
    return stats.add_launch_latency(config.kernel_launch_latency, config.warp_size)


def error_message(config: SimConfig, g) -> str:
    """The one sentence for a run that ended with an error (the G_ERR* counters)."""
    m = config.mechanism
    code, cycle, warp = int(g[G_ERR]), int(g[G_ERR_CYCLE]), int(g[G_ERR_WARP])
    where = f" (warp {warp}, pc block {int(g[G_ERR_BLK])}+{int(g[G_ERR_OFF])})" if warp >= 0 else ""
    if code == ERR_DEADLOCK:
        return (f"mechanism {m} deadlocked: nothing can ever issue again at cycle {cycle}{where}; typically a "
                f"bar.sync that some threads of the CTA cannot reach under {m}")
    if code == ERR_NO_PROGRESS:
        return f"mechanism {m} made no progress for {config.no_progress_cycles} cycles at cycle {cycle}{where}"
    if code == ERR_MAX_CYCLES:
        return f"mechanism {m} exceeded max_cycles = {config.max_cycles} at cycle {cycle}"
    if code == ERR_TABLE_OVERFLOW:
        return f"mechanism {m}: a reconvergence table overflowed at cycle {cycle}{where}"
    if code == ERR_BAD_EDGE:
        return (f"trace path of thread {warp} steps from block {int(g[G_ERR_BLK])} to block {int(g[G_ERR_NEXT])}, "
                f"which is not a CFG edge")
    return f"mechanism {m}: simulation failed with code {code}"

