"""Dynamic scalarization statistics (Lee et al. 2013 §4.2, Fig. 6), from traces.

The static facts -- which instructions are scalar, which registers are scalar -- are those of
:mod:`simt_fast.ir.scalarize` (a scalar instruction is thread-invariant and in a convergent block; a
register is scalar when every instruction writing it is scalar); :func:`scalar_facts` turns them into
flat per-instruction arrays, and :func:`static_stats` reports Fig. 5's numbers for several warp sizes.

Dynamic (:func:`dynamic_stats`): the trace is replayed under IPDOM with warps of ``W`` consecutive
threads of a CTA (:func:`simt_fast.dynamic.expansion.ipdom_replay`, whose issue counts equal the ``sps``
timing core's ``warp_insts``). Every issue of a block with active mask ``m`` (``p`` threads) of a
warp whose live threads are ``L`` counts, per instruction of the block:

==========================  =================================================================
issued, *scalar*             scalar instruction: 1
issued, *static converged*   non-scalar instruction of a convergent block: 1
issued, *dynamic converged*  block not proven convergent, ``m == L``: 1
issued, *diverged*           block not proven convergent, ``m != L``: 1 (one warp-split issue);
                             ``diverged_threads`` adds ``p`` (the paper's per-thread view)
thread operations            1 for a scalar instruction, else ``p``
register reads / writes      per source / destination register operand: 1 if the register is
                             scalar, else ``p``
memory addresses             per memory access: 1 if scalar or warp-sequential (one statically
                             coalesced address per warp), else ``p``
memory data accesses         per memory access: 1 if scalar, else ``p``
==========================  =================================================================

A *memory access* is any load, store or atomic of the paper's abstract machine, which has no
parameter or constant space: its ISA reads the kernel's arguments with ordinary loads (Lee et al.
2013 Fig. 1(b), b02-b05: ``ld.u64 r1, [4096]``) that scalarization turns into one scalar load per
warp (Fig. 1(c), c02-c05). So ``ld.param`` and ``ld.const`` (``MEM_CONST``) count as global, shared
and local accesses do.

The *baseline* (no scalarization, no warps) is what the threads do one by one: every count is ``p``
per operand (issued = thread operations = the trace's thread instructions).

``convergent_partial`` counts IPDOM issues of a block proven convergent with ``m != L``. The analysis
is about convergence of the threads that stay (Lee et al. 2013 §3.4 ignores threads that leave the kernel
early), while an IPDOM warp may run the staying threads' path *before* the leaving threads reached
their ``ret``: those issues are counted as statically converged (the compiler's view), and this
diagnostic says how often the hardware ordering disagreed.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..emu import load_kernel
from ..ir.cfg import build_cfg
from ..ir.convergence import analyze_convergence
from ..ir.flat import instruction_registers
from ..ir.model import OpClass
from ..ir.scalarize import scalar_instructions, scalarization_stats
from ..trace.model import Trace, TraceError
from .expansion import ReplayCounts, ipdom_replay

__all__ = ["ScalarFacts", "scalar_facts", "facts_for_trace", "dynamic_stats", "static_stats", "scalarize_trace",
           "unscalarized_facts", "WARP_SIZES"]

WARP_SIZES = (4, 8, 16, 32)
# every memory access of the paper's abstract machine, kernel parameters and constants included (module doc)
_MEM = (int(OpClass.MEM_GLOBAL), int(OpClass.MEM_SHARED), int(OpClass.MEM_LOCAL), int(OpClass.MEM_CONST))


@dataclass
class ScalarFacts:
    """Per-block / per-instruction facts the dynamic counts need (flat numpy arrays)."""

    block_start: np.ndarray  # int64[n_blocks+1]
    convergent: np.ndarray  # bool[n_blocks]
    scalar: np.ndarray  # bool[n_instrs]: scalar instruction
    warp_seq: np.ndarray  # bool[n_instrs]: warp-sequential load/store
    mem: np.ndarray  # bool[n_instrs]: memory access (global, shared, local, constant or parameter space)
    src_scalar: np.ndarray  # int64[n_instrs]: source operands in scalar registers
    src_private: np.ndarray
    dst_scalar: np.ndarray  # destination operands in scalar registers
    dst_private: np.ndarray
    n_scalar_regs: int = 0
    n_private_regs: int = 0

    @property
    def n_instrs(self) -> int:
        return int(self.block_start[-1])

    def block_of(self) -> np.ndarray:
        sizes = np.diff(self.block_start)
        return np.repeat(np.arange(len(sizes)), sizes)


def scalar_facts(func, cfg=None, conv=None) -> ScalarFacts:
    """The facts of a parsed (inlined, for traces) function from its convergence analysis."""
    cfg = cfg or build_cfg(func)
    conv = conv or analyze_convergence(func, cfg)
    instrs = func.instructions
    n = len(instrs)
    # the static classification is the ANALYSES module's (Lee et al. 2013 §2.3): reuse it, never re-derive it
    scalar = np.asarray(scalar_instructions(conv), bool)
    regs = [instruction_registers(ins) for ins in instrs]
    writers: dict = {}
    for i, (dsts, _) in enumerate(regs):
        for r in dsts:
            writers.setdefault(r, []).append(i)
    scalar_reg = {r: all(scalar[i] for i in ws) for r, ws in writers.items()}
    for _, srcs in regs:
        for r in srcs:
            scalar_reg.setdefault(r, False)  # read but never written here (a .func parameter): per thread
    src_s = np.array([sum(1 for r in dict.fromkeys(s) if scalar_reg[r]) for _, s in regs], np.int64)
    src_p = np.array([sum(1 for r in dict.fromkeys(s) if not scalar_reg[r]) for _, s in regs], np.int64)
    dst_s = np.array([sum(1 for r in d if scalar_reg[r]) for d, _ in regs], np.int64)
    dst_p = np.array([sum(1 for r in d if not scalar_reg[r]) for d, _ in regs], np.int64)
    stats = scalarization_stats(func, conv=conv)
    mem = np.array([int(ins.op_class) in _MEM for ins in instrs], bool)
    return ScalarFacts(np.asarray(cfg.block_start, np.int64), np.asarray(conv.convergent, bool), scalar,
                       np.asarray(conv.warp_sequential, bool) & mem & ~scalar, mem, src_s, src_p, dst_s, dst_p,
                       stats.scalar_registers, stats.private_registers)


def unscalarized_facts(trace: Trace) -> ScalarFacts:
    """Facts with no analysis (nothing scalar or convergent), from the trace's own register columns."""
    src = np.asarray(trace.src_reg).reshape(-1, 3)
    n = trace.n_instrs
    z = np.zeros(n, np.int64)
    regs = set(np.asarray(trace.dst_reg)[np.asarray(trace.dst_reg) >= 0].tolist()) | set(src[src >= 0].tolist())
    return ScalarFacts(np.asarray(trace.block_start, np.int64), np.zeros(trace.n_blocks, bool), np.zeros(n, bool),
                       np.zeros(n, bool), np.isin(np.asarray(trace.op_class), _MEM), z.copy(),
                       (src >= 0).sum(axis=1).astype(np.int64), z.copy(),
                       (np.asarray(trace.dst_reg) >= 0).astype(np.int64), 0, len(regs))


