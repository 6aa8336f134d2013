"""Where the compiler puts ``syncwarp`` for the stackless mechanism (Lee et al. 2013, §5.2; docs/core.md).

A bool per block: a syncwarp at the block's entry. ``syncwarp_blocks = "auto"`` places one at the
entry of every convergent block with a divergent predecessor, from the convergence analysis;
``"ipdom"`` at the immediate post-dominator of every branch (a comparison point). Plain Python, run
once per simulation, from the trace alone (the emulator stored its analysis of the PTX in the trace).
"""

from __future__ import annotations

import numpy as np

from ..ir.graph import control_dependence, iterated_control_dependence, lists_from_csr, predecessors
from ..ir.model import OpClass


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
    fewer blocks are convergent than with the variance analysis the emulator stores in its traces."""
    nb = trace.n_blocks
    exit_b = nb - 1
    succs = lists_from_csr(nb, trace.succ_ptr, trace.succ_idx)
    preds = predecessors(nb, succs)
    ipdom = np.asarray(trace.ipdom, np.int64).copy()
    ipdom[ipdom < 0] = -1
    controllers = [{x for x, _ in edges} for edges in control_dependence(nb, trace.succ_ptr, trace.succ_idx, ipdom)]
    icd = iterated_control_dependence(nb, trace.succ_ptr, trace.succ_idx, ipdom)
    bs = np.asarray(trace.block_start)
    src = np.asarray(trace.src_reg).reshape(-1, 3)

    def exits_early(b):
        for s in succs[b]:
            if s == exit_b:
                return True
            if bs[s + 1] - bs[s] == 1 and trace.op_class[bs[s]] == OpClass.EXIT and src[bs[s], 0] < 0:
                return True
        return any(b in controllers[e] and e != b for e in preds[exit_b])

    protected = np.asarray(trace.has_barrier, bool).copy()
    for b in range(nb):
        if trace.has_barrier[b] and len(succs[b]) == 1 and preds[succs[b][0]] == [b] and succs[b][0] != exit_b:
            protected[succs[b][0]] = True
    divergent_branch = [len(set(succs[b])) > 1 and not exits_early(b) for b in range(nb)]
    conv = np.array([b == exit_b or protected[b] or not any(divergent_branch[x] for x in icd[b])
                     for b in range(nb)], bool)
    return np.array([b != exit_b and conv[b] and any(not conv[p] for p in preds[b]) for b in range(nb)], np.bool_)


def syncwarp_flags(trace, mode: str = "auto") -> np.ndarray:
    """bool per block: where syncwarp sits. In ``auto`` mode: the trace's ``syncwarp`` attribute (block
    labels or ids; the emulator stores its convergence + variance analysis of the PTX in every trace it
    writes), else — traces from elsewhere or older files — the structure-only analysis of its CFG."""
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
    return structural_syncwarp(trace)

