"""Basic blocks and the control-flow graph of one PTX function, with lazily cached analyses.

Conventions (DESIGN §2, trace §3):

* Block ids follow source order; ``entry == 0``; the **last** id is a virtual exit block with no
  instructions that every ``ret``/``exit``/``trap`` (and falling off the end of the body) flows to.
* A block ends at a branch (``bra``, ``brx.idx``), at ``ret``/``exit``/``trap``, at a CTA barrier
  (``bar.sync``/``barrier.sync``/``bar.red``/``bar.arrive``...: always the *last* instruction of its
  block, so barriers sit on block boundaries for the timing core) or just before a labelled
  instruction. Several labels on one instruction name one block (the first is its ``label``).
* Successor order: for a guarded ``@%p bra L`` the taken target ``L`` first, then the fall-through;
  for ``brx.idx`` the jump-table order (duplicates removed), then the fall-through if guarded; a
  guarded ``ret``/``exit`` lists the exit first, then the fall-through. Duplicate successors are
  removed (``@%p bra NEXT`` has one successor).
* A label at the very end of the body (no instruction after it) resolves to the virtual exit.
* Analyses (``idom``, ``ipdom``, ``control_deps``, ``loops``, ``rpo`` ...) are computed on first
  access and cached, numba-CFGraph style; post-dominators treat loops without exits as in
  :mod:`simt_fast.ir.graph`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from . import graph
from .model import Function, PTXError


@dataclass
class BasicBlock:
    id: int
    label: str  # first PTX label of the block, "" if none; "<exit>" for the virtual exit
    start: int  # first instruction index
    end: int  # one past the last instruction
    succs: list = field(default_factory=list)
    preds: list = field(default_factory=list)
    labels: tuple = ()  # every PTX label that names this block
    unstructured: bool = False  # set by the structurizer analysis (ANALYSES)

    @property
    def n_instrs(self) -> int:
        return self.end - self.start


class CFG:
    """Control-flow graph of a :class:`~simt_fast.ir.model.Function`."""

    def __init__(self, func: Function, blocks: list):
        self.func = func
        self.blocks = blocks
        self.entry = 0
        self.exit = len(blocks) - 1

    # -- structure -------------------------------------------------------------------------
    @property
    def n_blocks(self) -> int:
        return len(self.blocks)

    @cached_property
    def succ_csr(self) -> tuple:
        return graph.csr_from_lists([b.succs for b in self.blocks])

    @property
    def succ_ptr(self) -> np.ndarray:
        return self.succ_csr[0]

    @property
    def succ_idx(self) -> np.ndarray:
        return self.succ_csr[1]

    @cached_property
    def block_start(self) -> np.ndarray:
        """int32[n_blocks+1]: block b owns instructions block_start[b]:block_start[b+1]."""
        out = np.empty(self.n_blocks + 1, np.int32)
        for b in self.blocks:
            out[b.id] = b.start
        out[-1] = len(self.func.instructions)
        return out

    @cached_property
    def block_of_instr(self) -> np.ndarray:
        """int32[n_instrs]: the block owning each instruction."""
        out = np.empty(len(self.func.instructions), np.int32)
        for b in self.blocks:
            out[b.start : b.end] = b.id
        return out

    def block_by_label(self, name: str) -> BasicBlock:
        for b in self.blocks:
            if name in b.labels:
                return b
        raise KeyError(name)

    def instructions(self, b: int) -> list:
        blk = self.blocks[b]
        return self.func.instructions[blk.start : blk.end]

    # -- analyses (lazy, cached) -----------------------------------------------------------
    @cached_property
    def rpo(self) -> np.ndarray:
        """Blocks reachable from the entry in reverse post-order."""
        return graph.reverse_postorder(self.n_blocks, self.succ_ptr, self.succ_idx, self.entry)

    @cached_property
    def idom(self) -> np.ndarray:
        """Immediate dominator of every block (entry: itself; unreachable: -1)."""
        return graph.immediate_dominators(self.n_blocks, self.succ_ptr, self.succ_idx, self.entry)

    @cached_property
    def ipdom(self) -> np.ndarray:
        """Immediate post-dominator of every block (virtual exit: -1)."""
        return graph.immediate_postdominators(self.n_blocks, self.succ_ptr, self.succ_idx, self.exit)

    @cached_property
    def control_deps(self) -> list:
        """For each block the sorted branch blocks it is (directly) control dependent on."""
        edges = graph.control_dependence(self.n_blocks, self.succ_ptr, self.succ_idx, self.ipdom)
        return [sorted({x for x, _ in e}) for e in edges]

    @cached_property
    def control_dep_edges(self) -> list:
        """For each block the sorted CFG edges (branch, successor) it is control dependent on."""
        return graph.control_dependence(self.n_blocks, self.succ_ptr, self.succ_idx, self.ipdom)

    @cached_property
    def iterated_control_deps(self) -> list:
        return graph.iterated_control_dependence(self.n_blocks, self.succ_ptr, self.succ_idx, self.ipdom)

    @cached_property
    def loops(self) -> list:
        """Natural loops (:class:`simt_fast.ir.graph.Loop`), outermost first."""
        return graph.natural_loops(self.n_blocks, self.succ_ptr, self.succ_idx, self.entry, self.idom)

    @cached_property
    def back_edges(self) -> list:
        return graph.back_edges(self.n_blocks, self.succ_ptr, self.succ_idx, self.entry, self.idom)

    @cached_property
    def loop_headers(self) -> frozenset:
        return frozenset(L.header for L in self.loops)

    def dominates(self, a: int, b: int) -> bool:
        return graph.dominates(self.idom, a, b)

    def postdominates(self, a: int, b: int) -> bool:
        return graph.dominates(self.ipdom, a, b)

    @cached_property
    def has_barrier(self) -> np.ndarray:
        """bool[n_blocks]: the block ends with a CTA barrier."""
        out = np.zeros(self.n_blocks, np.bool_)
        ins = self.func.instructions
        for b in self.blocks:
            if b.end > b.start and ins[b.end - 1].is_barrier:
                out[b.id] = True
        return out

    def __repr__(self) -> str:
        return f"CFG({self.func.name!r}, {self.n_blocks} blocks)"


def _ends_block(ins) -> bool:
    return ins.base in ("bra", "brx", "ret", "exit", "trap") or ins.is_barrier


def build_cfg(func: Function) -> CFG:
    """Partition ``func`` into basic blocks and connect them (conventions in the module docstring)."""
    instrs = func.instructions
    n = len(instrs)
    labels_at: dict = {}
    for name, idx in func.labels.items():
        labels_at.setdefault(idx, []).append(name)
    # leaders: the first instruction, every labelled instruction, every instruction after a terminator
    leaders = {0} if n else set()
    for idx in labels_at:
        if idx < n:
            leaders.add(idx)
    for i, ins in enumerate(instrs):
        if _ends_block(ins) and i + 1 < n:
            leaders.add(i + 1)
    starts = sorted(leaders)
    blocks = []
    for k, s in enumerate(starts):
        e = starts[k + 1] if k + 1 < len(starts) else n
        names = tuple(labels_at.get(s, ()))
        blocks.append(BasicBlock(len(blocks), names[0] if names else "", s, e, labels=names))
    if not blocks:
        # an empty body still needs an entry block distinct from the exit
        blocks.append(BasicBlock(0, "", 0, 0, labels=tuple(labels_at.get(0, ()))))
    exit_id = len(blocks)
    blocks.append(BasicBlock(exit_id, "<exit>", n, n, labels=tuple(labels_at.get(n, ()))))
    block_at = {b.start: b.id for b in blocks[:-1]}

    def target(name: str, ins) -> int:
        if name not in func.labels:
            raise PTXError(f"branch to undefined label '{name}'", func.path, ins.line, ins.column, ins.text)
        idx = func.labels[name]
        return exit_id if idx >= n else block_at[idx]

    for b in blocks[:-1]:
        # falling off the end of the body returns (also for the empty entry block of an empty body,
        # whose end is its own start)
        fall = exit_id if b.end >= n else block_at.get(b.end, exit_id)
        succs: list = []
        if b.end == b.start:
            succs = [fall]
        else:
            last = instrs[b.end - 1]
            base = last.base
            if base == "bra":
                succs = [target(last.operands[0].name, last)]
                if last.pred is not None:
                    succs.append(fall)
            elif base == "brx":
                table = last.operands[1].name
                if table not in func.jump_tables:
                    raise PTXError(f"brx.idx target list '{table}' is not defined", func.path, last.line, last.column, last.text)
                succs = [target(t, last) for t in func.jump_tables[table]]
                if last.pred is not None:
                    succs.append(fall)
            elif base in ("ret", "exit", "trap"):
                succs = [exit_id]
                if last.pred is not None:
                    succs.append(fall)
            else:
                succs = [fall]
        seen = set()
        b.succs = [s for s in succs if not (s in seen or seen.add(s))]
    for b in blocks:
        for s in b.succs:
            blocks[s].preds.append(b.id)
    return CFG(func, blocks)
