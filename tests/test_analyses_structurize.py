"""Control tree and structurizer on the shapes of Wu et al. 2012 (Figs. 2-4, 8-10, 12) and on random CFGs.

Figure shapes are rebuilt from the paper's text (block names B1.. map to ids 0..; the last id is
the virtual exit). Each docstring draws the edges.
"""

from collections import Counter

import pytest
from hypothesis import given, strategies as st

from simt_fast.ir.control_tree import build_control_tree
from simt_fast.ir.structurize import FlowGraph, StructStats, structurize

from hypothesis_budget import examples


def graph(n, edges, entry=0):
    return FlowGraph.from_edges(n, edges, entry, n - 1)


def copies(g):
    """How many live blocks carry each original block."""
    return Counter(g.origin[b] for b in range(g.n) if g.live[b] and g.origin[b] >= 0)


def kinds(tree):
    return [n.kind for n in tree.root.walk()]


# --------------------------------------------------------------------------------------------
# Structured shapes reduce to one node
# --------------------------------------------------------------------------------------------


def test_structured_patterns_reduce_fully():
    """B0 -> {B1, B2} -> B3 (if-then-else); B3 -> B3 (self loop); B3 -> B4 -> {B5, B6}; B5 -> B4
    (while); B6 -> B7 -> B6? no: B6 -> {B7, exit}; B7 -> B6 ... kept acyclic: B6 -> {B7, X}, B7 -> X."""
    E = [(0, 1), (0, 2), (1, 3), (2, 3), (3, 3), (3, 4), (4, 5), (4, 6), (5, 4), (6, 7), (6, 8), (7, 8), (8, 9)]
    t = build_control_tree(10, [[v for u, v in E if u == b] for b in range(10)], 0, 9)
    assert t.is_structured and t.interacting_edges == [] and not t.unstructured.any()
    ks = kinds(t)
    for k in ("if_then_else", "self_loop", "while", "if_then", "block"):
        assert k in ks, (k, ks)


def test_do_while_is_a_collapsed_body_looping_on_itself():
    """B0 -> B1 -> B2 -> {B1, B3}: the body {B1, B2} tests at the bottom."""
    t = build_control_tree(4, [[1], [2], [1, 3], []], 0, 3)
    assert t.is_structured and "do_while" in kinds(t)


# --------------------------------------------------------------------------------------------
# Fig. 2: the four basic unstructured shapes
# --------------------------------------------------------------------------------------------


def test_fig2a_if_then_else_with_extra_outgoing_edge():
    """B1 -> {B2, B3}; B2 -> B4; B3 -> {B4, B5}; B4 -> B5; B5 -> exit (B3 -> B5 leaves early)."""
    g = graph(6, [(0, 1), (0, 2), (1, 3), (2, 3), (2, 4), (3, 4), (4, 5)])
    t = g.control_tree()
    assert not t.is_structured
    assert [(s, d) for s, d, k in t.interacting_edges] == [(2, 3)]
    assert t.unstructured[2] and not t.unstructured[0]
    g2, s = structurize(g)
    assert (s.forward_copies, s.cuts, s.backward_copies) == (1, 0, 0)
    assert copies(g2)[3] == 2 and g2.control_tree().is_structured


def test_fig2b_if_then_else_with_extra_incoming_edge():
    """B0 -> {B1, B3}; B1 -> {B2, B3}; B2 -> B4; B3 -> B4; B4 -> exit (B3 entered from outside)."""
    g = graph(6, [(0, 1), (0, 3), (1, 2), (1, 3), (2, 4), (3, 4), (4, 5)])
    t = g.control_tree()
    assert not t.is_structured and {d for s, d, k in t.interacting_edges} == {3}
    g2, s = structurize(g)
    assert (s.forward_copies, s.cuts, s.backward_copies) == (1, 0, 0)
    assert copies(g2)[3] == 2 and g2.control_tree().is_structured


