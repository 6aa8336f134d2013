"""What the kernels read: a trace and a config, validated together and flattened (plain Python).

``prepare(trace, config)`` returns the machine's parameters (:class:`Params`, plain ints the
kernels read as compile-time-typed scalars) and the kernel program (:class:`Program`, the trace's
tables as flat numpy arrays). Both cycle loops and the reference models start from it.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from ..ir.graph import reverse_postorder
from ..ir.model import OpClass
from ..trace.model import Trace
from .config import ConfigError, SimConfig, check_config, cta_limit
from .mechanisms import BY_NAME
from .syncwarp import syncwarp_flags

# Every field is an int (bools as 0/1), so one compiled kernel serves every run.
Params = namedtuple("Params", [
    "mech",  # mechanism code (sim/mechanisms.py)
    "W",  # warp size
    "sw",  # SIMD width
    "n_q",  # quarters (issue sub-groups of sw lanes) per warp
    "n_sms",
    "n_sched",  # schedulers (SIMD units) per SM
    "cta_lim",  # CTAs resident per SM
    "tpc",  # threads per CTA
    "wpc",  # warps per CTA
    "WS",  # warp slots per SM (cta_lim * wpc)
    "n_ctas",
    "n_regs",  # registers of the kernel (scoreboard rows per thread or warp)
    "policy",  # POLICY_LRR, POLICY_GTO or POLICY_MAJORITY
    "max_cycles",
    "no_progress",  # no_progress_cycles
    "exit_b",  # the virtual exit block
    "hws",  # hybrid warp size (Jin 2012)
    "hws_sync",  # hws_sync_sms
    "hws_squeeze",  # hws: squeeze before issue (sps) / before the pool (dwf, en-dwf)
    "sm_major",  # visit order (sim/visits.py)
    "K",  # core: scoreboard slots per (warp, register)
    "NW",  # formation: warp records per SM
    "km",  # formation: width of an SM's pool view (a power of two > every PC and pool position)
    "max_depth",  # formation (tbc): reconvergence stack entries per CTA
])
POLICY_LRR = 0
POLICY_GTO = 1
POLICY_MAJORITY = 2
# The control hazard: a unit that issues an instruction of this op class issues again only
# lat[BRANCH] = lat_branch cycles later (its next instruction is fetched once the branch resolved)
BRANCH = int(OpClass.BRANCH)
_POLICY = {"lrr": POLICY_LRR, "gto": POLICY_GTO, "majority": POLICY_MAJORITY}

Program = namedtuple("Program", [
    "block_start",  # int64[n_blocks + 1]: instruction range of each block
    "succ_ptr",  # int64[n_blocks + 1]: CSR successors
    "succ_idx",
    "ipdom",  # int64[n_blocks]
    "has_bar",  # bool[n_blocks]: the block ends in bar.sync
    "prio",  # int64[n_blocks]: reverse post-order number (frontier, stackless)
    "syncwarp",  # bool[n_blocks]: a compiler-placed syncwarp at the block's entry (stackless)
    "op_class",  # int64[n_instrs]
    "dst_reg",  # int64[n_instrs]
    "src_reg",  # int64[n_instrs, 3]
    "dep_next",  # bool[n_instrs]: instruction i + 1 reads the register instruction i writes
    "lat",  # int64[len(OpClass)]: result latency per op class
    "path_ptr",  # int64[n_threads + 1]: CSR offsets into path
    "path",  # int32: every thread's block path
])

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
    prio = np.full(n_blocks, n_blocks, np.int64)
    order = reverse_postorder(n_blocks, np.asarray(succ_ptr, np.int64), np.asarray(succ_idx, np.int64), 0)
    prio[order] = np.arange(len(order))
    return prio


def n_registers(trace: Trace) -> int:
    return int(max(np.max(trace.dst_reg, initial=-1), np.max(trace.src_reg, initial=-1))) + 1


def prepare(trace: Trace, config: SimConfig, syncwarp=None) -> tuple:
    """Validate ``trace`` and ``config`` together (one sentence per problem, ConfigError) and
    flatten them: returns ``(Params, Program)``. ``syncwarp`` (bool per block) overrides where the
    stackless mechanism's syncwarp points are (`sim.syncwarp`)."""
    check_config(config)  # hws only with sps/dwf/en-dwf, majority only with dwf/en-dwf, ...
    W = config.warp_size
    tpc = trace.threads_per_cta
    wpc = -(-tpc // W)
    cta_lim = cta_limit(config, tpc)
    if config.mechanism == "stackless" and (syncwarp is None or config.syncwarp_blocks == "ipdom"):
        syncwarp = syncwarp_flags(trace, config.syncwarp_blocks)  # where the compiler puts syncwarp
    if syncwarp is None:
        syncwarp = np.zeros(trace.n_blocks, np.bool_)
    syncwarp = np.asarray(syncwarp)
    if syncwarp.shape != (trace.n_blocks,) or syncwarp.dtype != np.bool_:
        raise ConfigError(f"syncwarp flags must be a bool array with one entry per block ({trace.n_blocks}); "
                          f"got {syncwarp.dtype} of shape {syncwarp.shape}")
    dst = np.asarray(trace.dst_reg, np.int64)
    src = np.asarray(trace.src_reg, np.int64).reshape(-1, 3)
    dep_next = np.zeros(len(dst), np.bool_)
    if len(dst) > 1:
        r = dst[:-1]
        dep_next[:-1] = (r >= 0) & ((src[1:, 0] == r) | (src[1:, 1] == r) | (src[1:, 2] == r))
    params = Params(
        mech=BY_NAME[config.mechanism].code, W=W, sw=config.simd_width, n_q=config.n_quarters, n_sms=config.n_sms,
        n_sched=config.n_schedulers, cta_lim=cta_lim, tpc=tpc, wpc=wpc, WS=cta_lim * wpc, n_ctas=trace.n_ctas,
        n_regs=n_registers(trace), policy=_POLICY[config.effective_issue_policy], max_cycles=config.max_cycles,
        no_progress=config.no_progress_cycles, exit_b=trace.n_blocks - 1, hws=int(config.hws),
        hws_sync=int(config.hws_sync_sms), hws_squeeze=int(config.hws_squeeze), sm_major=0, K=0, NW=0, km=0, max_depth=0,
    )
    program = Program(
        block_start=np.asarray(trace.block_start, np.int64), succ_ptr=np.asarray(trace.succ_ptr, np.int64),
        succ_idx=np.asarray(trace.succ_idx, np.int64), ipdom=np.asarray(trace.ipdom, np.int64),
        has_bar=np.asarray(trace.has_barrier, np.bool_),
        prio=rpo_priority(trace.n_blocks, trace.succ_ptr, trace.succ_idx), syncwarp=syncwarp,
        op_class=np.asarray(trace.op_class, np.int64), dst_reg=dst, src_reg=src, dep_next=dep_next,
        lat=latencies(config), path_ptr=np.asarray(trace.path_ptr, np.int64), path=np.asarray(trace.path, np.int32),
    )
    return params, program