def facts_for_trace(trace: Trace, ptx, kernel=None) -> ScalarFacts:
    """Analyse the PTX a trace came from (inlined like the emulator does) and check they match."""
    kern = load_kernel(ptx, kernel or trace.kernel)
    flat = kern.flat
    if len(flat["block_start"]) != len(trace.block_start) or not np.array_equal(
            np.asarray(flat["block_start"]), np.asarray(trace.block_start)) or list(flat["text"]) != list(trace.text):
        raise TraceError(f"trace '{trace.kernel}' was not recorded from kernel '{kern.name}' of this PTX "
                         "(its blocks or instruction text differ)")
    return scalar_facts(kern.func)


def static_stats(facts: ScalarFacts, warp_sizes=WARP_SIZES) -> dict:
    """Lee et al. 2013 Fig. 5: scalar share of static instructions; registers per warp vs the baseline."""
    n = facts.n_instrs
    rs, rp = facts.n_scalar_regs, facts.n_private_regs
    return {
        "instructions": n,
        "scalar_instructions": int(facts.scalar.sum()),
        "scalar_pct": 100.0 * facts.scalar.sum() / n if n else 0.0,
        "scalar_registers": rs,
        "private_registers": rp,
        "registers_per_warp": {int(w): {"scalarized": rs + w * rp, "baseline": w * (rs + rp),
                                        "saving_pct": 100.0 * rs * (w - 1) / (w * (rs + rp)) if rs + rp else 0.0}
                               for w in warp_sizes},
    }


