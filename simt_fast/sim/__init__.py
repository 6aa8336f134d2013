"""Timing simulation: replay a trace under a divergence mechanism (docs/DESIGN.md §4–5, docs/core.md).

``simulate(trace, config)`` validates and flattens its inputs in plain Python, runs the private
numba kernel ``core._simulate`` on flat arrays, and wraps the counters into :class:`Stats`.
``simt_fast.sim.reference.simulate`` is the slow, readable model with the same contract.
"""

from __future__ import annotations

import numpy as np

from ..ir.model import OpClass
from ..trace.model import Trace
from ..trace.validate import require_valid
from .config import ConfigError, SimConfig
from .stats import Stats

__all__ = ["simulate", "SimulationError", "prepare"]

MAX_EVENTS = 2_000_000


class SimulationError(RuntimeError):
    """The simulation could not finish (deadlock, no progress, a table overflow); one sentence."""


# latency field per OpClass value (perfect_memory folds the memory classes onto lat_alu)
_LAT_FIELD = {
    OpClass.ALU: "alu",
    OpClass.SFU: "sfu",
    OpClass.MEM_GLOBAL: "global",
    OpClass.MEM_SHARED: "shared",
    OpClass.MEM_LOCAL: "local",
    OpClass.MEM_CONST: "const",
    OpClass.BRANCH: "branch",
    OpClass.BARRIER: "alu",
    OpClass.EXIT: "alu",
    OpClass.OTHER: "alu",
}


def latencies(config: SimConfig) -> np.ndarray:
    """int64[len(OpClass)]: result latency of each op class under ``config``."""
    return np.array([config.latency(_LAT_FIELD[c]) for c in OpClass], np.int64)


def rpo_priority(n_blocks: int, succ_ptr: np.ndarray, succ_idx: np.ndarray) -> np.ndarray:
    """Reverse post-order number of every block from the entry (unreachable blocks last).

    The thread-frontier priority (Diamos et al.): a warp issues its threads at the lowest number.
    """
    from ..ir.graph import reverse_postorder

    prio = np.full(n_blocks, n_blocks, np.int64)
    order = reverse_postorder(n_blocks, np.asarray(succ_ptr, np.int64), np.asarray(succ_idx, np.int64), 0)
    prio[order] = np.arange(len(order))
    return prio


