"""Unstructured-to-structured control-flow transformation (Wu et al. 2012 §3).

The four-step loop of the paper, on a graph whose nodes map 1:1 onto basic blocks:

1. build the control tree (collapse block / if-then / if-then-else / case / self-loop / while /
   do-while patterns, :mod:`simt_fast.ir.control_tree`);
2. stop if it reduced to one node; otherwise look at the stuck graph:
3. innermost stuck loop first (so children are structured before their parents):
   * several entries  -> **Backward Copy**: peel the part of the first iteration reachable from the
     extra entries up to the header and point the extra entries at the peeled copy;
   * exits other than one edge taken every iteration -> **Cut**: every exit edge and back edge sets
     an exit flag (and one flag per exit target) and jumps to a new single latch, which loops back or
     leaves to a chain of flag tests that resumes at the right target;
   * otherwise the loop body (back edges to a virtual *continue*, the exit to a virtual *break*) is
     an acyclic region for Forward Copy;
   with no stuck loop left, the whole (loop-collapsed) graph is acyclic: **Forward Copy** duplicates
   the sub-graph between a shared target v and the post-dominator where its predecessor's paths meet,
   latest shared target first (Fig. 10: E2 before E1);
4. rebuild the control tree and repeat.

Termination: Backward Copy leaves the loop single-entry; after a Cut the loop's only exit is its
latch; each Forward Copy strictly grows the node count of an acyclic region without changing its
number of entry-to-node paths (its depth-first unfolding), which bounds it.

Growth: copies compound (a goto state machine grows 86x), so the copies are budgeted. Before a
copy the structurizer adds up what it would duplicate; past ``max_growth`` x the original code it
uses flags instead, the way Cut does, which grow the code linearly:

* instead of a Backward Copy, an **entry dispatch**: every edge into one of the loop's entries sets
  that entry's flag and jumps to one new header, a chain of flag tests that resumes at the entry;
* instead of a Forward Copy, a **guard** of the whole stuck acyclic region (the loop body, or the
  loop-collapsed graph): its nodes are laid out in topological order, each behind a test of its own
  flag, and every edge out of a node sets the flag of its target and falls through to the next test
  (edges leaving the region set Cut-style flags tested at the end). A chain of if-thens is structured.

:func:`structurize` accepts a :class:`FlowGraph` (abstract blocks with sizes) or an IR ``Function`` /
``Module``. At the IR level duplicated blocks get fresh labels (``$L__struct_N``), Cut adds a
``.reg .pred`` flag array and ``setp``/``bra`` code, returns moved out of a loop become ``ret`` after
it, and the blocks are laid out depth first with explicit ``bra.uni`` where a fall-through is lost.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Optional, Sequence

from . import control_tree as ct
from .cfg import build_cfg
from .ptx_printer import format_instruction
from .model import Function, Imm, Instruction, Label, Module, OpClass, Reg, RegDecl


class StructurizeError(ValueError):
    """The transformation cannot proceed (unsupported construct or expansion limit)."""


@dataclass
class FlowGraph:
    """A CFG with positional successors, as the structurizer edits it.

    ``origin[b]`` is the original block a block copies (itself for originals, ``-1`` for blocks the
    Cut inserts); ``synth[b]`` describes an inserted block: ``("set", {flag: bool})`` (one
    successor), ``("test", flag)`` (successors [taken when flag is true, otherwise]) or ``("ret",)``.
    ``edge_sets[b]`` (``{slot: {flag: bool}}`` or None) are Cut flag writes done by an existing
    block when it leaves through successor slot ``slot`` (predicated like its branch), instead of a
    stub block on that edge; blocks whose original is in ``stub_only`` (``brx.idx``) always get stubs.
    ``size[b]`` is the block's instruction count.
    """

    succs: list
    entry: int = 0
    exit: Optional[int] = None
    origin: list = field(default_factory=list)
    synth: list = field(default_factory=list)
    size: list = field(default_factory=list)
    n_flags: int = 0
    edge_sets: list = field(default_factory=list)
    stub_only: set = field(default_factory=set)
    live: list = field(default_factory=list)  # reachable blocks, set after structurizing
    init: Optional[int] = None  # the block clearing guard flags at function entry (made on first need)

    def __post_init__(self):
        n = len(self.succs)
        self.succs = [list(s) for s in self.succs]
        if not self.origin:
            self.origin = list(range(n))
        if not self.synth:
            self.synth = [None] * n
        if not self.size:
            self.size = [0 if b == self.exit else 1 for b in range(n)]
        if not self.edge_sets:
            self.edge_sets = [None] * n

    @classmethod
    def from_edges(cls, n: int, edges: Sequence, entry: int = 0, exit: Optional[int] = None, size=None):
        succs = [[] for _ in range(n)]
        for u, v in edges:
            succs[u].append(v)
        return cls(succs, entry, exit, size=list(size) if size else [])

    @property
    def n(self) -> int:
        return len(self.succs)

    def add_block(self, succs, origin=-1, synth=None, size=1, edge_sets=None) -> int:
        self.succs.append(list(succs))
        self.origin.append(origin)
        self.synth.append(synth)
        self.size.append(size)
        self.edge_sets.append({k: dict(v) for k, v in edge_sets.items()} if edge_sets else None)
        return len(self.succs) - 1

    def code_size(self) -> int:
        live = ct._reachable(self.n, self.succs, self.entry)
        return sum(self.size[b] for b in range(self.n) if live[b])

    def new_flags(self, k: int) -> list:
        first = self.n_flags
        self.n_flags += k
        return list(range(first, first + k))

    def control_tree(self) -> ct.ControlTree:
        return ct.build_control_tree(self.n, self.succs, self.entry, self.exit)


@dataclass
class StructStats:
    """Table 2 of Wu et al. 2012, for one kernel, and what the growth limit did."""

    branch_instructions: int = 0
    cuts: int = 0
    forward_copies: int = 0
    backward_copies: int = 0
    old_code_size: int = 0
    new_code_size: int = 0
    transform_ms: float = 0.0
    guards: int = 0  # acyclic regions guarded by flags instead of copied (growth limit reached)
    entry_dispatches: int = 0  # multi-entry loops given a flag dispatch instead of a peeled copy
    copied_code: int = 0  # instructions duplicated by Forward and Backward Copy
    max_growth: float = 0.0  # the limit the copies were held to (x the original code)

    @property
    def static_expansion_pct(self) -> float:
        return 100.0 * (self.new_code_size - self.old_code_size) / self.old_code_size if self.old_code_size else 0.0

    @property
    def growth(self) -> float:
        """new / old code size."""
        return self.new_code_size / self.old_code_size if self.old_code_size else 1.0

    def to_dict(self) -> dict:
        return {
            "branch_instructions": self.branch_instructions,
            "cuts": self.cuts,
            "forward_copies": self.forward_copies,
            "backward_copies": self.backward_copies,
            "old_code_size": self.old_code_size,
            "new_code_size": self.new_code_size,
            "static_expansion_pct": round(self.static_expansion_pct, 2),
            "transform_ms": round(self.transform_ms, 3),
            "guards": self.guards,
            "entry_dispatches": self.entry_dispatches,
            "copied_code": self.copied_code,
            "growth": round(self.growth, 3),
            "max_growth": self.max_growth,
        }


# ---------------------------------------------------------------------------------------------
# The three primitive transformations on real blocks
# ---------------------------------------------------------------------------------------------


def _copy_blocks(g: FlowGraph, blocks: Sequence[int]) -> dict:
    """Duplicate ``blocks``; edges between them go to the copies, others keep their targets."""
    mapping = {}
    for b in blocks:
        mapping[b] = g.add_block([], g.origin[b], g.synth[b], g.size[b], g.edge_sets[b])
    for b in blocks:
        g.succs[mapping[b]] = [mapping.get(s, s) for s in g.succs[b]]
    return mapping


def _redirect(g: FlowGraph, srcs, old: int, new: int) -> None:
    for u in srcs:
        g.succs[u] = [new if s == old else s for s in g.succs[u]]


def forward_copy(g: FlowGraph, ag: ct.AbstractGraph, u, v, region: Sequence) -> list:
    """Give the abstract edge u -> v its own copy of ``region`` (the abstract nodes reached from v
    before the point where u's paths meet). Returns the new blocks."""
    blocks = sorted(b for a in region for b in ag.node[a].blocks)
    target = ag.node[v].entry
    srcs = [b for b in ag.node[u].blocks if target in g.succs[b]]
    mapping = _copy_blocks(g, blocks)
    _redirect(g, srcs, target, mapping[target])
    return list(mapping.values())


def _peel(g: FlowGraph, ag: ct.AbstractGraph, comp: Sequence, header) -> set:
    """The blocks Backward Copy duplicates: what the extra entries reach in the loop before the header."""
    loop_blocks = {b for a in comp for b in ag.node[a].blocks}
    h = ag.node[header].entry
    extra = [ag.node[e].entry for e in ag.loop_entries(comp) if e != header]
    peel, stack = set(extra), list(extra)
    while stack:
        b = stack.pop()
        for s in g.succs[b]:
            if s in loop_blocks and s != h and s not in peel:
                peel.add(s)
                stack.append(s)
    return peel


def backward_copy(g: FlowGraph, ag: ct.AbstractGraph, comp: Sequence, header) -> list:
    """Loop peeling: copy what the extra entries reach inside the loop before the header, and
    point every edge entering the loop elsewhere than the header at the copy (Fig. 9)."""
    loop_blocks = {b for a in comp for b in ag.node[a].blocks}
    extra = [ag.node[e].entry for e in ag.loop_entries(comp) if e != header]
    peel = _peel(g, ag, comp, header)
    outside = [b for b in range(g.n) if b not in loop_blocks]
    mapping = _copy_blocks(g, sorted(peel))
    copies = set(mapping.values())
    for p in outside:
        if p in copies:
            continue
        g.succs[p] = [mapping[s] if s in peel and s in extra else s for s in g.succs[p]]
    return sorted(copies)


def cut(g: FlowGraph, ag: ct.AbstractGraph, comp: Sequence, header, predicated_flags: bool = False) -> list:
    """Move every exit of the loop to one latch (Fig. 8): exit edges set ``exit`` and the flag of
    their target, back edges clear ``exit``; the latch loops back while ``exit`` is clear and then
    tests the flags in turn to resume at the right place after the loop."""
    loop_blocks = {b for a in comp for b in ag.node[a].blocks}
    h = ag.node[header].entry
    exit_edges, back_edges, targets = [], [], []
    for b in sorted(loop_blocks):
        for k, s in enumerate(g.succs[b]):
            if s not in loop_blocks:
                exit_edges.append((b, k, s))
                if s not in targets:
                    targets.append(s)
            elif s == h:
                back_edges.append((b, k))
    exit_flag = g.n_flags
    target_flags = list(range(g.n_flags + 1, g.n_flags + len(targets)))  # last target is the default
    g.n_flags += len(targets)
    new = []
    resume = []
    for x in targets:
        if x == g.exit:
            # a return from inside the loop becomes a return after it
            x = g.add_block([g.exit], synth=("ret",), size=1)
            new.append(x)
        resume.append(x)
    # flag tests after the loop, the last target taken when no flag is set
    nxt = _test_chain(g, resume, target_flags, new)
    latch = g.add_block([nxt, h], synth=("test", exit_flag), size=2)
    new.append(latch)
    for b, k in back_edges:
        _set_on_edge(g, b, k, {exit_flag: False}, latch, predicated_flags, new)
    for b, k, s in exit_edges:
        i = targets.index(s)
        flags = {exit_flag: True}
        flags.update({f: (j == i) for j, f in enumerate(target_flags)})
        _set_on_edge(g, b, k, flags, latch, predicated_flags, new)
    return new


def _set_on_edge(g: FlowGraph, b: int, k: int, flags: dict, target: int, predicated_flags: bool, new: list) -> None:
    """Send successor slot ``k`` of block ``b`` to ``target``, writing ``flags`` on the way."""
    if not flags:
        g.succs[b][k] = target
        return
    if g.synth[b] is None and g.origin[b] not in g.stub_only and (len(g.succs[b]) == 1 or predicated_flags):
        # the block writes the flags itself: a one-successor block at its end (free), a
        # branching block under the condition of this edge (smaller code, but the predicated
        # writes issue on every pass through the block)
        sets = g.edge_sets[b] or {}
        sets[k] = {**sets.get(k, {}), **flags}
        g.edge_sets[b] = sets
        g.size[b] += len(flags)
        g.succs[b][k] = target
        return
    stub = g.add_block([target], synth=("set", flags), size=len(flags) + 1)
    g.succs[b][k] = stub
    new.append(stub)


def _clear_at_entry(g: FlowGraph, flags: list, new: list) -> None:
    """Guard flags are read on paths that never write them: clear them at function entry (PTX
    registers start undefined), in one block that becomes the entry."""
    if g.init is None:
        g.init = g.add_block([g.entry], synth=("set", {}), size=1)
        g.entry = g.init
        new.append(g.init)
    g.synth[g.init][1].update({f: False for f in flags})
    g.size[g.init] = len(g.synth[g.init][1]) + 1


def _test_chain(g: FlowGraph, targets: list, flags: list, new: list) -> int:
    """Blocks testing ``flags[i]`` in turn to resume at ``targets[i]``; the last target is the default."""
    nxt = targets[-1]
    for i in range(len(targets) - 2, -1, -1):
        nxt = g.add_block([targets[i], nxt], synth=("test", flags[i]), size=2)
        new.append(nxt)
    return nxt


def entry_dispatch(g: FlowGraph, ag: ct.AbstractGraph, comp: Sequence, header, predicated_flags: bool = False) -> list:
    """Make a multi-entry loop single-entry without copying (Backward Copy past the growth limit):
    every edge into any entry of the loop sets that entry's flag and goes to a new header, a chain of
    flag tests that resumes at the entry."""
    # (the function entry is never one of them: every block reached from it that reaches the loop
    # is in the loop, so a loop holding the function entry has no other entry)
    entries = [ag.node[e].entry for e in sorted(ag.loop_entries(comp), key=lambda a: ag.node[a].entry)]
    new: list = []
    flags = g.new_flags(len(entries) - 1)
    edges = [(b, k, s) for b in range(g.n) for k, s in enumerate(g.succs[b]) if s in entries]
    dispatch = _test_chain(g, entries, flags, new)
    for b, k, s in edges:
        i = entries.index(s)
        _set_on_edge(g, b, k, {f: (j == i) for j, f in enumerate(flags)}, dispatch, predicated_flags, new)
    return new


def guard(g: FlowGraph, ag: ct.AbstractGraph, order: Sequence, leaves: Sequence[int],
          predicated_flags: bool = False) -> list:
    """Structure an acyclic region without copying (Forward Copy past the growth limit).

    ``order`` lists the region's abstract nodes in topological order, the entry first; edges to
    ``leaves`` (real blocks) leave the region. Every node after the first runs behind a test of its
    own flag (cleared as it starts); every edge out of a node sets its target's flag (or, leaving,
    the Cut-style flag of its target) and falls through to the next test, so the region becomes a
    chain of if-thens followed by the tests choosing where to leave.
    """
    new: list = []
    node_flags = dict(zip(order[1:], g.new_flags(len(order) - 1)))
    leave_flags = g.new_flags(len(leaves) - 1)
    _clear_at_entry(g, list(node_flags.values()), new)
    resume = []
    for x in leaves:
        if x == g.exit and len(leaves) > 1:
            x = g.add_block([g.exit], synth=("ret",), size=1)  # a test block cannot return
            new.append(x)
        resume.append(x)
    after = {order[-1]: _test_chain(g, resume, leave_flags, new)}
    for i in range(len(order) - 1, 0, -1):
        a = order[i]
        start = g.add_block([ag.node[a].entry], synth=("set", {node_flags[a]: False}), size=2)
        after[order[i - 1]] = g.add_block([start, after[a]], synth=("test", node_flags[a]), size=2)
        new += [start, after[order[i - 1]]]
    entry_of = {ag.node[a].entry: a for a in order}
    for a in order:
        mine = set(ag.node[a].blocks)
        for b in sorted(mine):
            for k, s in enumerate(g.succs[b]):
                if s in mine:
                    continue
                if s in entry_of and entry_of[s] != order[0]:
                    flags = {node_flags[entry_of[s]]: True}
                else:
                    i = leaves.index(s)
                    flags = {f: (j == i) for j, f in enumerate(leave_flags)}
                _set_on_edge(g, b, k, flags, after[a], predicated_flags, new)
    return new


# ---------------------------------------------------------------------------------------------
# The driver
# ---------------------------------------------------------------------------------------------


def _acyclic_region_from(sl, start, stop, virtual=()) -> list:
    """What ``start`` reaches before ``stop``; the virtual continue/break nodes of a loop body are
    boundaries too (a copy's edge to them keeps its real target: the header or the loop exit)."""
    seen, stack = {start}, [start]
    while stack:
        x = stack.pop()
        for s in sl[x]:
            if s != stop and s not in seen and s not in virtual:
                seen.add(s)
                stack.append(s)
    return sorted(seen)


def _forward_copy_plan(ag, ids, sl, entry, sink, virtual=()):
    """The next Forward Copy on the acyclic region ``sl``: (u, v, region) as abstract nodes, or None."""
    cands = ct.forward_copy_candidates(sl, entry, sink, virtual)
    if not cands:
        return None
    u, v, stop = cands[0]
    region = _acyclic_region_from(sl, v, stop, virtual)
    if any(x in virtual or x == sink for x in region):
        raise StructurizeError("internal: a forward-copy region reached a virtual node")
    return ids[u], ids[v], [ids[x] for x in region]


def _topological(sl, entry, skip=()) -> list:
    """Reverse post-order of the acyclic successor lists ``sl`` from ``entry``, without ``skip``."""
    rpo = list(reversed(ct._postorder({i: [t for t in row if t not in skip] for i, row in enumerate(sl)}, entry)))
    return [x for x in rpo if x not in skip]


DEFAULT_MAX_GROWTH = 2.0


def structurize_graph(g: FlowGraph, max_blocks: int = 100_000, log: Optional[list] = None,
                      predicated_flags: bool = False, max_growth: float = DEFAULT_MAX_GROWTH):
    """Structurize ``g`` in place; returns (g, StructStats). ``log`` receives (step, detail) pairs.
    ``predicated_flags``: Cut writes its flags with predicated ``setp`` in the branching block
    instead of a stub block per cut edge (fewer static, more dynamic instructions).
    ``max_growth``: Forward and Backward Copy may duplicate at most (max_growth - 1) x the original
    code; past that, a guard or an entry dispatch (flags, linear growth) takes their place."""
    if not max_growth >= 1:
        raise StructurizeError(f"max_growth must be at least 1 (the original code), got {max_growth}")
    t0 = time.perf_counter()
    stats = StructStats(
        branch_instructions=sum(1 for b in range(g.n) if len(set(g.succs[b])) > 1),
        old_code_size=g.code_size(),
        max_growth=float(max_growth),
    )
    budget = (max_growth - 1) * stats.old_code_size

    def affordable(blocks) -> bool:
        cost = sum(g.size[b] for b in blocks)
        if stats.copied_code + cost > budget:
            return False
        stats.copied_code += cost
        return True

    while True:
        if g.n > max_blocks:
            raise StructurizeError(
                f"structurizing stopped after growing to {g.n} blocks (limit {max_blocks}): "
                "Forward Copy expands this CFG exponentially")
        ag = ct.AbstractGraph(g.n, g.succs, g.entry, g.exit)
        ag.reduce_patterns()
        if ag.is_reduced:
            break
        loop = ag.innermost_loop()
        if loop is not None:
            comp, header = loop
            if len(ag.loop_entries(comp)) > 1:
                if affordable(_peel(g, ag, comp, header)):
                    new = backward_copy(g, ag, comp, header)
                    stats.backward_copies += 1
                    _note(log, "backward_copy", {"header": ag.node[header].entry, "new_blocks": new})
                else:
                    new = entry_dispatch(g, ag, comp, header, predicated_flags)
                    stats.entry_dispatches += 1
                    _note(log, "entry_dispatch", {"header": ag.node[header].entry, "new_blocks": new})
                continue
            if ct.loop_needs_cut(ag, comp, header):
                new = cut(g, ag, comp, header, predicated_flags)
                stats.cuts += 1
                _note(log, "cut", {"header": ag.node[header].entry, "new_blocks": new})
                continue
            ids, sl, K, B, T, exits = ct.loop_body_graph(ag, comp, header)
            plan = _forward_copy_plan(ag, ids, sl, 0, T, (K, B))
            if plan is None:
                raise StructurizeError("internal: a single-entry, single-exit loop did not reduce")
            leaves = [ag.node[header].entry] + list(dict.fromkeys(ag.node[x].entry for _, x in exits))
            order = [ids[i] for i in _topological(sl, 0, (K, B, T))]
        else:
            if g.exit is None:
                raise StructurizeError("an acyclic CFG without an exit block cannot be structurized")
            ids, index, sl = ag.compact()
            plan = _forward_copy_plan(ag, ids, sl, index[ag.entry], index[g.exit])
            if plan is None:
                raise StructurizeError("internal: no transformation applies to an unstructured acyclic CFG")
            leaves = [g.exit]
            order = [ids[i] for i in _topological(sl, index[ag.entry], (index[g.exit],))]
        u, v, region = plan
        if affordable(b for a in region for b in ag.node[a].blocks):
            new = forward_copy(g, ag, u, v, region)
            stats.forward_copies += 1
            _note(log, "forward_copy", {"edge": (ag.node[u].entry, ag.node[v].entry), "new_blocks": new})
        else:
            new = guard(g, ag, order, leaves, predicated_flags)
            stats.guards += 1
            _note(log, "guard", {"entry": ag.node[order[0]].entry, "new_blocks": new})
    _prune_unreachable(g)
    stats.new_code_size = g.code_size()
    stats.transform_ms = (time.perf_counter() - t0) * 1e3
    return g, stats


def _note(log, step, detail):
    if log is not None:
        log.append((step, detail))


def _prune_unreachable(g: FlowGraph) -> None:
    """Blocks no longer reachable (a fully redirected original) are dropped from the code size but
    kept as ids, so ``origin`` stays valid; callers that emit code skip them."""
    g.live = ct._reachable(g.n, g.succs, g.entry)


def structurize(target, **kw):
    """Structurize a :class:`FlowGraph` or an IR ``Function``/``Module`` -> (result, StructStats).

    For IR input the result is a new ``Function`` (or a ``Module`` whose every function is
    transformed; its StructStats sums the functions and keeps them in ``per_function``)."""
    if isinstance(target, FlowGraph):
        return structurize_graph(target, **kw)
    if isinstance(target, Module):
        return structurize_module(target, **kw)
    if isinstance(target, Function):
        return structurize_function(target, **kw)
    raise TypeError(f"cannot structurize a {type(target).__name__}")


# ---------------------------------------------------------------------------------------------
# IR level: functions in, functions out
# ---------------------------------------------------------------------------------------------


@dataclass
class _Term:
    """How a basic block ends; ``succs`` positions follow this terminator's targets."""

    kind: str  # "fall" | "jump" | "cond" | "ret" | "brx"
    instr: Optional[Instruction] = None  # the original terminator (bra/brx/ret/exit), if any
    table: tuple = ()  # brx.idx targets (labels)


def _function_graph(func: Function, cfg) -> tuple:
    """FlowGraph (positional successors) + per-block body instructions and terminators."""
    instrs = func.instructions
    exit_id = cfg.exit
    bodies, terms, succs = [], [], []
    for blk in cfg.blocks:
        if blk.id == exit_id:
            bodies.append([])
            terms.append(_Term("exit"))
            succs.append([])
            continue
        fall = blk.id + 1 if blk.id + 1 < exit_id and cfg.blocks[blk.id + 1].start == blk.end else exit_id
        body = list(instrs[blk.start:blk.end])
        last = body[-1] if body else None

        def target(name):
            idx = func.labels[name]
            return exit_id if idx >= len(instrs) else cfg.block_of_instr[idx]

        if last is not None and last.base == "bra":
            body.pop()
            t = int(target(last.operands[0].name))
            if last.pred is None:
                terms.append(_Term("jump", last))
                succs.append([t])
            else:
                terms.append(_Term("cond", last))
                succs.append([t, fall])
        elif last is not None and last.base == "brx":
            body.pop()
            table = tuple(func.jump_tables[last.operands[1].name])
            terms.append(_Term("brx", last, table))
            succs.append([int(target(x)) for x in table] + ([fall] if last.pred is not None else []))
        elif last is not None and last.is_exit:
            body.pop()
            if last.pred is None:
                terms.append(_Term("ret", last))
                succs.append([exit_id])
            else:
                terms.append(_Term("cond", last))
                succs.append([exit_id, fall])
        else:
            terms.append(_Term("fall"))
            succs.append([fall])
        bodies.append(body)
    size = [len(cfg.instructions(b.id)) for b in cfg.blocks]
    g = FlowGraph(succs, cfg.entry, exit_id, size=size)
    # a jump-table branch cannot be predicated per target: its cut edges go through stubs
    g.stub_only = {b for b, t in enumerate(terms) if t.kind == "brx"}
    return g, bodies, terms


def _fresh_prefix(func: Function, stem: str) -> str:
    used = {d.prefix for d in func.reg_decls} | {n for d in func.reg_decls for n in d.names}
    prefix, k = f"%{stem}", 0
    while any(u.startswith(prefix) for u in used):
        k += 1
        prefix = f"%{stem}{k}"
    return prefix


def _ins(opcode, operands, pred=None, negated=False, op_class=OpClass.BRANCH) -> Instruction:
    parts = opcode.split(".")
    ins = Instruction(opcode, parts[0], tuple(parts[1:]), tuple(operands), pred, negated, op_class=op_class)

    ins.text = format_instruction(ins)
    return ins


def _emit_function(func: Function, g: FlowGraph, bodies, terms, orig_labels) -> Function:
    exit_id = g.exit
    live = ct._reachable(g.n, g.succs, g.entry)
    # layout: the original blocks keep their source order (an untouched kernel prints unchanged, so
    # the code-size delta counts only what the transformations add); copies and Cut blocks follow
    # in creation order, reached through explicit branches; the entry (a flag-clearing block once
    # a guard or dispatch made one) comes first
    order = sorted((b for b in range(g.n) if live[b] and b != exit_id), key=lambda b: b != g.entry)
    existing = set(func.labels) | set(func.jump_tables)
    labels, counter = {}, [0]

    def fresh(stem):
        while True:
            counter[0] += 1
            name = f"$L__{stem}{counter[0]}"
            if name not in existing:
                existing.add(name)
                return name

    for b in order:
        o = g.origin[b]
        # an original keeps its PTX label ($L__blk_N if it had none); copies and Cut blocks get
        # fresh $L__struct_N labels
        labels[b] = orig_labels[o] or fresh("blk_") if o == b else fresh("struct_")
    flag_prefix = _fresh_prefix(func, "cf")
    flag = lambda f: Reg(f"{flag_prefix}{f}")  # noqa: E731
    out, new_labels, tables = [], {}, dict(func.jump_tables)
    pragmas_by_obj = {}
    for idx, text in func.directives.get("pragma", []):
        if idx < len(func.instructions):
            pragmas_by_obj.setdefault(id(func.instructions[idx]), []).append(text)
    new_pragmas = []
    for pos, b in enumerate(order):
        nxt = order[pos + 1] if pos + 1 < len(order) else None
        new_labels[labels[b]] = len(out)
        ss = g.succs[b]

        def goto(t):
            if t == exit_id:
                out.append(_ins("ret", (), op_class=OpClass.EXIT))
            elif t != nxt:
                out.append(_ins("bra.uni", (Label(labels[t]),)))

        def cond(pred, negated, t, template=None):
            if t == exit_id:
                base = template.opcode if template is not None and template.is_exit else "ret"
                out.append(_ins(base, (), Reg(pred.name), negated, OpClass.EXIT))
            else:
                out.append(_ins("bra", (Label(labels[t]),), pred, negated))

        def set_flags(flags, guard=None):
            pred, negated = guard if guard else (None, False)
            for f, value in flags.items():
                # `1 != 0` is true, `1 == 0` false: a predicate constant ptxas folds
                out.append(_ins(f"setp.{'ne' if value else 'eq'}.u32", (flag(f), Imm(1, "1"), Imm(0, "0")),
                                pred, negated, op_class=OpClass.ALU))

        o = g.origin[b]
        if o < 0:
            kind = g.synth[b][0]
            if kind == "set":
                set_flags(g.synth[b][1])
                goto(ss[0])
            elif kind == "test":
                cond(flag(g.synth[b][1]), False, ss[0])
                goto(ss[1])
            else:  # ret
                out.append(_ins("ret", (), op_class=OpClass.EXIT))
            continue
        for ins in bodies[o]:
            if id(ins) in pragmas_by_obj:
                new_pragmas += [(len(out), t) for t in pragmas_by_obj[id(ins)]]
            out.append(ins)
        term = terms[o]
        for slot, flags in sorted((g.edge_sets[b] or {}).items()):
            if term.kind == "cond":
                # slot 0 is taken when the branch's guard holds, slot 1 when it does not
                guard = (Reg(term.instr.pred.name), term.instr.pred_negated != (slot == 1))
            else:
                guard = None
            set_flags(flags, guard)
        if term.kind == "fall":
            goto(ss[0])
        elif term.kind == "jump":
            if ss[0] == exit_id:
                out.append(_ins("ret", (), op_class=OpClass.EXIT))
            else:
                out.append(_ins(term.instr.opcode, (Label(labels[ss[0]]),)))
        elif term.kind == "ret":
            if ss[0] == exit_id:
                out.append(term.instr)
            else:  # a return moved behind a Cut latch
                goto(ss[0])
        elif term.kind == "cond":
            cond(term.instr.pred, term.instr.pred_negated, ss[0], term.instr)
            goto(ss[1])
        elif term.kind == "brx":
            n_table = len(term.table)
            targets = tuple(labels[t] for t in ss[:n_table])
            name = term.instr.operands[1].name
            if targets != tuple(tables.get(name, ())):
                name = fresh("table_")
                tables[name] = list(targets)
            out.append(_ins(term.instr.opcode, (term.instr.operands[0], Label(name)), term.instr.pred,
                            term.instr.pred_negated))
            if len(ss) > n_table:
                goto(ss[-1])
    directives = {k: v for k, v in func.directives.items() if k not in ("loc", "pragma")}
    if new_pragmas:
        directives["pragma"] = new_pragmas
    reg_decls = list(func.reg_decls)
    if g.n_flags:
        reg_decls.append(RegDecl("pred", flag_prefix, g.n_flags, tuple(f"{flag_prefix}{i}" for i in range(g.n_flags))))
    used_tables = {i.operands[1].name for i in out if i.base == "brx"}
    result = replace(func, instructions=out, labels=new_labels, reg_decls=reg_decls, directives=directives,
                   jump_tables={k: v for k, v in tables.items() if k in used_tables})
    _LAST_LABELS[id(result)] = labels
    return result


_LAST_LABELS: dict = {}  # emitted Function id -> {graph block: label}, handed to StructStats


def structurize_function(func: Function, **kw):
    """Structurize one function -> (new Function, StructStats). The input is not modified."""
    t0 = time.perf_counter()
    cfg = build_cfg(func)
    g, bodies, terms = _function_graph(func, cfg)
    g, stats = structurize_graph(g, **kw)
    new = _emit_function(func, g, bodies, terms, [b.label for b in cfg.blocks])
    stats.graph = g  # the transformed block graph (origin/synth per block), for inspection
    stats.labels = _LAST_LABELS.pop(id(new), {})
    stats.branch_instructions = sum(1 for i in func.instructions if i.base in ("bra", "brx"))
    stats.old_code_size = len(func.instructions)
    stats.new_code_size = len(new.instructions)
    stats.transform_ms = (time.perf_counter() - t0) * 1e3
    return new, stats


def structurize_module(module: Module, **kw):
    """Structurize every function of a module -> (new Module, summed StructStats with
    ``per_function``)."""
    total = StructStats(max_growth=float(kw.get("max_growth", DEFAULT_MAX_GROWTH)))
    total.per_function = {}
    funcs = {}
    for name, f in module.functions.items():
        new, s = structurize_function(f, **kw)
        funcs[name] = new
        total.per_function[name] = s
        for k in ("branch_instructions", "cuts", "forward_copies", "backward_copies", "old_code_size",
                  "new_code_size", "transform_ms", "guards", "entry_dispatches", "copied_code"):
            setattr(total, k, getattr(total, k) + getattr(s, k))
    return replace(module, functions=funcs), total
