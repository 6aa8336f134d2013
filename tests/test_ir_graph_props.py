"""Property tests: the fast graph algorithms equal brute-force set definitions on random CFGs.

* d dominates v  <=>  v == d, or v is unreachable from the entry once d is removed.
* d post-dominates v  <=>  v == d, or the exit is unreachable from v once d is removed
  (on the graph augmented with the exitless-loop pseudo edges).
* ipdom(v) is the strict post-dominator of v that every other strict post-dominator of v
  post-dominates.
* Y is control dependent on edge (X, S)  <=>  Y post-dominates S and Y does not strictly
  post-dominate X (Ferrante, Ottenstein & Warren 1987).
"""

from hypothesis import given
from hypothesis import strategies as st

from simt_fast.ir import graph

from hypothesis_budget import examples


@st.composite
def cfgs(draw, max_nodes=12):
    """A random graph: node 0 is the entry, node n-1 the exit (no successors); arbitrary edges
    (loops, unstructured edges, nodes that cannot reach the exit, unreachable nodes)."""
    n = draw(st.integers(2, max_nodes))
    succs = []
    for v in range(n - 1):
        k = draw(st.integers(0, 3))
        targets = draw(st.lists(st.integers(0, n - 1), min_size=k, max_size=k))
        seen = []
        for t in targets:
            if t not in seen:
                seen.append(t)
        succs.append(seen)
    succs.append([])
    return n, succs


def reachable(succs, start, removed=None):
    seen = set()
    work = [start]
    while work:
        v = work.pop()
        if v in seen or v == removed:
            continue
        seen.add(v)
        work.extend(succs[v])
    return seen


def brute_dominators(n, succs, entry=0):
    reach = reachable(succs, entry)
    dom = {}
    for v in reach:
        dom[v] = {d for d in range(n) if d == v or (d in reach and v not in reachable(succs, entry, removed=d))}
    return dom


def brute_postdominators(n, succs, exit):
    pdom = {}
    for v in range(n):
        pdom[v] = {d for d in range(n) if d == v or exit not in reachable(succs, v, removed=d)}
    return pdom


def augmented(n, succs, exit):
    out = [list(s) for s in succs]
    for v, e in graph.postdom_augmented_edges(n, succs, exit):
        if e not in out[v]:
            out[v].append(e)
    return out


SETTINGS = examples(150)


@SETTINGS
@given(cfgs())
def test_immediate_dominators_match_definition(g):
    n, succs = g
    ptr, idx = graph.csr_from_lists(succs)
    idom = graph.immediate_dominators(n, ptr, idx, 0)
    dom = brute_dominators(n, succs)
    for v in range(n):
        if v not in dom:
            assert idom[v] == -1
            continue
        if v == 0:
            assert idom[v] == 0
            continue
        strict = dom[v] - {v}
        # the immediate dominator is the strict dominator dominated by all the others
        (expected,) = [d for d in strict if dom[d] == strict]
        assert idom[v] == expected


@SETTINGS
@given(cfgs())
def test_augmentation_makes_every_node_reach_the_exit(g):
    n, succs = g
    exit = n - 1
    aug = augmented(n, succs, exit)
    for v in range(n):
        assert exit in reachable(aug, v)
    extra = graph.postdom_augmented_edges(n, succs, exit)
    # nodes that already reach the exit never get a pseudo edge
    for v, _ in extra:
        assert exit not in reachable(succs, v)


@SETTINGS
@given(cfgs())
def test_immediate_postdominators_match_definition(g):
    n, succs = g
    exit = n - 1
    ptr, idx = graph.csr_from_lists(succs)
    ipdom = graph.immediate_postdominators(n, ptr, idx, exit)
    pdom = brute_postdominators(n, augmented(n, succs, exit), exit)
    assert ipdom[exit] == -1
    for v in range(n):
        if v == exit:
            continue
        strict = pdom[v] - {v}
        (expected,) = [d for d in strict if pdom[d] == strict]
        assert ipdom[v] == expected
        assert graph.dominates(ipdom, expected, v)


@SETTINGS
@given(cfgs())
def test_control_dependence_matches_ferrante(g):
    n, succs = g
    exit = n - 1
    ptr, idx = graph.csr_from_lists(succs)
    ipdom = graph.immediate_postdominators(n, ptr, idx, exit)
    pdom = brute_postdominators(n, augmented(n, succs, exit), exit)
    got = graph.control_dependence(n, ptr, idx, ipdom)
    for y in range(n):
        expected = sorted(
            (x, s) for x in range(n) for s in succs[x] if y in pdom[s] and not (y in pdom[x] and y != x)
        )
        assert got[y] == expected
    # iterated control dependence = transitive closure over controlling nodes
    icd = graph.iterated_control_dependence(n, ptr, idx, ipdom)
    direct = [{x for x, _ in d} for d in got]
    for y in range(n):
        closure = set(direct[y])
        frontier = list(closure)
        while frontier:
            x = frontier.pop()
            for z in direct[x]:
                if z not in closure:
                    closure.add(z)
                    frontier.append(z)
        assert icd[y] == sorted(closure)


@SETTINGS
@given(cfgs())
def test_natural_loops_match_definition(g):
    n, succs = g
    ptr, idx = graph.csr_from_lists(succs)
    dom = brute_dominators(n, succs)
    expected_back = sorted({(t, h) for t in dom for h in succs[t] if h in dom[t]})
    assert graph.back_edges(n, ptr, idx, 0) == expected_back
    loops = {L.header: L for L in graph.natural_loops(n, ptr, idx, 0)}
    assert set(loops) == {h for _, h in expected_back}
    preds = graph.predecessors(n, succs)
    for h, loop in loops.items():
        # body: h plus every node that reaches a latch without passing through h
        body = {h}
        for t, hh in expected_back:
            if hh != h:
                continue
            work = [t]
            while work:
                v = work.pop()
                if v in body:
                    continue
                body.add(v)
                work.extend(p for p in preds[v] if p in dom)
        assert loop.body == frozenset(body)
        assert all(h in dom[v] for v in body)  # the header dominates its loop
        if loop.parent != -1:
            assert loop.body < loops[loop.parent].body


@SETTINGS
@given(cfgs())
def test_reverse_postorder_orders_dominators_first(g):
    n, succs = g
    ptr, idx = graph.csr_from_lists(succs)
    rpo = [int(v) for v in graph.reverse_postorder(n, ptr, idx, 0)]
    assert sorted(rpo) == sorted(reachable(succs, 0)) and rpo[0] == 0
    pos = {v: i for i, v in enumerate(rpo)}
    dom = brute_dominators(n, succs)
    # every back edge (target dominates source) goes backwards in reverse post-order
    for t, h in graph.back_edges(n, ptr, idx, 0):
        assert pos[h] <= pos[t]
    # every dominator precedes the nodes it dominates
    for v in rpo:
        for d in dom[v]:
            assert pos[d] <= pos[v]


def test_csr_round_trip_and_validation():
    succs = [[1, 2], [2], []]
    ptr, idx = graph.csr_from_lists(succs)
    assert graph.lists_from_csr(3, ptr, idx) == succs
    import pytest

    with pytest.raises(ValueError, match="successor 5 of node 0"):
        graph.lists_from_csr(3, [0, 1, 1, 1], [5])