def test_fig2c_loop_with_extra_outgoing_edge_is_cut():
    """B1 -> B2; B2 -> {B3, B5} (loop test); B3 -> {B4, B6} (break); B4 -> B2 (latch);
    B5 -> B6; B6 -> exit."""
    g = graph(7, [(0, 1), (1, 2), (1, 4), (2, 3), (2, 5), (3, 1), (4, 5), (5, 6)])
    t = g.control_tree()
    assert [(s, d, k) for s, d, k in t.interacting_edges] == [(2, 5, "loop_exit")]
    g2, s = structurize(g)
    assert s.cuts == 1 and s.backward_copies == 0
    assert g2.control_tree().is_structured


def test_fig2d_loop_with_extra_incoming_edge_is_peeled():
    """B1 -> {B2, B3}; B2 -> {B3, B4}; B3 -> B2 (B3 is a second entry of the loop {B2, B3})."""
    g = graph(5, [(0, 1), (0, 2), (1, 2), (1, 3), (2, 1), (3, 4)])
    t = g.control_tree()
    assert [(s, d, k) for s, d, k in t.interacting_edges] == [(0, 2, "loop_entry")]
    g2, s = structurize(g)
    assert s.backward_copies == 1 and s.cuts == 0
    assert g2.control_tree().is_structured


# --------------------------------------------------------------------------------------------
# Fig. 3 / Fig. 10: short-circuit condition, Forward Copy
# --------------------------------------------------------------------------------------------

# if ((c1 || c2) && (c3 || c4)) body:  B1 -c1-> B3 | B2;  B2 -c2-> B3 | exit;  B3 -c3-> B5 | B4;
# B4 -c4-> B5 | exit;  B5 (body) -> exit.
SHORT_CIRCUIT = [(0, 2), (0, 1), (1, 2), (1, 5), (2, 4), (2, 3), (3, 4), (3, 5), (4, 5)]


def test_fig3_short_circuit_is_unstructured_with_edges_e1_e2():
    g = graph(6, SHORT_CIRCUIT)
    t = g.control_tree()
    assert not t.is_structured and "unstructured" in kinds(t)
    # E1: B2 -> B3 and E2: B4 -> B5
    assert sorted((s, d) for s, d, k in t.interacting_edges) == [(1, 2), (3, 4)]
    assert list(t.unstructured) == [False, True, True, True, True, False]


def test_fig10_forward_copy_duplicates_b5_three_times_b4_b3_once():
    g = graph(6, SHORT_CIRCUIT)
    log = []
    g2, s = structurize(g, log=log)
    assert (s.forward_copies, s.cuts, s.backward_copies) == (2, 0, 0)
    c = copies(g2)
    assert (c[4] - 1, c[3] - 1, c[2] - 1, c[1] - 1, c[0] - 1) == (3, 1, 1, 0, 0)
    # E2 (B4 -> B5) is handled before E1 (B2 -> B3): the first copy is of B5 alone, the second of
    # {B3, B4, B5, B5'}
    assert [(step, d["edge"], len(d["new_blocks"])) for step, d in log] == [
        ("forward_copy", (3, 4), 1), ("forward_copy", (1, 2), 4)]
    assert g2.control_tree().is_structured
    # Fig. 3(c)/10(c): every block but the exit has one predecessor -- a tree of paths
    preds = Counter(v for b in range(g2.n) if g2.live[b] for v in set(g2.succs[b]))
    assert all(preds[b] == 1 for b in range(g2.n) if g2.live[b] and b not in (g2.entry, g2.exit))
    assert s.old_code_size == 5 and s.new_code_size == 10 and s.static_expansion_pct == 100.0


# --------------------------------------------------------------------------------------------
# Fig. 4: inlined early return leaves the loop twice
# --------------------------------------------------------------------------------------------


