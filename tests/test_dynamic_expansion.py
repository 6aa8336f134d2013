"""Dynamic code expansion (Wu et al. 2012 §4.2): IPDOM replay, upper limit, STRUCT vs IPDOM."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, strategies as st

from simt_fast.dynamic.expansion import (expansion, expansion_branches, ipdom_replay, ipdom_replay_reference,
                                    region_blocks, struct_vs_ipdom)
from simt_fast.sim import simulate
from simt_fast.sim.config import SimConfig
from simt_fast.trace import synthetic
from simt_fast.trace.model import TraceError

from hypothesis_budget import examples
from sim_helpers import tiny_trace

FIELDS = ("full_issues", "partial_issues", "full_threads", "partial_threads", "expansion_issues")


def short_circuit():
    """Wu et al. 2012 Fig. 3/14 shape: B0 -> B1|B2, B1 -> B2|B3, B2 -> B3 (B2 shared by both paths of B0)."""
    blocks = [["alu", "bra"], ["bra"], ["alu", "alu", "alu"], ["exit"]]
    succ = [[1, 2], [2, 3], [3], [4]]
    paths = [[0, 1, 2, 3, 4], [0, 1, 3, 4], [0, 2, 3, 4], [0, 2, 3, 4]]
    return tiny_trace(blocks, succ, paths)


def test_short_circuit_hand_worked():
    tr = short_circuit()
    assert expansion_branches(tr).tolist() == [True, False, False, False, False]
    assert region_blocks(tr, 0) == [1, 2]
    c = ipdom_replay(tr, 4)
    # B0 and B3 run once with the whole warp; B1 once by {t0,t1}; B2 twice ({t0}, then {t2,t3})
    assert c.full_issues.tolist() == [1, 0, 0, 1, 0]
    assert c.partial_issues.tolist() == [0, 1, 2, 0, 0]
    assert c.partial_threads.tolist() == [0, 2, 3, 0, 0]
    assert c.expansion_issues.tolist() == [0, 1, 2, 0, 0]
    assert c.upper_limit == 1 * 1 + 2 * 3  # B1 once + B2 twice (3 instructions): Wu et al. 2012's counting
    assert c.warp_insts == 2 + 1 + 2 * 3 + 1
    e = expansion(tr, warp_size=4)
    assert e.expanded_insts == 3  # exact: only B2's second copy is re-execution
    assert e.upper_limit == 7 and e.warp_insts == 10
    assert e.expansion_branches == ["A"] and e.region_blocks == ["B", "C"]
    assert e.interacting_edges == ["B->C (forward)"]  # the control tree's view of the same region


def test_structured_if_else_has_no_expansion():
    blocks = [["bra"], ["alu"], ["alu"], ["exit"]]
    tr = tiny_trace(blocks, [[1, 2], [3], [3], [4]], [[0, 1, 3, 4], [0, 2, 3, 4]])
    assert not expansion_branches(tr).any()
    e = expansion(tr, warp_size=4)
    assert e.upper_limit == 0 and e.expanded_insts == 0


def test_bad_edge_named():
    tr = tiny_trace([["bra"], ["alu"], ["exit"]], [[1], [2], [3]], [[0, 2, 3]])
    with pytest.raises(TraceError, match="not a CFG edge"):
        ipdom_replay(tr, 4)


@examples(60)
@given(seed=st.integers(0, 10_000), n_blocks=st.integers(3, 16), w=st.sampled_from([4, 8, 32]))
def test_replay_matches_reference_and_sps_core(seed, n_blocks, w):
    tr = synthetic(n_blocks=n_blocks, n_threads=48, seed=seed)
    fast, ref = ipdom_replay(tr, w), ipdom_replay_reference(tr, w)
    for f in FIELDS:
        assert np.array_equal(getattr(fast, f), getattr(ref, f)), f
    st_ = simulate(tr, SimConfig(mechanism="sps", warp_size=w))
    # which (block, mask) groups IPDOM issues does not depend on timing: exact equality with the core
    assert fast.warp_insts == st_.warp_insts
    assert fast.thread_insts == st_.thread_insts == tr.total_thread_insts()
    assert 0 <= fast.upper_limit <= fast.warp_insts
    assert (fast.expansion_issues <= fast.partial_issues).all()


@examples(40)
@given(seed=st.integers(0, 10_000), n_blocks=st.integers(3, 16))
def test_upper_limit_bounds_exact_expansion_without_loops(seed, n_blocks):
    """On loop-free CFGs every re-execution comes from paths of one branch meeting before its IPDOM."""
    tr = synthetic(n_blocks=n_blocks, n_threads=64, seed=seed, loop_prob=0.0)
    e = expansion(tr, warp_size=16)
    assert e.upper_limit >= e.expanded_insts


def test_struct_vs_ipdom_preserves_outputs():
    r = struct_vs_ipdom("shortcircuit", "tiny")
    assert r["outputs_identical"]
    assert r["STRUCT"]["thread_insts"] >= r["IPDOM"]["thread_insts"] > 0
    assert r["STRUCT"]["static_insts"] == r["structurize"]["new_code_size"]


@pytest.mark.slow
def test_struct_vs_ipdom_every_workload():
    from simt_fast.workloads import names

    for name in names():
        r = struct_vs_ipdom(name, "tiny")
        assert r["outputs_identical"], name
