"""Per-trace analyses a sweep stores beside its timing points (``analyses = [...]`` in a sweep file).

The compiler-side statistics of Wu et al. 2012 (Wu et al., unstructured control flow) and Lee et al. 2013 (Lee
et al., convergence and scalarization) are properties of a kernel and of the paths its threads took,
not of a machine configuration, so a sweep computes them once per trace and the results file keeps
them under its ``analyses`` attribute (docs/DESIGN.md §6). Each analysis maps a trace and the
built-in workload it was recorded from to a flat dict of numbers; the names below are what
published claims refer to (``metric = "scalarize.thread_ops_saving_pct_w4"``).

* ``structurize`` — Wu et al. 2012 Table 2 for the workload's PTX: ``branch_instructions``, ``cuts``,
  ``forward_copies``, ``backward_copies``, ``old_code_size``, ``new_code_size``,
  ``static_expansion_pct``, ``unstructured`` (1 when any transformation was needed: Table 1's count).
* ``expansion`` — Wu et al. 2012 Table 3 under IPDOM with warps of 32: ``upper_limit_pct`` (warp
  instructions a diverged warp issues inside an expansion-prone region, over all IPDOM warp
  instructions; :mod:`simt_fast.dynamic.expansion`) and ``expansion_branches``.
* ``scalarize`` — Lee et al. 2013 Figs. 5–6 (:mod:`simt_fast.dynamic.scalarize`): ``static_scalar_pct``,
  ``reg_saving_pct_w{4,32}`` (registers per warp), and per warp size 4 and 32 the savings against the
  unscalarized baseline of ``thread_ops``, ``reg_access`` (reads + writes), ``mem_addresses`` and
  ``mem_data`` (``..._saving_pct_w4`` ...).
* ``convergence`` — Lee et al. 2013 Fig. 4 with warps of 4: the share of thread instructions executed in
  blocks the compiler proves convergent, with structure-only analysis (``ca_pct``), with variance
  analysis (``ca_va_pct``), with the early-exit rule too (``ca_va_exit_pct``), and adding the
  instructions a warp issued with all its live threads anyway (``dynamic_pct``: what dynamic
  convergence preservation keeps converged).

Analyses that need the PTX skip traces that are not built-in workloads (a trace file given by path):
their entry says so instead of holding numbers.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from .. import workloads
from ..dynamic.expansion import expansion_branches, ipdom_replay
from ..dynamic.scalarize import dynamic_stats, facts_for_trace, static_stats
from ..emu import load_kernel
from ..ir import parse_ptx
from ..ir.convergence import analyze_convergence
from ..ir.structurize import structurize_module
from ..trace.model import Trace

REPLAY_WARPS = (4, 32)


def _structurize(trace: Trace, workload) -> dict:
    _, stats = structurize_module(parse_ptx(workload.ptx_path))
    d = stats.to_dict()
    d.pop("transform_ms", None)  # wall time: not a property of the kernel
    d["unstructured"] = int(stats.cuts + stats.forward_copies + stats.backward_copies + stats.guards
                            + stats.entry_dispatches > 0)
    return d


def _expansion(trace: Trace, workload) -> dict:
    flags = expansion_branches(trace)
    counts = ipdom_replay(trace, 32, flags)
    pct = 100.0 * counts.upper_limit / counts.warp_insts if counts.warp_insts else 0.0
    return {"expansion_branches": int(np.count_nonzero(flags)), "upper_limit": int(counts.upper_limit),
            "warp_insts": int(counts.warp_insts), "upper_limit_pct": pct}


def _saving(base: float, value: float) -> float:
    return 100.0 * (base - value) / base if base else 0.0


def _scalarize(trace: Trace, workload) -> dict:
    facts = facts_for_trace(trace, workload.ptx_path, workload.kernel)
    static = static_stats(facts, REPLAY_WARPS)
    dynamic = dynamic_stats(trace, facts, REPLAY_WARPS)
    base = dynamic["baseline"]
    out = {"static_scalar_pct": static["scalar_pct"]}
    for w in REPLAY_WARPS:
        c = dynamic["warp_sizes"][w]
        out[f"reg_saving_pct_w{w}"] = static["registers_per_warp"][w]["saving_pct"]
        out[f"thread_ops_saving_pct_w{w}"] = c["saving_pct"]["thread_ops"]
        out[f"reg_access_saving_pct_w{w}"] = _saving(base["reg_reads"] + base["reg_writes"],
                                                      c["reg_reads"] + c["reg_writes"])
        out[f"mem_addresses_saving_pct_w{w}"] = c["saving_pct"]["mem_addresses"]
        out[f"mem_data_saving_pct_w{w}"] = c["saving_pct"]["mem_data"]
    return out


def _convergence(trace: Trace, workload) -> dict:
    facts_for_trace(trace, workload.ptx_path, workload.kernel)  # refuses a trace of another kernel
    kern = load_kernel(workload.ptx_path, workload.kernel)
    counts = ipdom_replay(trace, 4)
    size = np.diff(np.asarray(trace.block_start, np.int64))
    threads = (counts.full_threads + counts.partial_threads) * size  # thread instructions per block
    full = counts.full_threads * size  # ... issued with every live thread of the warp
    total = float(threads.sum())
    out = {}
    for key, variance, early_exit in (("ca_pct", False, False), ("ca_va_pct", True, False),
                                      ("ca_va_exit_pct", True, True)):
        conv = np.asarray(analyze_convergence(kern.func, variance=variance, early_exit=early_exit).convergent, bool)
        out[key] = 100.0 * threads[conv].sum() / total if total else 0.0
    out["dynamic_pct"] = 100.0 * (threads[conv].sum() + full[~conv].sum()) / total if total else 0.0
    return out


# The numbers each analysis returns (claim files name them; tests check the functions return these).
FIELDS = {
    "structurize": ("branch_instructions", "cuts", "forward_copies", "backward_copies", "guards",
                    "entry_dispatches", "copied_code", "old_code_size", "new_code_size", "static_expansion_pct",
                    "growth", "max_growth", "unstructured"),
    "expansion": ("expansion_branches", "upper_limit", "warp_insts", "upper_limit_pct"),
    "scalarize": ("static_scalar_pct",) + tuple(
        f"{name}_w{w}" for w in REPLAY_WARPS for name in ("reg_saving_pct", "thread_ops_saving_pct",
                                                           "reg_access_saving_pct", "mem_addresses_saving_pct",
                                                           "mem_data_saving_pct")),
    "convergence": ("ca_pct", "ca_va_pct", "ca_va_exit_pct", "dynamic_pct"),
}

ANALYSES: dict[str, Callable[[Trace, object], dict]] = {
    "structurize": _structurize,
    "expansion": _expansion,
    "scalarize": _scalarize,
    "convergence": _convergence,
}


def _workload(name: str):
    return workloads.get(name)


def run_analyses(names: list, trace_path, workload_name) -> dict:
    """``{analysis: numbers}`` for one trace; traces that are no built-in workload get ``{"skipped": why}``."""
    if not workload_name:
        return {name: {"skipped": "not a built-in workload, so its PTX is unknown"} for name in names}
    workload = _workload(workload_name)
    trace = Trace.load(trace_path)
    out = {}
    for name in names:
        out[name] = {k: (float(v) if isinstance(v, (float, np.floating)) else int(v))
                     for k, v in ANALYSES[name](trace, workload).items()}
    return out
