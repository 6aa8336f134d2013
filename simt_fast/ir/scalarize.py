"""Static scalarization statistics (Lee et al. 2013 §2.3, §4.2), from the convergence/variance analysis.

A *scalar instruction* executes once per warp instead of once per thread: it is thread-invariant
and sits in a convergent block (scalarization is only legal where the warp is provably converged).
Warp-sequential loads/stores (§3.5) are counted separately: they are issued once per warp too but
still write or read a private register per thread. Every other instruction is a *thread*
instruction.

A register is *scalar* when every instruction that writes it is a scalar instruction (one copy per
warp); otherwise it is *private* (one copy per thread). Per warp of ``W`` threads the conventional
code needs ``registers * W`` registers and the scalarized code ``private * W + scalar`` -- the
paper's Fig. 1 example: 9 registers per thread are 288 per 32-thread warp, against 2 private and 6
scalar = 70.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Optional

from .convergence import ConvergenceResult, analyze_convergence
from .flat import instruction_registers
from .model import Function


@dataclass
class ScalarizationStats:
    warp_size: int
    instructions: int
    scalar_instructions: int
    warp_sequential: int
    thread_instructions: int
    registers: int  # registers written at least once
    scalar_registers: int
    private_registers: int
    scalar_predicates: int
    private_predicates: int

    @property
    def scalar_pct(self) -> float:
        return 100.0 * self.scalar_instructions / self.instructions if self.instructions else 0.0

    @property
    def registers_per_warp(self) -> int:
        return self.registers * self.warp_size

    @property
    def scalarized_registers_per_warp(self) -> int:
        return self.private_registers * self.warp_size + self.scalar_registers

    @property
    def register_reduction_pct(self) -> float:
        base = self.registers_per_warp
        return 100.0 * (base - self.scalarized_registers_per_warp) / base if base else 0.0

    def to_dict(self) -> dict:
        d = asdict(self)
        d.update(scalar_pct=round(self.scalar_pct, 2), registers_per_warp=self.registers_per_warp,
                 scalarized_registers_per_warp=self.scalarized_registers_per_warp,
                 register_reduction_pct=round(self.register_reduction_pct, 2))
        return d


def scalar_instructions(conv: ConvergenceResult) -> list:
    """bool per instruction: invariant and in a convergent block."""
    block_of = conv.cfg.block_of_instr
    return [bool(conv.invariant[i] and conv.convergent[block_of[i]]) for i in range(len(conv.invariant))]


def scalarization_stats(func: Function, warp_size: int = 32, conv: Optional[ConvergenceResult] = None) -> ScalarizationStats:
    """Static scalarization statistics of ``func`` for warps of ``warp_size`` threads."""
    if warp_size < 1:
        raise ValueError(f"warp_size must be positive, got {warp_size}")
    conv = conv or analyze_convergence(func)
    scalar = scalar_instructions(conv)
    pred_regs = {n for d in func.reg_decls if d.dtype == "pred" for n in d.names}
    writers: dict = {}
    for i, ins in enumerate(func.instructions):
        dsts, _ = instruction_registers(ins)
        for r in dsts:
            writers.setdefault(r, []).append(i)
    scalar_regs = {r for r, ws in writers.items() if all(scalar[i] for i in ws)}
    private_regs = set(writers) - scalar_regs
    n = len(func.instructions)
    n_scalar = sum(scalar)
    n_wseq = int(sum(1 for i in range(n) if conv.warp_sequential[i] and not scalar[i]))
    return ScalarizationStats(
        warp_size=warp_size,
        instructions=n,
        scalar_instructions=n_scalar,
        warp_sequential=n_wseq,
        thread_instructions=n - n_scalar - n_wseq,
        registers=len(writers),
        scalar_registers=len(scalar_regs),
        private_registers=len(private_regs),
        scalar_predicates=len(scalar_regs & pred_regs),
        private_predicates=len(private_regs & pred_regs),
    )
