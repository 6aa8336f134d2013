"""Where the compiler puts ``syncwarp`` for the stackless mechanism (Lee et al. 2013, §5.2; docs/core.md).

A bool per block: a syncwarp at the block's entry. ``syncwarp_blocks = "auto"`` places one at the
entry of every convergent block with a divergent predecessor, from the convergence analysis;
``"ipdom"`` at the immediate post-dominator of every branch (a comparison point). Plain Python, run
once per simulation.
"""

from __future__ import annotations

import numpy as np

def ipdom_syncwarp(trace) -> np.ndarray:
    """``"ipdom"``: a syncwarp at the immediate post-dominator of every branch (not the virtual exit)."""
    nb = trace.n_blocks
    sp = np.asarray(trace.succ_ptr)
    si = np.asarray(trace.succ_idx)
    flags = np.zeros(nb, np.bool_)
    for b in range(nb):
        if len(set(si[sp[b]:sp[b + 1]].tolist())) > 1 and 0 <= trace.ipdom[b] < nb - 1:
            flags[int(trace.ipdom[b])] = True
    return flags


def structural_syncwarp(trace) -> np.ndarray:
    """``"auto"`` from the trace's CFG alone (no PTX): the structure-only convergence of Lee et al.
    2013 ("CA": every conditional branch may diverge) with the §3.4 early-exit rule and barrier
    protection; a syncwarp goes in each convergent block with a divergent predecessor. Sound, but
    fewer blocks are convergent than with the variance analysis (:func:`analysis_syncwarp`)."""
    from ..ir.graph import control_dependence, iterated_control_dependence, lists_from_csr, predecessors
    from ..ir.model import OpClass

    nb = trace.n_blocks
    exit_b = nb - 1
    succs = lists_from_csr(nb, trace.succ_ptr, trace.succ_idx)
    preds = predecessors(nb, succs)
    ipdom = np.asarray(trace.ipdom, np.int64).copy()
    ipdom[ipdom < 0] = -1
    cd = control_dependence(nb, trace.succ_ptr, trace.succ_idx, ipdom)
    icd = iterated_control_dependence(nb, trace.succ_ptr, trace.succ_idx, ipdom)
    bs = np.asarray(trace.block_start)
    src = np.asarray(trace.src_reg).reshape(-1, 3)

    def exits_early(b):
        for s in succs[b]:
            if s == exit_b:
                return True
            if bs[s + 1] - bs[s] == 1 and trace.op_class[bs[s]] == OpClass.EXIT and src[bs[s], 0] < 0:
                return True
        return any(b in cd[e] and e != b for e in preds[exit_b])

    protected = np.asarray(trace.has_barrier, bool).copy()
    for b in range(nb):
        if trace.has_barrier[b] and len(succs[b]) == 1 and preds[succs[b][0]] == [b] and succs[b][0] != exit_b:
            protected[succs[b][0]] = True
    divergent_branch = [len(set(succs[b])) > 1 and not exits_early(b) for b in range(nb)]
    conv = np.array([b == exit_b or protected[b] or not any(divergent_branch[x] for x in icd[b])
                     for b in range(nb)], bool)
    return np.array([b != exit_b and conv[b] and any(not conv[p] for p in preds[b]) for b in range(nb)], np.bool_)


def analysis_syncwarp(trace, ptx, kernel=None) -> np.ndarray:
    """``"auto"`` with the full convergence + variance analysis of the PTX the trace was recorded from."""
    from ..emu import load_kernel
    from ..ir.convergence import analyze_convergence
    from ..trace.model import TraceError

    kern = load_kernel(ptx, kernel or trace.kernel)
    if not np.array_equal(np.asarray(kern.flat["block_start"]), np.asarray(trace.block_start)) \
            or list(kern.flat["text"]) != list(trace.text):
        raise TraceError(f"trace '{trace.kernel}' was not recorded from kernel '{kern.name}' of this PTX "
                         "(its blocks or instruction text differ)")
    res = analyze_convergence(kern.func)
    flags = np.zeros(trace.n_blocks, np.bool_)
    flags[list(res.syncwarp_blocks)] = True
    return flags


def syncwarp_flags(trace, mode: str = "auto", ptx=None, kernel=None) -> np.ndarray:
    """bool per block: where syncwarp sits. In ``auto`` mode, in order: a ``syncwarp`` attribute on the
    trace (block labels or ids, written by whoever recorded it); the convergence + variance analysis of
    ``ptx`` if given, else of the built-in workload the trace names in its ``workload`` attribute (when
    the trace matches that PTX); else the structure-only analysis of the trace's CFG."""
    if mode == "ipdom":
        return ipdom_syncwarp(trace)
    if mode != "auto":
        raise ValueError(f"syncwarp_blocks must be 'auto' or 'ipdom' (got {mode!r})")
    given = getattr(trace, "attrs", {}).get("syncwarp")
    if given is not None:
        flags = np.zeros(trace.n_blocks, np.bool_)
        for b in np.atleast_1d(given):
            flags[trace.label.index(b) if isinstance(b, str) else int(b)] = True
        return flags
    if ptx is not None:
        return analysis_syncwarp(trace, ptx, kernel)
    workload = getattr(trace, "attrs", {}).get("workload")
    if workload:
        flags = _workload_syncwarp(trace, str(workload))
        if flags is not None:
            return flags
    return structural_syncwarp(trace)


_CACHE: dict = {}


def _workload_syncwarp(trace, name: str):
    """The variance-aware flags of a built-in workload's PTX (cached), or None if the trace was not
    recorded from that PTX (edited since, or another kernel)."""
    from ..trace.model import TraceError
    from ..workloads import get, names

    if name not in names():
        return None
    ptx = get(name).ptx_path
    key = (str(ptx), ptx.stat().st_mtime_ns, trace.kernel, trace.n_instrs)
    if key not in _CACHE:
        try:
            _CACHE[key] = analysis_syncwarp(trace, ptx)
        except (TraceError, LookupError, ValueError):
            _CACHE[key] = None
    return _CACHE[key]