def test_fig4_inlined_early_return_needs_a_cut():
    """B1 -> B2; B2 -> {B3, B5} (loop2 test); B3 -> {B6, B4} (inlined `return`); B4 -> B2;
    B5 -> B6 (rest of foo); B6 -> exit (code after the call site)."""
    g = graph(7, [(0, 1), (1, 2), (1, 4), (2, 5), (2, 3), (3, 1), (4, 5), (5, 6)])
    t = g.control_tree()
    assert [(s, d, k) for s, d, k in t.interacting_edges] == [(2, 5, "loop_exit")]
    g2, s = structurize(g)
    assert s.cuts == 1 and g2.control_tree().is_structured


# --------------------------------------------------------------------------------------------
# Fig. 8: Cut with three flags
# --------------------------------------------------------------------------------------------


def test_fig8_cut_uses_exit_flag_and_one_flag_per_extra_exit():
    """B1 -> B2 -> B3; B3 -> {B4, B6} (E1); B4 -> {B5, B7} (E2); B5 -> {B2, B8} (latch);
    B6 -> B7; B7 -> exit; B8 -> exit."""
    g = graph(9, [(0, 1), (1, 2), (2, 3), (2, 5), (3, 4), (3, 6), (4, 1), (4, 7), (5, 6), (6, 8), (7, 8)])
    t = g.control_tree()
    assert sorted((s, d) for s, d, k in t.interacting_edges if k == "loop_exit") == [(2, 5), (3, 6)]
    log = []
    g2, s = structurize(g, log=log)
    assert s.cuts == 1 and log[0][0] == "cut"
    assert g2.n_flags == 3  # flag1, flag2 and exit
    # (d) the flags are tested after the loop: one latch + two dispatch tests
    tests = [g2.synth[b] for b in range(g2.n) if g2.synth[b] and g2.synth[b][0] == "test"]
    assert len(tests) == 3
    # still unstructured after the cut (B6 -> B7 joins a dispatch target), then structured
    assert s.forward_copies >= 1 and g2.control_tree().is_structured


# --------------------------------------------------------------------------------------------
# Fig. 9: Backward Copy
# --------------------------------------------------------------------------------------------


def test_fig9_backward_copy_peels_the_first_iteration():
    """B1 -> {B2, B3} (E1 enters the loop at B3); B2 -> B3; B3 -> {B2, B4}; B4 -> exit."""
    g = graph(5, [(0, 1), (0, 2), (1, 2), (2, 1), (2, 3), (3, 4)])
    log = []
    g2, s = structurize(g, log=log)
    assert s.backward_copies == 1 and log[0][0] == "backward_copy"
    # "the CFG after the transformation is also unstructured": B1 and the peeled B3' both enter the loop
    assert [step for step, _ in log[1:]] == ["forward_copy"]
    # the peeled B3' is what E1 now enters; it jumps to the loop header B2
    peeled = [b for b in range(5, g2.n) if g2.origin[b] == 2 and g2.live[b]]
    assert peeled and all(1 in [g2.origin[x] for x in g2.succs[p]] for p in peeled)
    assert g2.control_tree().is_structured


# --------------------------------------------------------------------------------------------
# Fig. 12: the four steps
# --------------------------------------------------------------------------------------------


def test_fig12_worked_example():
    """B1 -> {B2, B3}; B2 -> {B2, B2t} (self loop); B2t -> {B3, B4}; B3 -> B4; B4 -> exit.
    (b) {B1, B2, B3} is unstructured; (c) the self loop collapses; (d) B3 is copied once; (e) done."""
    g = graph(6, [(0, 1), (0, 3), (1, 1), (1, 2), (2, 3), (2, 4), (3, 4), (4, 5)])
    t = g.control_tree()
    assert not t.is_structured
    region = t.regions[0]
    assert "self_loop" in [n.kind for n in region.walk()]  # (c) collapsed inside the region
    assert {0, 1, 3} <= set(region.blocks)
    log = []
    g2, s = structurize(g, log=log)
    assert [x for x, _ in log] == ["forward_copy"]
    assert copies(g2)[3] == 2 and g2.control_tree().is_structured


