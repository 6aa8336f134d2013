"""Control tree by structural analysis, and the interacting edges that make a CFG unstructured.

Wu et al. 2012 §2–3 (after Zhang & D'Hollander and Muchnick ch. 7). A CFG is *structured* when it can be
reduced to a single node by repeatedly collapsing the structured patterns

* ``block``         a chain n -> s where s has n as its only predecessor (sequence),
* ``if_then``       n -> {a, f}, a -> f, a entered only from n,
* ``if_then_else``  n -> {a, b}, a -> f, b -> f, both arms entered only from n,
* ``case``          the same with more than two arms (``brx.idx``),
* ``self_loop``     n -> n on a single basic block,
* ``do_while``      n -> n where n is a collapsed region (a natural loop whose body reduced to one node;
                    the test sits at the bottom),
* ``while``         n -> {b, f}, b -> n, b entered only from n (test at the top).

Whatever cannot be collapsed is an ``unstructured`` region. The edges that stop the collapse are the
paper's *interacting edges*: an acyclic edge into a shared node that is not the post-dominator
where the branching source's paths meet (removing it leaves a hammock; Forward Copy's target), an
extra entry into a loop (Backward Copy's target), and a loop exit other than the loop's natural
exit at its header or single latch (Cut's target).

Graphs are given as ``n`` nodes with positional successor lists (``succs[b][k]`` is the target of
the branch's k-th slot; duplicates allowed), an ``entry`` and an optional virtual ``exit`` node that
every returning block flows to (the CFG layer's convention). Post-dominators and dominators come
from :mod:`simt_fast.ir.graph`; this module only adds the pattern matching on top.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional, Sequence

import numpy as np

from . import graph

KINDS = ("bb", "block", "if_then", "if_then_else", "case", "self_loop", "while", "do_while", "unstructured")


# ---------------------------------------------------------------------------------------------
# Graph-algorithm adapters (the algorithms themselves live in simt_fast.ir.graph)
# ---------------------------------------------------------------------------------------------


def ipdom_of(n: int, succ_lists: Sequence[Sequence[int]], exit: int) -> list:
    """Immediate post-dominator of each node (``-1`` for ``exit``); exitless loops as in ``graph``."""
    ptr, idx = graph.csr_from_lists(succ_lists)
    return [int(x) for x in graph.immediate_postdominators(n, ptr, idx, exit)]


def idom_of(n: int, succ_lists: Sequence[Sequence[int]], entry: int) -> list:
    """Immediate dominator of each node (``-1`` for ``entry`` and unreachable nodes)."""
    ptr, idx = graph.csr_from_lists(succ_lists)
    out = [int(x) for x in graph.immediate_dominators(n, ptr, idx, entry)]
    out[entry] = -1
    return out


def _reachable(n, succ_lists, start, avoid=None) -> list:
    """Nodes reachable from ``start`` without entering ``avoid`` (bool list)."""
    seen = [False] * n
    if start == avoid:
        return seen
    seen[start] = True
    stack = [start]
    while stack:
        b = stack.pop()
        for s in succ_lists[b]:
            if not seen[s] and s != avoid:
                seen[s] = True
                stack.append(s)
    return seen


def _tree_intervals(idom: Sequence[int], root: int):
    """Pre/post DFS numbers of the dominator tree (``a`` dominates ``b`` iff b's interval nests in
    a's); unreachable nodes get empty intervals."""
    kids = graph.dominator_tree_children([root if i == root else d for i, d in enumerate(idom)])
    n = len(idom)
    pre, post = [-1] * n, [-2] * n
    clock = 0
    stack = [(root, False)]
    while stack:
        v, done = stack.pop()
        if done:
            post[v] = clock
            clock += 1
            continue
        pre[v] = clock
        clock += 1
        stack.append((v, True))
        stack.extend((c, False) for c in kids[v])
    return pre, post


def _dense(nodes: Sequence, succ: dict):
    """Renumber the subgraph induced by ``nodes`` densely: (ids, successor lists)."""
    ids = list(nodes)
    index = {a: i for i, a in enumerate(ids)}
    return ids, [[index[s] for s in succ[a] if s in index] for a in ids]


def _postorder(succ: dict, entry) -> list:
    """DFS post-order of an adjacency dict from ``entry`` (via ``graph.reverse_postorder``)."""
    ids, sl = _dense(list(succ), succ)
    ptr, idx = graph.csr_from_lists(sl)
    rpo = graph.reverse_postorder(len(ids), ptr, idx, ids.index(entry))
    return [ids[i] for i in rpo[::-1]]


def strongly_connected_components(nodes: Sequence, succ: dict) -> list:
    """SCCs of the subgraph induced by ``nodes`` (``graph.strongly_connected_components``)."""
    ids, sl = _dense(nodes, succ)
    return [[ids[i] for i in comp] for comp in graph.strongly_connected_components(len(ids), sl)]


# ---------------------------------------------------------------------------------------------
# Control tree
# ---------------------------------------------------------------------------------------------


@dataclass
class ControlNode:
    """A region of the control tree: a basic block (``bb``) or a pattern over child regions."""

    kind: str
    entry: int  # the basic block through which the region is entered
    children: list = field(default_factory=list)
    blocks: tuple = ()  # every basic block inside, sorted

    def walk(self):
        yield self
        for c in self.children:
            yield from c.walk()

    @property
    def is_structured(self) -> bool:
        return all(node.kind != "unstructured" for node in self.walk())

    def to_dict(self, labels: Optional[Sequence[str]] = None) -> dict:
        if self.kind == "bb":
            return {"kind": "bb", "block": labels[self.entry] if labels else self.entry}
        return {"kind": self.kind, "children": [c.to_dict(labels) for c in self.children]}

    def pretty(self, labels: Optional[Sequence[str]] = None, indent: int = 0) -> str:
        name = (labels[self.entry] if labels else f"B{self.entry}") if self.kind == "bb" else self.kind
        lines = ["  " * indent + name]
        for c in self.children:
            lines.append(c.pretty(labels, indent + 1))
        return "\n".join(lines)


class AbstractGraph:
    """A CFG whose nodes are progressively collapsed into control-tree regions.

    Abstract node ids start as the block ids; every collapse creates a fresh id. Successor and
    predecessor sets are insertion-ordered dicts so results do not depend on hash order.
    """

    def __init__(self, n: int, succs: Sequence[Sequence[int]], entry: int, exit: Optional[int]):
        self.n_blocks = n
        self.entry = entry
        self.exit = exit
        live = _reachable(n, succs, entry)
        self.succ: dict = {}
        self.pred: dict = {}
        self.node: dict = {}
        for b in range(n):
            if live[b]:
                self.succ[b] = {}
                self.pred[b] = {}
                self.node[b] = ControlNode("bb", b, [], (b,))
        for b in range(n):
            if live[b]:
                for s in succs[b]:
                    self.succ[b][s] = None
                    self.pred[s][b] = None
        self._next = n
        self.unstructured_regions: list = []

    # -- graph surgery ---------------------------------------------------------------------
    def collapse(self, members: list, kind: str, children: list) -> int:
        mset = set(members)
        self.succ_before = {m: set(self.succ[m]) for m in members}
        new = self._next
        self._next += 1
        succ = {s: None for m in members for s in self.succ[m] if s not in mset}
        pred = {p: None for m in members for p in self.pred[m] if p not in mset}
        blocks = tuple(sorted(b for m in members for b in self.node[m].blocks))
        entry_block = self.node[members[0]].entry
        for m in members:
            for s in self.succ[m]:
                if s not in mset:
                    self.pred[s].pop(m, None)
            for p in self.pred[m]:
                if p not in mset:
                    self.succ[p].pop(m, None)
            del self.succ[m], self.pred[m], self.node[m]
        self.succ[new], self.pred[new] = succ, pred
        for s in succ:
            self.pred[s][new] = None
        for p in pred:
            self.succ[p][new] = None
        self.node[new] = ControlNode(kind, entry_block, children, blocks)
        if self.entry in mset:
            self.entry = new
        if kind not in ("self_loop", "do_while", "while") and any(members[0] in self.succ_before[m] for m in members):
            # an edge back to the region's entry from inside (e.g. a latch) is now a self loop
            self.succ[new][new] = None
            self.pred[new][new] = None
        return new

    # -- pattern matching --------------------------------------------------------------------
    def _fixed(self, s) -> bool:
        """Nodes that never become an arm/body: the entry and the virtual exit."""
        return s == self.entry or s == self.exit

    def try_reduce(self, n) -> bool:
        if n == self.exit:
            return False
        succ = list(self.succ[n])
        node = self.node[n]
        if n in self.succ[n]:
            # A loop whose body is one region: a self loop on a basic block, else a do-while
            # (the body's last block tests and branches back to the top).
            self.collapse([n], "self_loop" if node.kind == "bb" else "do_while", [node])
            return True
        if len(succ) == 1:
            s = succ[0]
            if not self._fixed(s) and len(self.pred[s]) == 1 and s not in self.succ[s]:
                kids = (node.children if node.kind == "block" else [node]) + (
                    self.node[s].children if self.node[s].kind == "block" else [self.node[s]])
                self.collapse([n, s], "block", kids)
                return True
            return False
        if len(succ) >= 2:
            bodies = [b for b in succ if not self._fixed(b) and b != n and list(self.pred[b]) == [n]
                      and list(self.succ[b]) == [n]]
            if bodies and len(succ) - len(bodies) <= 1:
                # Test at the top, body (or the arms of a switch in it) jumps back: a while loop
                # leaving to the remaining successor.
                self.collapse([n] + bodies, "while", [node] + [self.node[b] for b in bodies])
                return True
        if len(succ) >= 2:
            arms = [s for s in succ if not self._fixed(s) and s != n and len(self.pred[s]) == 1
                    and len(self.succ[s]) <= 1 and s not in self.succ[s]]
            others = [s for s in succ if s not in arms]
            if len(others) > 1:
                return False
            if others:
                follow = others[0]
                if any(set(self.succ[a]) - {follow} for a in arms):
                    return False
            else:
                targets = {t for a in arms for t in self.succ[a]}
                if len(targets) > 1:
                    return False
                follow = next(iter(targets)) if targets else None
            if follow == n:
                return False
            if len(succ) == 2:
                kind = "if_then" if others else "if_then_else"
            else:
                kind = "case"
            self.collapse([n] + arms, kind, [node] + [self.node[a] for a in arms])
            return True
        return False

    def reduce_patterns(self) -> None:
        """Collapse structured patterns in DFS post-order until none applies (Muchnick: after a
        collapse the new node is tried again before the walk goes on; passes repeat until stable)."""
        changed = True
        while changed:
            changed = False
            for n in _postorder(self.succ, self.entry):
                cur = n
                while cur in self.succ and self.try_reduce(cur):
                    cur = self._next - 1  # the node the collapse just made
                    changed = True

    @property
    def live_nodes(self) -> list:
        return [a for a in self.succ if a != self.exit]

    @property
    def is_reduced(self) -> bool:
        return len(self.live_nodes) <= 1 and not (self.live_nodes and self.live_nodes[0] in self.succ[self.live_nodes[0]])

    # -- analyses of the (stuck) abstract graph -----------------------------------------------
    def compact(self):
        """Dense renumbering: (ids list, index dict, positional succ lists)."""
        ids = list(self.succ)
        index = {a: i for i, a in enumerate(ids)}
        succ_lists = [[index[s] for s in self.succ[a]] for a in ids]
        return ids, index, succ_lists

    def rpo(self) -> list:
        return list(reversed(_postorder(self.succ, self.entry)))

    def header_of(self, comp: Sequence) -> int:
        """The loop header of an SCC: an entry node, preferring the earliest basic block
        (compilers lay the header out first; copies made by transformations get later ids)."""
        cset = set(comp)
        entries = [a for a in comp if a == self.entry or any(p not in cset for p in self.pred[a])]
        if not entries:
            entries = list(comp)
        return min(entries, key=lambda a: self.node[a].entry)

    def loop_entries(self, comp: Sequence) -> list:
        cset = set(comp)
        return [a for a in comp if a == self.entry or any(p not in cset for p in self.pred[a])]

    def innermost_loop(self, nodes: Optional[Sequence] = None):
        """A non-trivial SCC whose body (SCC minus its header) has no further cycle, or None."""
        nodes = list(self.succ) if nodes is None else list(nodes)
        for comp in strongly_connected_components(nodes, self.succ):
            if len(comp) == 1 and comp[0] not in self.succ[comp[0]]:
                continue
            header = self.header_of(comp)
            inner = self.innermost_loop([a for a in comp if a != header])
            return inner if inner is not None else (comp, header)
        return None

    def acyclic_unstructured_region(self):
        """Smallest stuck acyclic region: for a branch n, the nodes n dominates that are reached
        before n's immediate post-dominator (a single-entry region by dominance). The innermost is
        the one whose branch comes last in reverse post-order, so the walk starts from the end."""
        ids, index, sl = self.compact()
        n = len(ids)
        exit_i = index[self.exit] if self.exit in index else None
        idom = idom_of(n, sl, index[self.entry])
        ipdom = ipdom_of(n, sl, exit_i) if exit_i is not None else [-1] * n
        order = [index[a] for a in self.rpo()]
        rank = {b: r for r, b in enumerate(order)}
        pre, post = _tree_intervals(idom, index[self.entry])
        for b in reversed(order):
            if len(sl[b]) < 2:
                continue
            region = self._dominated_before(b, ipdom[b], pre, post, sl)
            if len(region) >= 2 and self._acyclic(region, sl):
                return [ids[x] for x in sorted(region, key=lambda x: rank[x])]
        return None

    @staticmethod
    def _dominated_before(b, stop, pre, post, sl) -> list:
        region, seen, stack = [], {b}, [b]
        while stack:
            x = stack.pop()
            region.append(x)
            for s in sl[x]:
                # s is dominated by b iff its dominator-tree interval nests in b's
                if s not in seen and s != stop and pre[b] <= pre[s] and post[s] <= post[b]:
                    seen.add(s)
                    stack.append(s)
        return region

    @staticmethod
    def _acyclic(region, sl) -> bool:
        rset = set(region)
        sub = {x: [s for s in sl[x] if s in rset] for x in region}
        return all(len(c) == 1 and c[0] not in sub[c[0]] for c in strongly_connected_components(region, sub))

    def cyclic_unstructured_region(self, comp: Sequence, header) -> list:
        """A stuck loop as a single-entry region: the SCC, plus (when it has several entries) every
        node on a path to it from the nearest common dominator of its entries."""
        entries = self.loop_entries(comp)
        if len(entries) == 1:
            return [header] + [a for a in comp if a != header]
        ids, index, sl = self.compact()
        idom = idom_of(len(ids), sl, index[self.entry])

        def chain(x):
            out = []
            while x != -1:
                out.append(x)
                x = idom[x]
            return out

        common = set(chain(index[entries[0]]))
        for e in entries[1:]:
            common &= set(chain(index[e]))
        d = next(x for x in chain(index[entries[0]]) if x in common)
        cset = {index[a] for a in comp}
        # nodes reachable from d (without leaving d's dominance) that reach the SCC
        preds = [[] for _ in ids]
        for x, ss in enumerate(sl):
            for s in ss:
                preds[s].append(x)
        back = set()
        stack = list(cset)
        while stack:
            x = stack.pop()
            if x in back:
                continue
            back.add(x)
            if x != d:
                stack.extend(preds[x])
        fwd = _reachable(len(ids), sl, d)
        region = [x for x in back if fwd[x]] + [x for x in cset if x not in back]
        region = [d] + [x for x in region if x != d]
        return [ids[x] for x in region]

    def collapse_unstructured(self) -> bool:
        """Collapse one stuck region into an ``unstructured`` node (acyclic first, innermost)."""
        region = self.acyclic_unstructured_region()
        if region is None:
            loop = self.innermost_loop()
            if loop is not None:
                region = self.cyclic_unstructured_region(*loop)
        if region is None:
            region = [self.entry] + [a for a in self.live_nodes if a != self.entry]
            if len(region) < 2:
                return False
        new = self.collapse(region, "unstructured", [self.node[a] for a in region])
        self.unstructured_regions.append(self.node[new])
        return True


# ---------------------------------------------------------------------------------------------
# Interacting edges on a stuck graph (shared with the structurizer)
# ---------------------------------------------------------------------------------------------


def forward_copy_candidates(succ_lists: Sequence[Sequence[int]], entry: int, sink: int, virtual=()) -> list:
    """Acyclic interacting edges of an acyclic region as (u, v, stop) triples: v is a shared node
    (several predecessors, not the sink nor a virtual node) and Forward Copy gives u its own copy of
    what v reaches before ``stop``. In order of preference:

    (a) v is not where u's paths meet (``stop = ipdom(u) != v``): Fig. 10's E1 and E2;
    (b) v is where its predecessors meet but not where the branch that dominates it meets
        (``ipdom(idom(v)) != v``): an edge elsewhere leaves that hammock early (Fig. 2(a));
    (c) any other shared node (``stop = ipdom(v)``), which alone would unfold the region into the
        tree of its paths (Fig. 10(c)), so a candidate exists while the region is not reduced.

    Each tier is ordered innermost first: latest v, then latest u, in topological order (Wu et al. 2012:
    E2 before E1).
    """
    n = len(succ_lists)
    ipdom = ipdom_of(n, succ_lists, sink)
    idom = idom_of(n, succ_lists, entry)
    preds = [[] for _ in range(n)]
    for u in range(n):
        for v in dict.fromkeys(succ_lists[u]):
            preds[v].append(u)
    order = list(reversed(_postorder({i: list(dict.fromkeys(s)) for i, s in enumerate(succ_lists)}, entry)))
    rank = {x: r for r, x in enumerate(order)}

    def postdominates(a, b):
        while b != -1 and b != a:
            b = ipdom[b]
        return b == a

    tiers = ([], [], [])
    for v in order:
        if v == sink or v in virtual:
            continue
        us = [u for u in preds[v] if u in rank]
        if len(us) < 2:
            continue
        late = [(u, v, ipdom[u]) for u in us if ipdom[u] != v]
        if late:
            tiers[0].extend(late)
            continue
        d = idom[v]
        f = ipdom[d] if d != -1 else -1
        if f != v and f != -1:
            stop = f if postdominates(f, v) else ipdom[v]
            tiers[1].extend((u, v, stop) for u in us)
        else:
            tiers[2].extend((u, v, ipdom[v]) for u in us)
    for tier in tiers:
        if tier:
            return sorted(tier, key=lambda e: (rank[e[1]], rank[e[0]]), reverse=True)
    return []


def loop_body_graph(ag: AbstractGraph, comp: Sequence, header):
    """The acyclic body of a single-entry loop: back edges go to a virtual ``continue`` node K, exit
    edges to a virtual ``break`` node B, both then to a sink T. Returns (ids, succ_lists, K, B, T,
    exit_edges) with exit_edges as abstract (u, target) pairs."""
    ids = [header] + [a for a in comp if a != header]
    index = {a: i for i, a in enumerate(ids)}
    K, B, T = len(ids), len(ids) + 1, len(ids) + 2
    sl, exits = [], []
    for a in ids:
        row = []
        for s in ag.succ[a]:
            if s == header:
                row.append(K)
            elif s in index:
                row.append(index[s])
            else:
                row.append(B)
                exits.append((a, s))
        sl.append(row)
    sl += [[T], [T], []]
    return ids, sl, K, B, T, exits


def natural_exit(ag: AbstractGraph, comp: Sequence, header, exits: list):
    """The exit a structured loop may keep: from its single latch (do-while) or else its header (while)."""
    latches = [a for a in comp if header in ag.succ[a]]
    if len(latches) == 1:
        for e in exits:
            if e[0] == latches[0]:
                return e
    for e in exits:
        if e[0] == header:
            return e
    return None


def loop_needs_cut(ag: AbstractGraph, comp: Sequence, header) -> bool:
    """Cut is needed unless the loop leaves through one edge taken on every iteration (its source
    post-dominates the header inside the body), i.e. a while/do-while exit."""
    ids, sl, K, B, T, exits = loop_body_graph(ag, comp, header)
    if not exits:
        return False
    if len(exits) > 1:
        return True
    src = ids.index(exits[0][0])
    ipdom = ipdom_of(len(sl), sl, T)
    x = 0
    while x != -1 and x != T:
        if x == src:
            return False
        x = ipdom[x]
    return True


def _abstract_to_real_edges(ag: AbstractGraph, u, v, succs) -> list:
    """Real (src block, dst block) edges behind the abstract edge u -> v."""
    target = ag.node[v].entry
    return [(b, target) for b in ag.node[u].blocks if target in succs[b]]


def interacting_edges(ag: AbstractGraph, succs: Sequence[Sequence[int]]) -> list:
    """Interacting edges of a pattern-reduced (stuck) graph as (src, dst, kind) on real blocks,
    kind in {"forward", "loop_entry", "loop_exit"}."""
    found = []
    loops = []
    # every stuck loop, innermost first: repeatedly peel innermost loops off a working set
    remaining = list(ag.succ)
    seen = set()
    while True:
        loop = ag.innermost_loop(remaining)
        if loop is None:
            break
        comp, header = loop
        key = frozenset(comp)
        if key in seen:
            break
        seen.add(key)
        loops.append((comp, header))
        remaining = [a for a in remaining if a != header]
    for comp, header in loops:
        cset = set(comp)
        for e in ag.loop_entries(comp):
            if e != header:
                for p in ag.pred[e]:
                    if p not in cset:
                        found += [(s, d, "loop_entry") for s, d in _abstract_to_real_edges(ag, p, e, succs)]
        ids, sl, K, B, T, exits = loop_body_graph(ag, comp, header)
        if loop_needs_cut(ag, comp, header):
            keep = natural_exit(ag, comp, header, exits) if len(exits) > 1 else None
            for u, x in exits:
                if (u, x) != keep:
                    found += [(s, d, "loop_exit") for s, d in _abstract_to_real_edges(ag, u, x, succs)]
        found += _first_pred_filter(ag, ids, forward_copy_candidates(sl, 0, T, (K, B)), succs)
    if ag.exit is not None and all(len(ag.loop_entries(comp)) == 1 for comp, _ in loops):
        # the acyclic part: drop the back edges of the stuck loops (the structurizer fixes those
        # loops first) and look for shared targets in what remains, if that is a DAG (a loop with
        # several entries is reported by its entry edges alone: peeling changes the rest)
        back = {(a, h) for comp, h in loops for a in comp if h in ag.succ[a]}
        ids = list(ag.succ)
        index = {a: i for i, a in enumerate(ids)}
        sl = [[index[t] for t in ag.succ[a] if (a, t) not in back] for a in ids]
        acyclic = all(len(c) == 1 and c[0] not in sl[c[0]] for c in graph.strongly_connected_components(len(ids), sl))
        if acyclic:
            found += _first_pred_filter(ag, ids, forward_copy_candidates(sl, index[ag.entry], index[ag.exit]), succs)
    first_kind = {}
    for src, dst, kind in found:
        first_kind.setdefault((src, dst), kind)  # a loop exit is also a forward edge: report it once
    return [(src, dst, kind) for (src, dst), kind in first_kind.items()]


def _first_pred_filter(ag, ids, cands, succs) -> list:
    """Of the candidate edges into one shared node, the earliest predecessor keeps the original
    (a tree edge of the depth-first unfolding); the later ones are the interacting edges."""
    by_target: dict = {}
    for u, v, _ in cands:
        by_target.setdefault(v, []).append(u)
    out = []
    for v, us in by_target.items():
        # cands are sorted latest first, so the last one listed is the earliest predecessor
        for u in us[:-1] if len(us) > 1 else us:
            out += [(s, d, "forward") for s, d in _abstract_to_real_edges(ag, ids[u], ids[v], succs)]
    return out


@dataclass
class ControlTree:
    """Structural-analysis result for one CFG."""

    root: ControlNode
    n_blocks: int
    entry: int
    exit: Optional[int]
    interacting_edges: list  # (src block, dst block, kind)
    unstructured: np.ndarray  # bool per block: source or target of an interacting edge
    regions: list  # the unstructured ControlNodes, innermost first

    @property
    def is_structured(self) -> bool:
        return not self.regions

    def to_dict(self, labels: Optional[Sequence[str]] = None) -> dict:
        name = (lambda b: labels[b]) if labels else (lambda b: b)
        return {
            "structured": self.is_structured,
            "tree": self.root.to_dict(labels),
            "interacting_edges": [{"src": name(s), "dst": name(d), "kind": k} for s, d, k in self.interacting_edges],
            "unstructured_blocks": [name(b) for b in np.flatnonzero(self.unstructured)],
        }


def build_control_tree(n: int, succs: Sequence[Sequence[int]], entry: int = 0, exit: Optional[int] = None) -> ControlTree:
    """Structural analysis of a CFG (blocks ``0..n-1``; ``exit`` is the virtual exit if any)."""
    _check_graph(n, succs, entry, exit)
    ag = AbstractGraph(n, succs, entry, exit)
    ag.reduce_patterns()
    edges = [] if ag.is_reduced else interacting_edges(ag, succs)
    while not ag.is_reduced:
        if not ag.collapse_unstructured():
            break
        ag.reduce_patterns()
    flags = np.zeros(n, dtype=bool)
    for s, d, _ in edges:
        flags[s] = flags[d] = True
    root = ag.node[ag.entry]
    return ControlTree(root, n, entry, exit, edges, flags, list(ag.unstructured_regions))


def control_tree_of_cfg(cfg) -> ControlTree:
    """The control tree of a :class:`simt_fast.ir.cfg.CFG` (virtual exit = ``cfg.exit``); also sets
    each ``BasicBlock.unstructured`` flag (source or target of an interacting edge)."""
    n = len(cfg.blocks)
    tree = build_control_tree(n, [list(b.succs) for b in cfg.blocks], cfg.entry, cfg.exit)
    for b in cfg.blocks:
        b.unstructured = bool(tree.unstructured[b.id])
    return tree


def _check_graph(n, succs, entry, exit):
    if len(succs) != n:
        raise ValueError(f"succs has {len(succs)} rows for {n} blocks")
    for b, ss in enumerate(succs):
        for s in ss:
            if not 0 <= s < n:
                raise ValueError(f"block {b} has successor {s} outside 0..{n - 1}")
    if not 0 <= entry < n:
        raise ValueError(f"entry {entry} outside 0..{n - 1}")
    if exit is not None and (not 0 <= exit < n or succs[exit]):
        raise ValueError(f"exit {exit} must be a block with no successors")