def prepare(trace: Trace, config: SimConfig, syncwarp=None) -> dict:
    """Validate ``trace``/``config`` together and build the kernel's flat arguments.

    ``syncwarp`` (bool per block, optional) marks the blocks whose entry is a compiler-placed
    ``__syncwarp`` reconvergence point — consumed by the ``stackless`` mechanism (issue 5).
    """
    from . import registry

    from .reference.formation import check_config

    mech = registry.get(config.mechanism)
    check_config(config)  # hws only with sps/dwf/en-dwf, majority only with dwf/en-dwf, ...
    W = config.warp_size
    tpc = trace.threads_per_cta
    wpc = -(-tpc // W)
    cta_lim = min(config.max_ctas_per_sm, config.max_warps_per_sm // wpc)
    if cta_lim < 1:
        raise ConfigError(
            f"config field 'max_warps_per_sm' = {config.max_warps_per_sm} cannot hold one CTA of {tpc} threads "
            f"({wpc} warps of {W})"
        )
    if config.mechanism == "stackless" and (syncwarp is None or config.syncwarp_blocks == "ipdom"):
        from .mech.stackless import syncwarp_flags

        syncwarp = syncwarp_flags(trace, config.syncwarp_blocks)  # where the compiler puts syncwarp
    if syncwarp is None:
        syncwarp = np.zeros(trace.n_blocks, np.bool_)
    syncwarp = np.asarray(syncwarp)
    if syncwarp.shape != (trace.n_blocks,) or syncwarp.dtype != np.bool_:
        raise ConfigError(f"syncwarp flags must be a bool array with one entry per block ({trace.n_blocks}); "
                          f"got {syncwarp.dtype} of shape {syncwarp.shape}")
    n_regs = int(max(np.max(trace.dst_reg, initial=-1), np.max(trace.src_reg, initial=-1))) + 1
    src = np.asarray(trace.src_reg, np.int64).reshape(-1, 3)
    return dict(
        mech=mech.code, W=W, sw=config.simd_width, n_sms=config.n_sms, n_sched=config.n_schedulers, cta_lim=cta_lim,
        tpc=tpc, n_ctas=trace.n_ctas, n_regs=n_regs,
        K=W if config.mechanism == "mimd" else 4,  # mimd: one scoreboard slot per lane, never folded
        policy=0 if config.effective_issue_policy == "lrr" else 1,
        max_cycles=config.max_cycles, no_progress=config.no_progress_cycles,
        block_start=np.asarray(trace.block_start, np.int64), succ_ptr=np.asarray(trace.succ_ptr, np.int64),
        succ_idx=np.asarray(trace.succ_idx, np.int64), ipdom=np.asarray(trace.ipdom, np.int64),
        has_bar=np.asarray(trace.has_barrier, np.bool_),
        prio=rpo_priority(trace.n_blocks, trace.succ_ptr, trace.succ_idx),
        op_class=np.asarray(trace.op_class, np.int64), dst_reg=np.asarray(trace.dst_reg, np.int64), src_reg=src,
        lat=latencies(config), path_ptr=np.asarray(trace.path_ptr, np.int64), path=np.asarray(trace.path, np.int32),
        exit_b=trace.n_blocks - 1, syncwarp=syncwarp,
        hws=bool(config.hws), hws_sync=bool(config.hws_sync_sms),
    )


def error_message(config: SimConfig, code: int, cycle: int, warp: int, blk: int, off: int, nxt: int) -> str:
    from . import core

    m = config.mechanism
    if code == core.ERR_DEADLOCK:
        return (f"mechanism {m} deadlocked: no unit can ever issue again at cycle {cycle} (warp {warp}, "
                f"pc block {blk}+{off}); typically a bar.sync that some threads of the CTA cannot reach under {m}")
    if code == core.ERR_NO_PROGRESS:
        return (f"mechanism {m} made no progress for {config.no_progress_cycles} cycles at cycle {cycle} "
                f"(warp {warp}, pc block {blk}+{off})")
    if code == core.ERR_MAX_CYCLES:
        return f"mechanism {m} exceeded max_cycles = {config.max_cycles} at cycle {cycle}"
    if code == core.ERR_TABLE_OVERFLOW:
        return f"mechanism {m}: a warp's split or reconvergence table overflowed at cycle {cycle}"
    if code == core.ERR_BAD_EDGE:
        return f"trace path of thread {warp} steps from block {blk} to block {nxt}, which is not a CFG edge"
    return f"mechanism {m}: simulation failed with code {code}"


def decode_events(ev: np.ndarray, n: int) -> list:
    """Turn the kernel's event rows into dicts: issues and table snapshots (ST/RT rows), in
    cycle-major order (an SM-major run writes each SM's visits in turn; `core._run`)."""
    from . import core

    def u(x) -> int:  # lane masks are int64 in the kernel; lane 63 is the sign bit
        return int(x) & 0xFFFF_FFFF_FFFF_FFFF

    # every row of a visit carries its key, and a stable sort keeps each visit's rows in order
    ev = ev[:n][np.argsort(ev[:n, 11], kind="stable")]
    out = []
    k = 0
    while k < n:
        row = ev[k]
        kind, cycle, warp = int(row[0]), int(row[1]), int(row[2])
        if kind == core.EV_ISSUE:
            out.append(dict(kind="issue", cycle=cycle, warp=warp, pc=(int(row[3]), int(row[4])), mask=u(row[5])))
            k += 1
        elif kind == core.EV_TABLES:
            n_st, n_rt = int(row[3]), int(row[4])
            st = [dict(pc=(int(r[3]), int(r[4])), mask=u(r[5]), rpc=(int(r[6]), int(r[7])), parent=int(r[8]),
                       waiting=bool(r[9])) for r in ev[k + 1: k + 1 + n_st]]
            rt = [dict(id=int(r[3]), pc=(int(r[4]), int(r[5])), rpc=(int(r[6]), int(r[7])), rmask=u(r[8]),
                       pending=u(r[9]), parent=int(r[10])) for r in ev[k + 1 + n_st: k + 1 + n_st + n_rt]]
            out.append(dict(kind="tables", cycle=cycle, warp=warp, st=st, rt=rt))
            k += 1 + n_st + n_rt
        else:  # pragma: no cover - rows are only written by emit()
            raise AssertionError(f"unknown event kind {kind}")
    return out


def simulate(trace: Trace, config: SimConfig, *, events: list | None = None, syncwarp=None,
             sm_major: bool = True) -> Stats:
    """Replay ``trace`` on the machine and mechanism of ``config``; returns :class:`Stats`.

    Pass a list as ``events`` to receive the debug event log (issues and, after every change, the
    changed warp's split/reconvergence tables) — meant for golden tests on small traces.
    ``sm_major=False`` forces the kernels' cycle-major visit order (the same run, slower: for tests
    that compare the two; `core._run`).
    """
    from . import core

    require_valid(trace)  # a damaged trace is one sentence, never numbers (docs/trace.md)
    if config.mechanism in ("dwf", "en-dwf", "tbc"):
        from . import formation  # threads move between warps: the formation kernel (docs/formation.md)

        return formation.simulate(trace, config, events=events, sm_major=sm_major)
    args = prepare(trace, config, syncwarp)
    for order in ((True, False) if sm_major and not args["hws_sync"] else (False,)):
        ev = np.zeros((MAX_EVENTS if events is not None else 0, core.EV_WIDTH), np.int64)
        g = np.zeros(core.G_N, np.int64)
        occ_hist = np.zeros(config.warp_size + 1, np.int64)
        q_hist = np.zeros(config.n_quarters + 1, np.int64)
        core._simulate(
            args["mech"], args["W"], args["sw"], args["n_sms"], args["n_sched"], args["cta_lim"], args["tpc"],
            args["n_ctas"], args["n_regs"], args["K"], args["policy"], args["max_cycles"], args["no_progress"],
            args["block_start"], args["succ_ptr"], args["succ_idx"], args["ipdom"], args["has_bar"], args["prio"],
            args["op_class"], args["dst_reg"], args["src_reg"], args["lat"], args["path_ptr"], args["path"],
            args["exit_b"], args["syncwarp"], ev, occ_hist, q_hist, g, args["hws"], args["hws_sync"], order,
        )
        if not g[core.G_ERR]:
            break
        # SM-major stopped early (ERR_REPLAY, or an error one SM met on its own): the cycle-major
        # replay finds the error the machine meets first, as the reference does
    if g[core.G_ERR]:
        raise SimulationError(error_message(config, int(g[core.G_ERR]), int(g[core.G_ERR_CYCLE]),
                                            int(g[core.G_ERR_WARP]), int(g[core.G_ERR_BLK]), int(g[core.G_ERR_OFF]),
                                            int(g[core.G_ERR_NEXT])))
    if events is not None:
        if g[core.G_EV_OVERFLOW]:
            raise SimulationError(f"the debug event log exceeded {MAX_EVENTS} rows; use a smaller trace with events=")
        events.extend(decode_events(ev, int(g[core.G_NEVENTS])))
    return stats_from_counters(g, occ_hist, q_hist, config)


def stats_from_counters(g, occ_hist, q_hist, config: SimConfig) -> Stats:
    from . import core

    return Stats(
        cycles=int(g[core.G_CYCLES]), warp_insts=int(g[core.G_WARP_INSTS]), thread_insts=int(g[core.G_THREAD_INSTS]),
        idle_cycles=int(g[core.G_IDLE]), max_splits=int(g[core.G_MAX_SPLITS]),
        max_stack_depth=int(g[core.G_MAX_STACK]), max_st=int(g[core.G_MAX_ST]), max_rt=int(g[core.G_MAX_RT]),
        merges=int(g[core.G_MERGES]), lane_conflicts=int(g[core.G_LANE_CONFLICTS]),
        early_reconvergences=int(g[core.G_EARLY]), barrier_wait_cycles=int(g[core.G_BARWAIT]),
        expanded_insts=int(g[core.G_EXPANDED]), occupancy_hist=np.asarray(occ_hist, np.int64).copy(),
        quarter_hist=np.asarray(q_hist, np.int64).copy(),
    ).finalize(config.warp_size)