def counts_from_replay(facts: ScalarFacts, rc: ReplayCounts) -> dict:
    """The dynamic counts (module table) from per-block IPDOM issue counts."""
    blk = facts.block_of()
    fi, pi = rc.full_issues[blk], rc.partial_issues[blk]
    ft, pt = rc.full_threads[blk], rc.partial_threads[blk]
    issues, threads = fi + pi, ft + pt
    sc, conv = facts.scalar, facts.convergent[blk]
    other = ~sc & ~conv
    addr_once = sc | facts.warp_seq
    d = {
        "issued_scalar": int(issues[sc].sum()),
        "issued_static_converged": int(issues[~sc & conv].sum()),
        "issued_dynamic_converged": int(fi[other].sum()),
        "issued_diverged": int(pi[other].sum()),
        "diverged_threads": int(pt[other].sum()),
        "thread_ops": int(issues[sc].sum() + threads[~sc].sum()),
        "reg_reads": int((facts.src_scalar * issues + facts.src_private * threads).sum()),
        "reg_writes": int((facts.dst_scalar * issues + facts.dst_private * threads).sum()),
        "mem_addresses": int(issues[facts.mem & addr_once].sum() + threads[facts.mem & ~addr_once].sum()),
        "mem_data": int(issues[facts.mem & sc].sum() + threads[facts.mem & ~sc].sum()),
        "convergent_partial": int(rc.partial_issues[facts.convergent].sum()),
    }
    d["issued"] = d["issued_scalar"] + d["issued_static_converged"] + d["issued_dynamic_converged"] + d["issued_diverged"]
    return d


def baseline_counts(facts: ScalarFacts, rc: ReplayCounts) -> dict:
    """Every thread on its own, nothing scalar (independent of the warp size)."""
    threads = (rc.full_threads + rc.partial_threads)[facts.block_of()]
    t = int(threads.sum())
    return {"issued": t, "thread_ops": t,
            "reg_reads": int(((facts.src_scalar + facts.src_private) * threads).sum()),
            "reg_writes": int(((facts.dst_scalar + facts.dst_private) * threads).sum()),
            "mem_addresses": int(threads[facts.mem].sum()), "mem_data": int(threads[facts.mem].sum())}


def dynamic_stats(trace: Trace, facts: ScalarFacts, warp_sizes=WARP_SIZES) -> dict:
    """Lee et al. 2013 Fig. 6 for one trace: baseline and, per warp size, the counts and their savings."""
    if int(facts.block_start[-1]) != trace.n_instrs or len(facts.convergent) != trace.n_blocks:
        raise TraceError(f"trace '{trace.kernel}': the analysis has {int(facts.block_start[-1])} instructions in "
                         f"{len(facts.convergent)} blocks, the trace {trace.n_instrs} in {trace.n_blocks}")
    out: dict = {}
    base = None
    for w in warp_sizes:
        rc = ipdom_replay(trace, int(w))
        if base is None:
            base = baseline_counts(facts, rc)
        c = counts_from_replay(facts, rc)
        c["saving_pct"] = {k: 100.0 * (base[k] - c[k]) / base[k] if base[k] else 0.0 for k in base}
        out[int(w)] = c
    return {"baseline": base, "warp_sizes": out}


def scalarize_trace(trace: Trace, ptx=None, kernel=None, warp_sizes=WARP_SIZES) -> dict:
    """Static and dynamic scalarization statistics of a trace (``ptx``: the file it was recorded
    from; without it nothing is scalar and every count equals the unscalarized one)."""
    facts = facts_for_trace(trace, ptx, kernel) if ptx is not None else unscalarized_facts(trace)
    return {"kernel": trace.kernel, "static": static_stats(facts, warp_sizes),
            "dynamic": dynamic_stats(trace, facts, warp_sizes)}
