"""What the reference models read from a trace and a config, derived here in plain Python.

The kernels get their parameters from ``sim/program.py`` (``prepare``) and ``sim/syncwarp.py``; the
references derive the same rules again, from the documented definitions (docs/core.md, *Machine
model*; docs/analyses_dynamic.md for syncwarp placement), without calling that code. So a mistake in
the kernels' preparation — a latency mapped to the wrong op class, the wrong reverse post-order, a
syncwarp in the wrong block, a refused or accepted config — makes the differential tests fail
instead of being shared by both sides.
"""

from __future__ import annotations

import numpy as np

from ...ir.model import OpClass
from ..config import ConfigError

# The mechanisms whose papers define the hybrid warp size (Jin 2012: PDOM&HWS and en-DWF&HWS; DWF&HWS)
# and the ones DWF's majority scheduling belongs to (Fung et al. 2007, Jin 2012).
HWS_MECHANISMS = ("sps", "dwf", "en-dwf")
MAJORITY_MECHANISMS = ("dwf", "en-dwf")
FORMATION_MECHANISMS = ("dwf", "en-dwf", "tbc")


def check(config) -> None:
    """Refuse the combinations no mechanism defines (ConfigError; the wording is the kernels' business)."""
    m = config.mechanism
    if config.hws and m not in HWS_MECHANISMS:
        raise ConfigError(f"reference: hws is defined for {HWS_MECHANISMS}, not {m}")
    if config.hws_sync_sms and not config.hws:
        raise ConfigError("reference: hws_sync_sms needs hws")
    if not config.hws_squeeze and not config.hws:
        raise ConfigError("reference: hws_squeeze = false needs hws")
    moves_in_lane = m == "en-dwf" or (m in FORMATION_MECHANISMS and config.hws)
    if moves_in_lane and config.simd_width < config.warp_size and config.warp_size % config.simd_width:
        raise ConfigError(f"reference: {m} moves threads between the quarters of a lane: simd_width must divide "
                          "warp_size")
    if issue_policy(config) == "majority" and m not in MAJORITY_MECHANISMS:
        raise ConfigError(f"reference: majority scheduling belongs to {MAJORITY_MECHANISMS}, not {m}")


def issue_policy(config) -> str:
    """``auto`` is each mechanism's paper policy: majority for DWF and en-DWF, loose round robin else."""
    if config.issue_policy != "auto":
        return config.issue_policy
    return "majority" if config.mechanism in MAJORITY_MECHANISMS else "lrr"