def test_stats_dict_has_table2_columns():
    g2, s = structurize(graph(6, SHORT_CIRCUIT))
    d = s.to_dict()
    assert list(d) == ["branch_instructions", "cuts", "forward_copies", "backward_copies", "old_code_size",
                       "new_code_size", "static_expansion_pct", "transform_ms", "guards", "entry_dispatches",
                       "copied_code", "growth", "max_growth"]
    assert d["branch_instructions"] == 4 and isinstance(s, StructStats)


# --------------------------------------------------------------------------------------------
# Properties on random CFGs
# --------------------------------------------------------------------------------------------


@st.composite
def random_cfgs(draw):
    n = draw(st.integers(3, 10))  # the last node is the exit
    succs = []
    for b in range(n - 1):
        k = draw(st.sampled_from([1, 2, 2, 2, 3]))  # 3: a brx.idx switch
        succs.append(draw(st.lists(st.integers(0 if b else 1, n - 1), min_size=k, max_size=k)))
    succs.append([])
    # every node must reach the exit (kernels terminate): add an exit edge where it cannot
    for _ in range(n):
        reach = {n - 1}
        changed = True
        while changed:
            changed = False
            for b in range(n):
                if b not in reach and any(s in reach for s in succs[b]):
                    reach.add(b)
                    changed = True
        bad = [b for b in range(n) if b not in reach]
        if not bad:
            break
        succs[bad[-1]][-1] = n - 1
    return FlowGraph(succs, 0, n - 1)


def run_path(g, orig_succs, path):
    """Follow an original block path through the structurized graph, evaluating Cut flags; return
    the sequence of original blocks executed."""
    flags = {}

    def through_synth(b):
        while g.synth[b] is not None:
            kind = g.synth[b][0]
            if kind == "set":
                flags.update(g.synth[b][1])
                b = g.succs[b][0]
            elif kind == "test":
                b = g.succs[b][0 if flags[g.synth[b][1]] else 1]  # KeyError: a flag read before written
            else:  # ret
                b = g.succs[b][0]
        return b

    b = through_synth(g.entry)  # guards and dispatches clear their flags in a block before the entry
    out = [g.origin[b]]
    for i in range(len(path) - 1):
        k = orig_succs[path[i]].index(path[i + 1])
        flags.update((g.edge_sets[b] or {}).get(k, {}))  # Cut flags the branching block writes
        b = through_synth(g.succs[b][k])
        out.append(g.origin[b])
    return out


@examples(150)
@given(random_cfgs(), st.randoms(use_true_random=False), st.booleans())
def test_structurizer_terminates_structured_and_preserves_paths(g, rnd, predicated):
    orig = [list(s) for s in g.succs]
    before = g.control_tree()
    # Forward Copy is exponential in the worst case (Wu et al. 2012 §3); the growth limit (default 2x)
    # replaces copies by flags before that, so no graph gets near max_blocks
    g2, s = structurize(FlowGraph([list(x) for x in orig], 0, g.exit), max_blocks=600, predicated_flags=predicated)
    after = g2.control_tree()
    assert after.is_structured, after.root.pretty()
    assert "unstructured" not in kinds(after)
    if before.is_structured:
        assert (s.cuts, s.forward_copies, s.backward_copies) == (0, 0, 0)
        assert before.interacting_edges == [] and not before.unstructured.any()
    else:
        assert s.cuts + s.forward_copies + s.backward_copies + s.guards + s.entry_dispatches > 0
        assert before.interacting_edges and before.unstructured.any()
    # the control tree covers every reachable block once
    leaves = [n.entry for n in before.root.walk() if n.kind == "bb"]
    assert len(leaves) == len(set(leaves)) and sorted(before.root.blocks) == sorted(leaves)
    # random original paths execute the same original blocks in the output
    for _ in range(5):
        path, b = [0], 0
        while b != g.exit and len(path) < 40:
            b = rnd.choice(orig[b])
            path.append(b)
        if b != g.exit:
            continue
        assert run_path(g2, orig, path) == path
