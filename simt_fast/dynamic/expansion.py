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

The IPDOM replay (:func:`ipdom_replay`; plain-Python reference :func:`ipdom_replay_reference`)
counts, per block, the issue records of :mod:`simt_fast.trace.ipdom_walk`, which walks every warp
(``warp_size`` consecutive threads of a CTA) through a single-path reconvergence stack. Which (block, thread mask) groups a warp issues under IPDOM does
not depend on timing, so the per-block issue counts it returns equal the ``sps`` timing core's
``warp_insts`` exactly (tested) and are what the scalarization statistics
(:mod:`simt_fast.dynamic.scalarize`) are built on.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..emu import launch
from ..ir import parse_ptx
from ..ir.control_tree import build_control_tree
from ..ir.ptx_printer import print_module
from ..ir.structurize import structurize_module
from ..sim import simulate
from ..sim.config import SimConfig
from ..trace.ipdom_walk import cta_chunks, issue_stream, issue_stream_reference
from ..trace.model import Trace
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


def _counts(stream_parts, trace: Trace, warp_size: int) -> ReplayCounts:
    """Per-block counters of a trace's issue records (:mod:`simt_fast.trace.ipdom_walk`)."""
    nb = trace.n_blocks
    res = ReplayCounts(warp_size, *[np.zeros(nb, np.int64) for _ in range(5)], block_sizes=trace.block_sizes())
    for s in stream_parts:
        threads = np.bitwise_count(s.mask).astype(np.int64)
        part = ~s.full
        res.full_issues += np.bincount(s.block[s.full], minlength=nb)
        res.partial_issues += np.bincount(s.block[part], minlength=nb)
        res.full_threads += np.bincount(s.block[s.full], weights=threads[s.full], minlength=nb).astype(np.int64)
        res.partial_threads += np.bincount(s.block[part], weights=threads[part], minlength=nb).astype(np.int64)
        # a diverged warp inside the region of an expansion-prone branch (Wu et al. 2012 §4.2.1)
        res.expansion_issues += np.bincount(s.block[s.in_region], minlength=nb)
        res.max_depth = max(res.max_depth, s.max_depth)
    return res


def ipdom_replay(trace: Trace, warp_size: int, flags: np.ndarray | None = None) -> ReplayCounts:
    """Replay ``trace`` under IPDOM with warps of ``warp_size``; ``flags`` marks expansion-prone
    branches (default :func:`expansion_branches`). The walk runs over CTA ranges of bounded size."""
    flags = expansion_branches(trace) if flags is None else np.asarray(flags, np.bool_)
    return _counts((issue_stream(trace, warp_size, a, b, flags) for a, b in cta_chunks(trace)), trace, warp_size)


def ipdom_replay_reference(trace: Trace, warp_size: int, flags=None) -> ReplayCounts:
    """Plain-Python model of :func:`ipdom_replay` (the walk's reference model)."""
    flags = expansion_branches(trace) if flags is None else np.asarray(flags, bool)
    return _counts([issue_stream_reference(trace, warp_size, flags=flags)], trace, warp_size)


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