def quarters(config) -> int:
    """SIMD cycles of a full warp instruction: ceil(warp_size / simd_width)."""
    return -(-config.warp_size // config.simd_width)


def latency_by_class(config) -> dict:
    """Result latency of each op class: its own ``lat_<class>`` field; barriers, exits and other
    instructions take ``lat_alu``; ``perfect_memory`` gives every memory class ``lat_alu``."""
    memory = {
        OpClass.MEM_GLOBAL: config.lat_global,
        OpClass.MEM_SHARED: config.lat_shared,
        OpClass.MEM_LOCAL: config.lat_local,
        OpClass.MEM_CONST: config.lat_const,
    }
    if config.perfect_memory:
        memory = {c: config.lat_alu for c in memory}
    return {
        OpClass.ALU: config.lat_alu,
        OpClass.SFU: config.lat_sfu,
        **memory,
        OpClass.BRANCH: config.lat_branch,
        OpClass.BARRIER: config.lat_alu,
        OpClass.EXIT: config.lat_alu,
        OpClass.OTHER: config.lat_alu,
    }


def instructions(trace, config) -> tuple:
    """Per instruction: op class, destination register (-1: none), source registers, result latency,
    and the cycles after its issue before its unit issues again (`resume_after`)."""
    op_class = [int(x) for x in trace.op_class]
    dst = [int(x) for x in trace.dst_reg]
    src = [[int(r) for r in row if r >= 0] for row in np.asarray(trace.src_reg).reshape(-1, 3)]
    latency = latency_by_class(config)
    return op_class, dst, src, [latency[c] for c in op_class], [resume_after(config, c) for c in op_class]


def resume_after(config, op_class: int) -> int:
    """Cycles after its issue before a unit may issue again: 1, or ``lat_branch`` after a branch (the
    control hazard: the next instruction is fetched only once the branch has resolved)."""
    return config.lat_branch if op_class == OpClass.BRANCH else 1


def ctas_per_sm(config, threads_per_cta: int) -> int:
    """``max_ctas_per_sm``, fewer when that many CTAs' warps exceed ``max_warps_per_sm``."""
    warps = -(-threads_per_cta // config.warp_size)
    n = min(config.max_ctas_per_sm, config.max_warps_per_sm // warps)
    if n < 1:
        raise ConfigError(f"reference: one CTA of {warps} warps does not fit in max_warps_per_sm")
    return n


def successors(trace) -> list:
    """Each block's CFG successors, in the trace's order."""
    return [[int(s) for s in trace.succ_idx[trace.succ_ptr[b]:trace.succ_ptr[b + 1]]] for b in range(trace.n_blocks)]


def rpo_priority(succ: list) -> list:
    """Each block's position in the reverse post-order of a depth-first walk from block 0 that takes
    successors in order (unreachable blocks: after every reachable one). The thread-frontier priority."""
    n = len(succ)
    visited = [False] * n
    finished = []

    def visit(b):  # (recursion: the reference runs on small traces)
        visited[b] = True
        for s in succ[b]:
            if not visited[s]:
                visit(s)
        finished.append(b)

    visit(0)
    prio = [n] * n
    for rank, b in enumerate(reversed(finished)):
        prio[b] = rank
    return prio


def syncwarp_blocks(trace, config, override=None) -> list:
    """bool per block: a syncwarp at the block's entry (the stackless mechanism; docs/analyses_dynamic.md).

    ``ipdom`` mode: the immediate post-dominator of every block with two different successors (not the
    virtual exit). ``auto``: the caller's flags, else the trace's ``syncwarp`` attribute (block ids or
    labels), else the structure-only placement (:func:`structural_syncwarp`). Other mechanisms: none.
    """
    n = trace.n_blocks
    if config.mechanism != "stackless":
        flags = [False] * n if override is None else _checked(override, n)
        return flags
    if config.syncwarp_blocks == "ipdom":
        flags = [False] * n
        for b, succ in enumerate(successors(trace)):
            r = int(trace.ipdom[b])
            if len(set(succ)) > 1 and 0 <= r < n - 1:
                flags[r] = True
        return flags
    if override is not None:
        return _checked(override, n)
    given = getattr(trace, "attrs", {}).get("syncwarp")
    if given is not None:
        flags = [False] * n
        for b in np.atleast_1d(given):
            flags[trace.label.index(b) if isinstance(b, str) else int(b)] = True
        return flags
    return structural_syncwarp(trace)


def _checked(flags, n):
    arr = np.asarray(flags)
    if arr.shape != (n,) or arr.dtype != np.bool_:
        raise ConfigError(f"reference: syncwarp flags must be {n} bools")
    return [bool(x) for x in arr]


def structural_syncwarp(trace) -> list:
    """Lee et al. 2013's placement with structure-only convergence: every branch with two different
    successors may diverge, except one that exits early (§3.4: a successor is the exit or a lone
    unpredicated exit instruction, or it controls another block that leaves the kernel); a block is
    convergent unless it is (iteratively) control dependent on a diverging branch, or the barrier
    protects it (it ends in bar.sync, or is the only successor of such a block and has no other
    predecessor). A syncwarp goes in every convergent block with a non-convergent predecessor."""
    n = trace.n_blocks
    exit_b = n - 1
    succ = successors(trace)
    preds = [[p for p in range(n) if b in succ[p]] for b in range(n)]
    ipdom = [int(x) for x in trace.ipdom]

    def postdominators(b):
        """b and every block that post-dominates it (the ipdom chain)."""
        chain = []
        while 0 <= b < n and b not in chain:
            chain.append(b)
            b = ipdom[b]
        return chain

    # Y is control dependent on X when Y post-dominates a successor of X but not X strictly
    controllers = [set() for _ in range(n)]
    for x in range(n):
        strictly_after_x = set(postdominators(ipdom[x])) if ipdom[x] >= 0 else set()
        for s in succ[x]:
            for y in postdominators(s):
                if y not in strictly_after_x:
                    controllers[y].add(x)
    iterated = []
    for y in range(n):
        reach, todo = set(), list(controllers[y])
        while todo:
            x = todo.pop()
            if x not in reach:
                reach.add(x)
                todo.extend(controllers[x])
        iterated.append(reach)

    starts = [int(x) for x in trace.block_start]
    src = np.asarray(trace.src_reg).reshape(-1, 3)

    def lone_exit(b):
        return starts[b + 1] - starts[b] == 1 and trace.op_class[starts[b]] == OpClass.EXIT and src[starts[b], 0] < 0

    def exits_early(b):
        if any(s == exit_b or lone_exit(s) for s in succ[b]):
            return True
        return any(e != b and b in controllers[e] for e in preds[exit_b])

    diverging = [len(set(succ[b])) > 1 and not exits_early(b) for b in range(n)]
    protected = [bool(x) for x in trace.has_barrier]
    for b in range(n):
        if trace.has_barrier[b] and len(succ[b]) == 1 and succ[b][0] != exit_b and preds[succ[b][0]] == [b]:
            protected[succ[b][0]] = True
    convergent = [b == exit_b or protected[b] or not any(diverging[x] for x in iterated[b]) for b in range(n)]
    return [b != exit_b and convergent[b] and any(not convergent[p] for p in preds[b]) for b in range(n)]
