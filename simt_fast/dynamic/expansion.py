"""Dynamic code expansion under IPDOM reconvergence (Wu et al. 2012 §4.2, Table 3 and Fig. 15).

Three numbers per trace, all computed from the same per-thread block paths:

* ``upper_limit`` -- Wu et al. 2012 §4.2.1's *upper limit of dynamic code expansion*: warp instructions
  issued while a warp is diverged at an expansion-prone branch and has not yet reached that branch's
  immediate post-dominator (the region "between an unstructured branch and its IPDOM"). It counts
  the first executions of the region's blocks too, which is why it is an upper limit.
* ``expanded_insts`` -- the exact count the timing core measures under ``sps``
  (:func:`simt_fast.sim.simulate`): re-executions of blocks that other threads of the still-diverged
  warp already ran.
* STRUCT vs IPDOM (Fig. 15): :func:`struct_vs_ipdom` structurizes a workload's kernel, prints it as
  PTX, runs it through the emulator with the original's inputs (outputs must be identical) and
  simulates both traces under ``sps``.

An *expansion-prone* branch (``expansion_branches``) is a block with two or more successors whose
successor regions -- the blocks reachable from each successor without passing the branch's IPDOM --
overlap: different paths out of the branch meet in a common block before the reconvergence point,
which is exactly the condition Wu et al. 2012 §2.2 gives for dynamic expansion, and the blocks Forward Copy
duplicates (Fig. 11). Structured branches (if/else, loop tests) never qualify.

The IPDOM replay (:func:`ipdom_replay`, numba kernel ``_replay``; plain-Python reference
:func:`ipdom_replay_reference`) walks every warp (``warp_size`` consecutive threads of a CTA) through
a single-path reconvergence stack. Which (block, thread mask) groups a warp issues under IPDOM does
not depend on timing, so the per-block issue counts it returns equal the ``sps`` timing core's
``warp_insts`` exactly (tested) and are what the scalarization statistics
(:mod:`simt_fast.dynamic.scalarize`) are built on.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .._jit import jit
from ..emu import launch
from ..ir import parse_ptx
from ..ir.control_tree import build_control_tree
from ..ir.ptx_printer import print_module
from ..ir.structurize import structurize_module
from ..sim import simulate
from ..sim.config import SimConfig
from ..trace.model import Trace, TraceError
from ..workloads import get

__all__ = ["ReplayCounts", "ipdom_replay", "ipdom_replay_reference", "expansion_branches", "expansion",
           "ExpansionResult", "struct_vs_ipdom"]


# ------------------------------------------------------------------------------------------------
# static: which branches can expand dynamically
# ------------------------------------------------------------------------------------------------


def _succ_lists(trace: Trace) -> list:
    sp, si = np.asarray(trace.succ_ptr), np.asarray(trace.succ_idx)
    return [list(map(int, si[sp[b]:sp[b + 1]])) for b in range(trace.n_blocks)]


def _region(succs: list, start: int, stop: int) -> set:
    """Blocks reachable from ``start`` without passing ``stop`` (``start`` included unless == stop)."""
    seen = set()
    todo = [start]
    while todo:
        b = todo.pop()
        if b == stop or b in seen:
            continue
        seen.add(b)
        todo.extend(succs[b])
    return seen


def expansion_branches(trace: Trace) -> np.ndarray:
    """bool[n_blocks]: branch blocks whose successor regions overlap before the IPDOM (see module doc)."""
    succs = _succ_lists(trace)
    flags = np.zeros(trace.n_blocks, np.bool_)
    for b in range(trace.n_blocks):
        ss = sorted(set(succs[b]))
        if len(ss) < 2:
            continue
        stop = int(trace.ipdom[b])
        regions = [_region(succs, s, stop) for s in ss]
        seen: set = set()
        for r in regions:
            if seen & r:
                flags[b] = True
                break
            seen |= r
    return flags


def region_blocks(trace: Trace, b: int) -> list:
    """The blocks between branch ``b`` and its IPDOM (the region whose issues the upper limit counts)."""
    succs = _succ_lists(trace)
    stop = int(trace.ipdom[b])
    out: set = set()
    for s in succs[b]:
        out |= _region(succs, s, stop)
    return sorted(out)


# ------------------------------------------------------------------------------------------------
# the IPDOM replay
# ------------------------------------------------------------------------------------------------


@dataclass
class ReplayCounts:
    """Per-block issue counts of one trace replayed under IPDOM with warps of ``warp_size`` threads.

    *Full* issues run with every live (not yet exited) thread of the warp; *partial* issues run a
    strict subset (the warp is diverged). ``*_threads`` sum the active threads over those issues.
    ``expansion_issues[b]``: issues of block ``b`` made inside the region of an expansion-prone branch
    at which the warp diverged (Wu et al. 2012's upper limit counts ``block size`` instructions per issue).
    """

    warp_size: int
    full_issues: np.ndarray  # int64[n_blocks]
    partial_issues: np.ndarray
    full_threads: np.ndarray
    partial_threads: np.ndarray
    expansion_issues: np.ndarray
    max_depth: int = 0
    block_sizes: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))

    @property
    def issues(self) -> np.ndarray:
        return self.full_issues + self.partial_issues

    @property
    def threads(self) -> np.ndarray:
        return self.full_threads + self.partial_threads

    @property
    def warp_insts(self) -> int:
        return int((self.issues * self.block_sizes).sum())

    @property
    def thread_insts(self) -> int:
        return int((self.threads * self.block_sizes).sum())

    @property
    def upper_limit(self) -> int:
        return int((self.expansion_issues * self.block_sizes).sum())


@jit
def _replay(W, tpc, n_ctas, succ_ptr, succ_idx, ipdom, flag, path_ptr, path, exit_b,
            full_i, part_i, full_t, part_t, exp_i, out):
    """Per warp, a single-path IPDOM stack (Fung et al.; Wu et al. 2012 §2.2): on divergence the top entry
    becomes the reconvergence entry at the branch's IPDOM and one entry per successor group is pushed;
    an entry whose PC reaches its reconvergence PC pops. Fills the per-block counters."""
    wpc = (tpc + W - 1) // W
    cap = 2 * W + 4  # each divergence strictly shrinks the top mask: <= W pending paths + W reconv entries
    s_blk = np.zeros(cap, np.int64)
    s_mask = np.zeros(cap, np.int64)
    s_rpc = np.zeros(cap, np.int64)
    s_flag = np.zeros(cap, np.int64)
    pos = np.zeros(64, np.int64)
    nxt = np.zeros(64, np.int64)
    max_succ = 1
    for b in range(succ_ptr.shape[0] - 1):
        if succ_ptr[b + 1] - succ_ptr[b] > max_succ:
            max_succ = succ_ptr[b + 1] - succ_ptr[b]
    gblk = np.zeros(max_succ, np.int64)
    gmask = np.zeros(max_succ, np.int64)
    max_depth = 0
    for cta in range(n_ctas):
        for wi in range(wpc):
            tbase = cta * tpc + wi * W
            lanes = min(W, tpc - wi * W)
            live = np.int64(0)
            for lane in range(lanes):
                pos[lane] = path_ptr[tbase + lane]
                if path[pos[lane]] != exit_b:
                    live |= np.int64(1) << lane
            if live == 0:
                continue
            s_blk[0] = 0  # every warp starts converged at the entry block
            s_mask[0] = live
            s_rpc[0] = -1
            s_flag[0] = 0
            sp = 1
            n_flag = 0  # flagged (expansion-prone) reconvergence entries on the stack
            while sp > 0:
                top = sp - 1
                m = s_mask[top] & live
                b = s_blk[top]
                if m == 0 or b == s_rpc[top]:
                    # reached the reconvergence point (or every thread of the entry exited): pop
                    n_flag -= s_flag[top]
                    sp -= 1
                    continue
                s_mask[top] = m
                # ---- issue block b with mask m -------------------------------------------------
                cnt = 0
                for lane in range(lanes):
                    if (m >> lane) & 1:
                        cnt += 1
                if m == live:
                    full_i[b] += 1
                    full_t[b] += cnt
                else:
                    part_i[b] += 1
                    part_t[b] += cnt
                if n_flag - s_flag[top] > 0 and m != live:
                    # a diverged warp inside the region of an expansion-prone branch (Wu et al. 2012 §4.2.1)
                    exp_i[b] += 1
                # ---- move the issued threads along their paths ----------------------------------
                for lane in range(lanes):
                    if (m >> lane) & 1:
                        pos[lane] += 1
                        nxt[lane] = path[pos[lane]]
                ng = 0
                seen = np.int64(0)
                for e in range(succ_ptr[b], succ_ptr[b + 1]):
                    s = succ_idx[e]
                    gm = np.int64(0)
                    for lane in range(lanes):
                        if (m >> lane) & 1 and nxt[lane] == s:
                            gm |= np.int64(1) << lane
                    if gm == 0 or (seen & gm) != 0:
                        continue
                    seen |= gm
                    if s == exit_b:
                        live &= ~gm
                    else:
                        gblk[ng] = s
                        gmask[ng] = gm
                        ng += 1
                if seen != m:
                    out[0] = -1  # a path step that is not a CFG edge
                    out[1] = tbase
                    out[2] = b
                    return
                if ng == 0:
                    n_flag -= s_flag[top]
                    sp -= 1
                elif ng == 1:
                    s_blk[top] = gblk[0]
                    s_mask[top] = gmask[0]
                else:
                    if sp + ng > cap:
                        out[0] = -2
                        return
                    # the top entry becomes the reconvergence entry at the branch's IPDOM, flagged when
                    # the branch is expansion-prone (its region's issues count toward the upper limit)
                    r = ipdom[b]
                    n_flag -= s_flag[top]
                    s_blk[top] = r
                    s_mask[top] = m
                    s_flag[top] = flag[b]
                    n_flag += flag[b]
                    # push the paths in CFG successor order: the last successor is on top and runs
                    # first, as in the sps timing core (docs/core.md) -- which paths run before which
                    # decides whether threads have already exited when the others issue
                    for k in range(ng):
                        s_blk[sp] = gblk[k]
                        s_mask[sp] = gmask[k]
                        s_rpc[sp] = r
                        s_flag[sp] = 0
                        sp += 1
                    if sp > max_depth:
                        max_depth = sp
    out[0] = 0
    out[3] = max_depth


def _check(trace: Trace, warp_size: int) -> None:
    if not (1 <= warp_size <= 64):
        raise ValueError(f"warp_size must be between 1 and 64 (got {warp_size})")
    if trace.n_threads != trace.n_ctas * trace.threads_per_cta:
        raise TraceError(f"trace '{trace.kernel}': {trace.n_threads} thread paths but grid x block = "
                         f"{trace.n_ctas * trace.threads_per_cta}")


def ipdom_replay(trace: Trace, warp_size: int, flags: np.ndarray | None = None) -> ReplayCounts:
    """Replay ``trace`` under IPDOM with warps of ``warp_size``; ``flags`` marks expansion-prone
    branches (default :func:`expansion_branches`)."""
    _check(trace, warp_size)
    nb = trace.n_blocks
    flags = expansion_branches(trace) if flags is None else np.asarray(flags, np.bool_)
    arrays = [np.zeros(nb, np.int64) for _ in range(5)]
    out = np.zeros(4, np.int64)
    ipdom = np.asarray(trace.ipdom, np.int64).copy()
    ipdom[ipdom < 0] = nb - 1
    _replay(int(warp_size), trace.threads_per_cta, trace.n_ctas, np.asarray(trace.succ_ptr, np.int64),
            np.asarray(trace.succ_idx, np.int64), ipdom, flags.astype(np.int64),
            np.asarray(trace.path_ptr, np.int64), np.asarray(trace.path, np.int64), nb - 1, *arrays, out)
    if out[0] == -2:  # pragma: no cover - the bound in _replay is a proof, this is its guard
        raise RuntimeError("IPDOM replay: reconvergence stack overflow")
    if out[0] < 0:
        raise TraceError(f"trace '{trace.kernel}': a thread of the warp starting at thread {int(out[1])} leaves "
                         f"block {int(out[2])} along a step that is not a CFG edge")
    return ReplayCounts(int(warp_size), *arrays, max_depth=int(out[3]), block_sizes=trace.block_sizes())


def ipdom_replay_reference(trace: Trace, warp_size: int, flags=None) -> ReplayCounts:
    """Plain-Python model of :func:`ipdom_replay` (lists of dict stack entries, sets of threads)."""
    _check(trace, warp_size)
    nb = trace.n_blocks
    exit_b = nb - 1
    flags = expansion_branches(trace) if flags is None else np.asarray(flags, bool)
    succs = _succ_lists(trace)
    ipdom = [int(x) if x >= 0 else exit_b for x in trace.ipdom]
    res = ReplayCounts(warp_size, *[np.zeros(nb, np.int64) for _ in range(5)], block_sizes=trace.block_sizes())
    tpc = trace.threads_per_cta
    for cta in range(trace.n_ctas):
        for w0 in range(0, tpc, warp_size):
            threads = range(cta * tpc + w0, cta * tpc + min(tpc, w0 + warp_size))
            paths = {t: list(map(int, trace.thread_path(t))) for t in threads}
            pos = {t: 0 for t in threads}
            live = {t for t in threads if paths[t][0] != exit_b}
            stack = [dict(pc=0, threads=set(live), rpc=-1, flagged=False)] if live else []
            while stack:
                top = stack[-1]
                top["threads"] &= live
                if not top["threads"] or top["pc"] == top["rpc"]:
                    stack.pop()
                    continue
                b, ts = top["pc"], top["threads"]
                if ts == live:
                    res.full_issues[b] += 1
                    res.full_threads[b] += len(ts)
                else:
                    res.partial_issues[b] += 1
                    res.partial_threads[b] += len(ts)
                if ts != live and any(e["flagged"] for e in stack[:-1]):
                    res.expansion_issues[b] += 1
                groups = {}
                for t in sorted(ts):
                    pos[t] += 1
                    groups.setdefault(paths[t][pos[t]], set()).add(t)
                for s in groups:
                    if s not in succs[b]:
                        raise TraceError(f"trace '{trace.kernel}': thread {s} steps along a non-edge")
                live -= groups.pop(exit_b, set())
                order = [s for s in dict.fromkeys(succs[b]) if s in groups]
                if not order:
                    stack.pop()
                elif len(order) == 1:
                    top["pc"], top["threads"] = order[0], groups[order[0]]
                else:
                    r = ipdom[b]
                    top["pc"], top["threads"], top["flagged"] = r, set(ts), bool(flags[b])
                    for s in order:
                        stack.append(dict(pc=s, threads=groups[s], rpc=r, flagged=False))
                    res.max_depth = max(res.max_depth, len(stack))
    return res


# ------------------------------------------------------------------------------------------------
# Table 3: the upper limit next to the timing core's exact count
# ------------------------------------------------------------------------------------------------


@dataclass
class ExpansionResult:
    kernel: str
    warp_size: int
    expansion_branches: list  # block labels
    region_blocks: list  # labels of blocks between those branches and their IPDOMs
    upper_limit: int  # Wu et al. 2012 Table 3 "dynamic code expansion area" (warp instructions)
    warp_insts: int  # IPDOM warp instructions of the whole kernel (the Table 3 denominator)
    expanded_insts: int  # exact, from the sps timing core
    thread_insts: int
    interacting_edges: list = field(default_factory=list)  # control tree (Wu et al. 2012 §2): "src->dst (kind)"

    @property
    def upper_limit_pct(self) -> float:
        return 100.0 * self.upper_limit / self.warp_insts if self.warp_insts else 0.0

    @property
    def expanded_pct(self) -> float:
        return 100.0 * self.expanded_insts / self.warp_insts if self.warp_insts else 0.0

    def to_dict(self) -> dict:
        return {"kernel": self.kernel, "warp_size": self.warp_size, "expansion_branches": self.expansion_branches,
                "region_blocks": self.region_blocks, "upper_limit": self.upper_limit,
                "upper_limit_pct": round(self.upper_limit_pct, 3), "expanded_insts": self.expanded_insts,
                "expanded_pct": round(self.expanded_pct, 3), "warp_insts": self.warp_insts,
                "thread_insts": self.thread_insts, "interacting_edges": self.interacting_edges}


def _label(trace: Trace, b: int) -> str:
    return (trace.label[b] if b < len(trace.label) else "") or f"B{b}"


def expansion(trace: Trace, warp_size: int = 32, config=None) -> ExpansionResult:
    """Wu et al. 2012 Table 3 for one trace: the upper limit and the sps timing core's exact expansion."""
    flags = expansion_branches(trace)
    counts = ipdom_replay(trace, warp_size, flags)
    if config is None:  # enough warp slots for one CTA of narrow warps (the counts ignore occupancy)
        config = SimConfig(max_warps_per_sm=max(48, -(-trace.threads_per_cta // warp_size)))
    stats = simulate(trace, config.replace(mechanism="sps", warp_size=warp_size))
    regions: set = set()
    for b in np.flatnonzero(flags):
        regions |= set(region_blocks(trace, int(b)))
    # the control tree's interacting edges (what makes the CFG unstructured), reported for cross-reference
    tree = build_control_tree(trace.n_blocks, _succ_lists(trace), 0, trace.n_blocks - 1)
    edges = [f"{_label(trace, int(u))}->{_label(trace, int(v))} ({k})" for u, v, k in tree.interacting_edges]
    return ExpansionResult(
        kernel=trace.kernel, warp_size=warp_size,
        expansion_branches=[_label(trace, int(b)) for b in np.flatnonzero(flags)],
        region_blocks=[_label(trace, b) for b in sorted(regions)], upper_limit=counts.upper_limit,
        warp_insts=counts.warp_insts, expanded_insts=int(stats.expanded_insts), thread_insts=counts.thread_insts,
        interacting_edges=edges)


# ------------------------------------------------------------------------------------------------
# Fig. 15: STRUCT vs IPDOM
# ------------------------------------------------------------------------------------------------


def struct_vs_ipdom(workload: str, size: str = "tiny", seed: int = 0, config=None, keep_traces: bool = False) -> dict:
    """Structurize ``workload``'s kernel, run both versions on the same inputs (outputs must be
    identical: the transformation preserves semantics), and simulate both traces under sps.
    ``keep_traces`` adds ``"traces": {"IPDOM": Trace, "STRUCT": Trace}`` to the result."""

    wl = get(workload)
    module = parse_ptx(wl.ptx_path)
    new_module, total = structurize_module(module)
    struct_ptx = print_module(new_module)
    cfg = (config or SimConfig()).replace(mechanism="sps")
    rows = {}
    outputs = {}
    traces = {}
    for name, src in (("IPDOM", module), ("STRUCT", parse_ptx(struct_ptx))):
        spec = wl.launch_spec(size, seed=seed)
        run = launch(src, wl.kernel, spec.grid, spec.block, spec.args, spec.shared_bytes)
        wl.check(spec)
        outputs[name] = [np.asarray(spec.args[i]).copy() for i in spec.outputs]
        st = simulate(run.trace, cfg)
        traces[name] = run.trace
        rows[name] = {"blocks": run.trace.n_blocks - 1, "static_insts": run.trace.n_instrs,
                      "thread_insts": int(st.thread_insts), "warp_insts": int(st.warp_insts),
                      "simd_util": float(st.simd_util), "cycles": int(st.cycles),
                      "expanded_insts": int(st.expanded_insts)}
    for a, b in zip(outputs["IPDOM"], outputs["STRUCT"]):
        if a.shape != b.shape or not np.array_equal(a.view(np.uint8), b.view(np.uint8)):
            raise AssertionError(f"{workload}: the structurized kernel's outputs differ from the original's")
    kern_stats = [s.to_dict() for s in total.per_function.values()]
    out = {"workload": workload, "size": size, "IPDOM": rows["IPDOM"], "STRUCT": rows["STRUCT"],
           "outputs_identical": True, "structurize": total.to_dict(), "functions": kern_stats}
    if keep_traces:
        out["traces"] = traces
    return out
