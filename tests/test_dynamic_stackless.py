"""`stackless` (Lee et al. 2013 §5.2): differential test against the reference, invariants, hand-worked cases."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, strategies as st

from simt_fast.sim import SimulationError, reference, simulate
from simt_fast.sim.config import SimConfig
from simt_fast.sim.syncwarp import ipdom_syncwarp, structural_syncwarp, syncwarp_flags
from simt_fast.trace import synthetic

from hypothesis_budget import examples
from sim_helpers import tiny_trace


def diamond(barrier=()):
    """B0 -> B1 | B2 -> B3 -> exit; threads 0,1 take B1, threads 2,3 take B2."""
    blocks = [["alu", "bra"], ["alu", "alu"], ["alu", "alu", "alu"], ["alu", "exit"]]
    paths = [[0, 1, 3, 4]] * 2 + [[0, 2, 3, 4]] * 2
    return tiny_trace(blocks, [[1, 2], [3], [3], [4]], paths, barrier=barrier)


def cfg(**kw):
    return SimConfig(**{"mechanism": "stackless", "warp_size": 4, **kw})


def test_syncwarp_placement_on_the_diamond():
    tr = diamond()
    # B3 is convergent (no control dependence) and has divergent predecessors: Lee et al. 2013 §5.2's rule
    assert structural_syncwarp(tr).tolist() == [False, False, False, True, False]
    assert ipdom_syncwarp(tr).tolist() == [False, False, False, True, False]
    assert syncwarp_flags(tr, "auto").tolist() == structural_syncwarp(tr).tolist()


def test_early_exit_through_a_block_that_returns():
    """§3.4's early exit when the returning side is a block of its own: A -> X | B, X = [alu, exit]
    returns, B -> C | D, C -> D, D returns. X is control dependent on A, so A exits early and does not
    make B, C, D divergent; B's branch makes C divergent, so D (convergent, entered from C) gets the
    syncwarp. (The kernels' preparation once missed this rule, which the reference's own derivation
    of the placement caught.)"""
    A, X, B, C, D, EXIT = range(6)
    tr = tiny_trace([["alu", "bra"], ["alu", "exit"], ["alu", "bra"], ["alu", "bra"], ["alu", "exit"]],
                    [[X, B], [EXIT], [C, D], [D], [EXIT]],
                    [[A, X, EXIT], [A, B, C, D, EXIT], [A, B, D, EXIT], [A, B, C, D, EXIT]])
    assert structural_syncwarp(tr).tolist() == [False, False, False, False, True, False]
    s = simulate(tr, cfg())
    assert s.to_dict() == reference.simulate(tr, cfg()).to_dict()
    assert s.warp_insts == 2 + 2 + 2 + 2 + 2  # A; X; B; C (threads 1, 3); D once, after the syncwarp


def test_diamond_reconverges_at_syncwarp():
    tr = diamond()
    s = simulate(tr, cfg())
    assert s.warp_insts == 2 + 2 + 3 + 2  # B3 issued once by the whole warp
    assert s.thread_insts == tr.total_thread_insts()
    assert s.max_splits == 2
    serial = simulate(tr, cfg(mechanism="serial"))
    assert serial.warp_insts == 2 + 2 + 3 + 2 * 2  # without syncwarp B3 runs once per path
    # no syncwarp anywhere: stackless is exactly serial
    none = simulate(tr, cfg(), syncwarp=np.zeros(tr.n_blocks, bool))
    assert none.to_dict() == serial.to_dict()


def test_divergent_barrier_completes_where_the_stack_deadlocks():
    """bar.sync on both sides of a divergent branch: an IPDOM stack waits at the first barrier with
    the other path never scheduled; stackless threads run independently and all arrive."""
    tr = diamond(barrier=(1, 2))
    tr.op_class[tr.block_start[1] + 1] = tr.op_class[tr.block_start[2] + 2] = 7  # BARRIER
    with pytest.raises(SimulationError, match="deadlock"):
        simulate(tr, cfg(mechanism="sps"))
    s = simulate(tr, cfg())
    assert s.thread_insts == tr.total_thread_insts()
    assert s.barrier_wait_cycles > 0


def test_threads_waiting_at_different_syncwarps_do_not_deadlock():
    """Unsound flags (syncwarp on both arms): the highest-priority group is released first."""
    tr = diamond()
    flags = np.array([False, True, True, True, False])
    s = simulate(tr, cfg(), syncwarp=flags)
    r = reference.simulate(tr, cfg(), syncwarp=flags)
    assert s.to_dict() == r.to_dict()
    assert s.thread_insts == tr.total_thread_insts()


@st.composite
def cases(draw):
    seed = draw(st.integers(0, 10_000))
    n_blocks = draw(st.integers(3, 14))
    w = draw(st.sampled_from([4, 8, 32]))
    tr = synthetic(n_blocks=n_blocks, n_threads=draw(st.sampled_from([32, 64])), seed=seed)
    mode = draw(st.sampled_from(["auto", "ipdom", "random"]))
    flags = None
    if mode == "random":
        flags = np.random.default_rng(seed).random(tr.n_blocks) < 0.3
        flags[-1] = False
        mode = "auto"
    c = SimConfig(mechanism="stackless", warp_size=w, syncwarp_blocks=mode,
                  issue_policy=draw(st.sampled_from(["lrr", "gto"])), n_schedulers=draw(st.sampled_from([1, 2])))
    return tr, c, flags


@examples(80, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(cases())
def test_matches_reference_and_invariants(case):
    tr, c, flags = case
    fast_ev, ref_ev = [], []
    fast = simulate(tr, c, events=fast_ev, syncwarp=flags)
    ref = reference.simulate(tr, c, events=ref_ev, syncwarp=flags)
    assert fast.to_dict() == ref.to_dict()
    assert fast_ev == ref_ev
    assert fast.thread_insts == tr.total_thread_insts()
    assert fast.warp_insts <= fast.thread_insts
    assert fast.warp_insts >= ipdom_warp_insts_lower_bound(tr, c.warp_size)
    # issue units of a warp always hold disjoint threads
    for e in fast_ev:
        if e["kind"] == "tables":
            seen = 0
            for u in e["st"]:
                assert u["mask"] & seen == 0
                seen |= u["mask"]
    # more syncwarp points never issue more than none at all (serial)
    serial = simulate(tr, c.replace(mechanism="serial"))
    assert fast.warp_insts <= serial.warp_insts


def ipdom_warp_insts_lower_bound(tr, w):
    """Every block a warp's threads run is issued at least once per warp that runs it."""
    total = 0
    sizes = tr.block_sizes()
    tpc = tr.threads_per_cta
    for cta in range(tr.n_ctas):
        for w0 in range(0, tpc, w):
            ran = set()
            for t in range(cta * tpc + w0, cta * tpc + min(tpc, w0 + w)):
                ran |= set(map(int, tr.thread_path(t)))
            total += int(sum(sizes[b] for b in ran))
    return total


def test_emulated_traces_carry_the_analysis_syncwarp(tmp_path):
    from simt_fast.emu import launch
    from simt_fast.ir.convergence import analyze_convergence
    from simt_fast.emu import load_kernel
    from simt_fast.workloads import get

    wl = get("shortcircuit")
    spec = wl.launch_spec("tiny")
    run = launch(wl.ptx_path, wl.kernel, spec.grid, spec.block, spec.args, spec.shared_bytes)
    flags = syncwarp_flags(run.trace, "auto")  # the emulator stored its analysis of the PTX in the trace
    run.trace.save(tmp_path / "t.h5")
    from simt_fast.trace.model import Trace

    assert syncwarp_flags(Trace.load(tmp_path / "t.h5"), "auto").tolist() == flags.tolist()
    res = analyze_convergence(load_kernel(wl.ptx_path, wl.kernel).func)
    assert np.flatnonzero(flags).tolist() == sorted(res.syncwarp_blocks)
    s = simulate(run.trace, SimConfig(mechanism="stackless"), syncwarp=flags)
    assert s.thread_insts == run.thread_insts
    sps = simulate(run.trace, SimConfig(mechanism="sps"))
    assert s.simd_util <= 1.0 and sps.simd_util <= 1.0
