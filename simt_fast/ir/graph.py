"""Pure graph algorithms on control-flow graphs given as ``n`` nodes + CSR successor arrays.

Every function takes ``n`` and the successors as CSR (``succ_ptr[n+1]``, ``succ_idx``), the form the
trace file and the timing core use; :func:`csr_from_lists` converts adjacency lists. Nothing here
knows about PTX, so the trace generator, the emulator and the analyses all share one
implementation.

* Dominators: Cooper, Harvey & Kennedy, "A Simple, Fast Dominance Algorithm" (2001) -- iterate
  ``idom`` over reverse post-order, intersecting along the current dominator tree.
* Post-dominators: the same algorithm on the reversed graph rooted at the (virtual) exit. A node
  that cannot reach the exit (an infinite loop) would have no post-dominator, so -- as numba's CFG
  layer does for exitless loops -- every node of each *sink* strongly connected component that
  cannot reach the exit gets a pseudo edge to the exit. This is the loops-without-exits rule
  generalised to irreducible regions.
* Control dependence: Ferrante, Ottenstein & Warren (1987). ``Y`` is control dependent on edge
  ``X -> S`` iff ``Y`` post-dominates ``S`` and ``Y`` does not strictly post-dominate ``X``; found by
  walking the post-dominator tree from ``S`` up to (excluding) ``ipdom(X)``.
* Natural loops: back edge ``t -> h`` where ``h`` dominates ``t``; body = ``h`` plus every node that
  reaches ``t`` without passing ``h``. Loops sharing a header are merged (one loop per header).

Conventions: ``idom[entry] = entry``, ``ipdom[exit] = -1``, nodes unreachable from the entry (for
dominators) get ``-1``. Arrays are ``int32``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = [
    "csr_from_lists",
    "lists_from_csr",
    "predecessors",
    "reverse_postorder",
    "immediate_dominators",
    "immediate_postdominators",
    "postdom_augmented_edges",
    "dominator_tree_children",
    "dominates",
    "control_dependence",
    "iterated_control_dependence",
    "natural_loops",
    "back_edges",
    "strongly_connected_components",
    "Loop",
]


# ---------------------------------------------------------------------------------------------
# Representation helpers
# ---------------------------------------------------------------------------------------------


def csr_from_lists(succs) -> tuple:
    """Adjacency lists -> ``(succ_ptr, succ_idx)`` int32 CSR arrays."""
    ptr = np.zeros(len(succs) + 1, np.int32)
    ptr[1:] = np.cumsum([len(s) for s in succs]) if len(succs) else []
    idx = np.fromiter((t for s in succs for t in s), dtype=np.int32, count=int(ptr[-1]))
    return ptr, idx


def lists_from_csr(n: int, succ_ptr, succ_idx) -> list:
    """``(succ_ptr, succ_idx)`` -> list of successor lists (plain ints)."""
    ptr = [int(x) for x in succ_ptr]
    idx = [int(x) for x in succ_idx]
    if len(ptr) != n + 1:
        raise ValueError(f"succ_ptr has {len(ptr)} entries, expected n+1 = {n + 1}")
    out = [idx[ptr[i] : ptr[i + 1]] for i in range(n)]
    for i, s in enumerate(out):
        for t in s:
            if not 0 <= t < n:
                raise ValueError(f"successor {t} of node {i} is outside 0..{n - 1}")
    return out


def _as_lists(n, succ_ptr, succ_idx):
    return lists_from_csr(n, succ_ptr, succ_idx)


def predecessors(n: int, succs: list) -> list:
    preds = [[] for _ in range(n)]
    for a in range(n):
        for b in succs[a]:
            if a not in preds[b]:
                preds[b].append(a)
    return preds


# ---------------------------------------------------------------------------------------------
# Orders and components
# ---------------------------------------------------------------------------------------------


def _postorder(n: int, succs: list, root: int) -> list:
    """Iterative DFS post-order from ``root`` (successors visited in list order)."""
    seen = [False] * n
    order = []
    seen[root] = True
    stack = [(root, 0)]
    while stack:
        node, i = stack[-1]
        s = succs[node]
        if i < len(s):
            stack[-1] = (node, i + 1)
            t = s[i]
            if not seen[t]:
                seen[t] = True
                stack.append((t, 0))
        else:
            stack.pop()
            order.append(node)
    return order


def reverse_postorder(n: int, succ_ptr, succ_idx, entry: int = 0) -> np.ndarray:
    """Nodes reachable from ``entry`` in reverse post-order (int32); unreachable nodes are omitted."""
    succs = _as_lists(n, succ_ptr, succ_idx)
    return np.array(_postorder(n, succs, entry)[::-1], np.int32)


def strongly_connected_components(n: int, succs: list) -> list:
    """Tarjan's SCCs (iterative), as a list of lists, in reverse topological order (sinks first)."""
    index = [-1] * n
    low = [0] * n
    on_stack = [False] * n
    stack = []
    comps = []
    counter = 0
    for root in range(n):
        if index[root] != -1:
            continue
        work = [(root, 0)]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack[root] = True
        while work:
            v, i = work[-1]
            if i < len(succs[v]):
                work[-1] = (v, i + 1)
                w = succs[v][i]
                if index[w] == -1:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack[w] = True
                    work.append((w, 0))
                elif on_stack[w]:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    u = work[-1][0]
                    low[u] = min(low[u], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on_stack[w] = False
                        comp.append(w)
                        if w == v:
                            break
                    comps.append(comp)
    return comps


# ---------------------------------------------------------------------------------------------
# Dominators (Cooper-Harvey-Kennedy)
# ---------------------------------------------------------------------------------------------


def _chk_idom(n: int, succs: list, preds: list, root: int) -> list:
    order = _postorder(n, succs, root)
    po_num = [-1] * n
    for i, v in enumerate(order):
        po_num[v] = i
    idom = [-1] * n
    idom[root] = root
    rpo = order[::-1]
    changed = True
    while changed:
        changed = False
        for b in rpo:
            if b == root:
                continue
            new = -1
            for p in preds[b]:
                if idom[p] == -1:
                    continue
                if new == -1:
                    new = p
                    continue
                # intersect: walk the two fingers up the tree by post-order number
                f1, f2 = p, new
                while f1 != f2:
                    while po_num[f1] < po_num[f2]:
                        f1 = idom[f1]
                    while po_num[f2] < po_num[f1]:
                        f2 = idom[f2]
                new = f1
            if idom[b] != new:
                idom[b] = new
                changed = True
    return idom


def immediate_dominators(n: int, succ_ptr, succ_idx, entry: int = 0) -> np.ndarray:
    """``idom[v]`` for every node (int32); ``idom[entry] = entry``, unreachable nodes ``-1``."""
    succs = _as_lists(n, succ_ptr, succ_idx)
    return np.array(_chk_idom(n, succs, predecessors(n, succs), entry), np.int32)


def postdom_augmented_edges(n: int, succs: list, exit: int) -> list:
    """Pseudo edges ``(v, exit)`` that make every node reach ``exit`` (numba's exitless-loop rule).

    Every node of a sink SCC (no edge leaves it) other than ``exit``'s own gets an edge to the exit;
    after that every node can reach the exit.
    """
    comps = strongly_connected_components(n, succs)
    comp_of = [0] * n
    for ci, comp in enumerate(comps):
        for v in comp:
            comp_of[v] = ci
    extra = []
    for ci, comp in enumerate(comps):
        if exit in comp:
            continue
        leaves = any(comp_of[t] != ci for v in comp for t in succs[v])
        if not leaves:
            extra.extend((v, exit) for v in sorted(comp))
    return extra


def _augmented_succs(n: int, succs: list, exit: int) -> list:
    extra = postdom_augmented_edges(n, succs, exit)
    if not extra:
        return succs
    out = [list(s) for s in succs]
    for v, e in extra:
        if e not in out[v]:
            out[v].append(e)
    return out


def immediate_postdominators(n: int, succ_ptr, succ_idx, exit: int) -> np.ndarray:
    """``ipdom[v]`` for every node (int32), ``-1`` for ``exit`` itself.

    Robust to several exits and to loops without exits: any other node without successors, and
    every node of an exitless cycle, is a sink SCC and gets a pseudo edge to ``exit`` (see
    :func:`postdom_augmented_edges`), so every node has an immediate post-dominator.
    """
    succs = _augmented_succs(n, _as_lists(n, succ_ptr, succ_idx), exit)
    preds = predecessors(n, succs)
    # post-dominators = dominators of the reverse graph rooted at the exit
    ipdom = _chk_idom(n, preds, succs, exit)
    ipdom[exit] = -1
    return np.array(ipdom, np.int32)


def dominator_tree_children(idom) -> list:
    """Children lists of a (post-)dominator tree given as ``idom`` (roots have idom -1 or themselves)."""
    n = len(idom)
    kids = [[] for _ in range(n)]
    for v in range(n):
        p = int(idom[v])
        if p >= 0 and p != v:
            kids[p].append(v)
    return kids


def dominates(idom, a: int, b: int) -> bool:
    """Does ``a`` (post-)dominate ``b`` in the tree ``idom`` (reflexive)?"""
    v = b
    while True:
        if v == a:
            return True
        p = int(idom[v])
        if p < 0 or p == v:
            return False
        v = p


# ---------------------------------------------------------------------------------------------
# Control dependence (Ferrante, Ottenstein & Warren)
# ---------------------------------------------------------------------------------------------


def control_dependence(n: int, succ_ptr, succ_idx, ipdom) -> list:
    """For every node ``Y`` the set of edges ``(X, S)`` it is control dependent on.

    Returns a list of sorted lists of ``(X, S)`` tuples. ``ipdom`` is the post-dominator tree from
    :func:`immediate_postdominators` (``-1`` at the root). The controlling *nodes* of ``Y`` are
    ``{X for X, S in result[Y]}``.
    """
    succs = _as_lists(n, succ_ptr, succ_idx)
    deps = [set() for _ in range(n)]
    for x in range(n):
        stop = int(ipdom[x])
        for s in succs[x]:
            # walk from S up the post-dominator tree until ipdom(X): every node passed post-dominates
            # S but not strictly X, which is exactly Ferrante's definition.
            y = s
            while y != stop and y >= 0:
                deps[y].add((x, s))
                y = int(ipdom[y])
    return [sorted(d) for d in deps]


def iterated_control_dependence(n: int, succ_ptr, succ_idx, ipdom) -> list:
    """For every node the set of branch nodes it is transitively control dependent on (sorted lists)."""
    direct = [sorted({x for x, _ in d}) for d in control_dependence(n, succ_ptr, succ_idx, ipdom)]
    out = []
    for y in range(n):
        seen = set()
        work = list(direct[y])
        while work:
            x = work.pop()
            if x in seen:
                continue
            seen.add(x)
            work.extend(direct[x])
        out.append(sorted(seen))
    return out


# ---------------------------------------------------------------------------------------------
# Natural loops
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Loop:
    """A natural loop: ``header``, the ``latches`` (sources of its back edges), the ``body`` (header
    included), the ``exits`` (edges leaving the body) and the enclosing loop's header (-1 if none)."""

    header: int
    latches: tuple
    body: frozenset
    exits: tuple
    parent: int = -1


def back_edges(n: int, succ_ptr, succ_idx, entry: int = 0, idom=None) -> list:
    """Edges ``(t, h)`` whose target dominates their source, sorted."""
    succs = _as_lists(n, succ_ptr, succ_idx)
    if idom is None:
        idom = _chk_idom(n, succs, predecessors(n, succs), entry)
    out = []
    for t in range(n):
        if idom[t] == -1:
            continue
        for h in succs[t]:
            if dominates(idom, h, t):
                out.append((t, h))
    return sorted(set(out))


def natural_loops(n: int, succ_ptr, succ_idx, entry: int = 0, idom=None) -> list:
    """Natural loops (one per header, bodies of back edges to the same header merged), outermost first."""
    succs = _as_lists(n, succ_ptr, succ_idx)
    preds = predecessors(n, succs)
    if idom is None:
        idom = _chk_idom(n, succs, preds, entry)
    by_header: dict = {}
    for t, h in back_edges(n, succ_ptr, succ_idx, entry, idom):
        body = by_header.setdefault(h, [set([h]), []])
        body[1].append(t)
        work = [t]
        while work:
            v = work.pop()
            if v in body[0]:
                continue
            body[0].add(v)
            work.extend(p for p in preds[v] if idom[p] != -1)
    loops = []
    for h, (body, latches) in by_header.items():
        exits = tuple(sorted((v, s) for v in body for s in succs[v] if s not in body))
        loops.append((h, tuple(sorted(set(latches))), frozenset(body), exits))
    loops.sort(key=lambda L: (-len(L[2]), L[0]))
    out = []
    for i, (h, latches, body, exits) in enumerate(loops):
        parent = -1
        # the smallest strictly larger loop containing this header encloses it
        for h2, _, body2, _ in reversed(loops[:i]):
            if h in body2 and body <= body2 and h2 != h:
                parent = h2
                break
        out.append(Loop(h, latches, body, exits, parent))
    return out
