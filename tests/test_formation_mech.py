"""dwf / en-dwf / tbc (and the hws switch): numba kernel vs plain-Python reference, invariants, errors."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given
from hypothesis import strategies as st

from simt_fast.sim import simulate
from simt_fast.sim.config import ConfigError, SimConfig, check_config
from simt_fast.sim.memory import model_enabled as memory_model_enabled
from simt_fast.sim.reference import ReferenceError_
from simt_fast.sim.reference.dwf import DWFCore
from simt_fast.sim.reference.tbc import TBCCore
from simt_fast.trace.synth import synthetic, traces as synthetic_traces

from hypothesis_budget import examples
from sim_helpers import tiny_trace as tiny

SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@st.composite
def cases(draw, mechanisms=("dwf", "en-dwf", "tbc")):
    trace = draw(synthetic_traces(max_blocks=16, max_threads=72))
    m = draw(st.sampled_from(mechanisms))
    warp_size = draw(st.sampled_from((4, 8, 16, 32)))
    simd = draw(st.sampled_from([s for s in (1, 2, 4, 8, 32) if m == "tbc" or warp_size % s == 0 or s > warp_size]))
    hws = m != "tbc" and warp_size % simd == 0 and draw(st.booleans())
    policy = draw(st.sampled_from(("majority", "lrr", "gto") if m != "tbc" else ("lrr", "gto")))
    cfg = SimConfig(
        mechanism=m, warp_size=warp_size, simd_width=simd, hws=hws, issue_policy=policy,
        n_sms=draw(st.integers(1, 3)), n_schedulers=draw(st.integers(1, 2)), max_warps_per_sm=64,
        max_ctas_per_sm=draw(st.integers(1, 3)), lat_alu=draw(st.integers(1, 12)), lat_sfu=draw(st.integers(1, 20)),
        lat_global=draw(st.integers(1, 60)), lat_shared=draw(st.integers(1, 20)), lat_branch=draw(st.integers(1, 12)),
        perfect_memory=draw(st.booleans()), hws_sync_sms=hws and draw(st.booleans()),
    )
    return trace, cfg




def run_reference(trace, cfg, events=None):
    core = (TBCCore if cfg.mechanism == "tbc" else DWFCore)(trace, cfg, events)
    core.check = True  # slot-model invariants after every cycle
    return core.run()


@examples(120, **SETTINGS)
@given(cases())
def test_kernel_matches_reference_stats_and_issue_sequence(case):
    trace, cfg = case
    fast_ev, ref_ev = [], []
    try:
        fast = simulate(trace, cfg, events=fast_ev)
    except Exception as e:  # the same failure (deadlock at a divergent barrier) in both models
        with pytest.raises(ReferenceError_):
            run_reference(trace, cfg)
        assert "deadlock" in str(e) or "progress" in str(e), e
        return
    slow = run_reference(trace, cfg, ref_ev)
    assert fast.to_dict() == slow.to_dict()
    assert fast_ev == ref_ev  # same warps, same threads in the same slots, same cycles


def _outcome(trace, cfg, sm_major):
    """Stats and issue events of a run, or its error message."""
    from simt_fast.sim import SimulationError

    ev = []
    try:
        return simulate(trace, cfg, events=ev, sm_major=sm_major).to_dict(), ev
    except SimulationError as e:
        return str(e)


@examples(80, **SETTINGS)
@given(cases(), st.sampled_from((2_000_000_000, 40, 150, 600)), st.sampled_from((1_000_000, 3, 12, 40)))
def test_sm_major_visits_give_the_cycle_major_run(case, max_cycles, no_progress):
    # `_run` runs one SM at a time (stopping whenever a freed CTA slot waits for the next CTA) unless
    # asked for the cycle-major order; both must be the same machine, down to the error and its
    # cycle when a tight max_cycles / no_progress_cycles (or a divergent barrier) stops the run
    trace, cfg = case
    cfg = cfg.replace(hws_sync_sms=False, max_cycles=max_cycles, no_progress_cycles=no_progress)
    assert _outcome(trace, cfg, True) == _outcome(trace, cfg, False)


def test_sm_major_hands_out_ctas_in_cycle_then_sm_order():
    # 30 CTAs over 3 SMs of 2 slots: most CTAs go to the slot that frees first; kernel and reference
    # agree on the whole event log (which names each warp's SM: id mod n_sms)
    trace = synthetic(20, 600, seed=5, warp_size=8, block=(20, 1, 1))
    for m in ("dwf", "en-dwf", "tbc"):
        cfg = SimConfig(mechanism=m, warp_size=8, simd_width=4, n_sms=3, max_ctas_per_sm=2, max_warps_per_sm=64,
                        lat_global=37)
        fast_ev, ref_ev = [], []
        fast = simulate(trace, cfg, events=fast_ev)
        assert fast.to_dict() == run_reference(trace, cfg, ref_ev).to_dict()
        assert fast_ev == ref_ev
        assert {e["warp"] % 3 for e in fast_ev} == {0, 1, 2}
        assert _outcome(trace, cfg, False) == (fast.to_dict(), fast_ev)


@examples(40, **SETTINGS)
@given(synthetic_traces(max_blocks=18, max_threads=96, barrier_prob=0.0), st.sampled_from((4, 8, 16, 32)),
       st.data())
def test_invariants(trace, warp_size, data):
    simd = data.draw(st.sampled_from([s for s in (1, 4, 8) if warp_size % s == 0]))
    base = SimConfig(warp_size=warp_size, simd_width=simd, n_sms=data.draw(st.integers(1, 2)), max_warps_per_sm=64,
                     lat_global=data.draw(st.integers(1, 50)))
    n_inst = trace.total_thread_insts()
    mimd = formation_or_core(trace, base.replace(mechanism="mimd"))
    for m, hws, policy in (("dwf", False, "majority"), ("dwf", True, "lrr"), ("en-dwf", False, "majority"),
                           ("en-dwf", True, "majority"), ("tbc", False, "lrr")):
        cfg = base.replace(mechanism=m, hws=hws, issue_policy=policy)
        s = simulate(trace, cfg)
        # every thread ran its whole path to the exit exactly once
        assert s.thread_insts == n_inst
        assert int((s.occupancy_hist * np.arange(warp_size + 1)).sum()) == n_inst
        assert s.occupancy_hist.sum() == s.warp_insts == s.quarter_hist.sum()
        assert s.occupancy_hist[0] == 0 and s.quarter_hist[0] == 0
        if not memory_model_enabled(base, trace):
            # the ideal bound holds for these mechanisms too, with fixed latencies (docs/core.md)
            assert mimd.cycles <= s.cycles
        # a warp never holds more threads than slots, so at least ceil(threads / warp_size) issues
        assert s.warp_insts * warp_size >= n_inst
    # the reference checks "no thread in two warps / lanes kept / live threads in a warp" every cycle
    run_reference(trace, base.replace(mechanism="en-dwf", hws=True, issue_policy="majority"))
    run_reference(trace, base.replace(mechanism="tbc"))


def formation_or_core(trace, cfg):
    from simt_fast.sim.reference import simulate as reference

    return reference(trace, cfg)


def test_deterministic_and_independent_of_event_logging():
    trace = synthetic(20, 200, seed=3, warp_size=16, block=(50, 1, 1))
    for m in ("dwf", "en-dwf", "tbc"):
        cfg = SimConfig(mechanism=m, warp_size=16, simd_width=4, issue_policy="majority" if "dwf" in m else "lrr")
        a = simulate(trace, cfg).to_dict()
        assert simulate(trace, cfg, events=[]).to_dict() == a == simulate(trace, cfg).to_dict()


def test_max_cycles_past_int32_gives_the_same_run():
    """Ready cycles past 2^31 (the scoreboard is int64): the same run and event log as a small limit."""
    trace = synthetic(12, 96, seed=5, warp_size=8, block=(32, 1, 1), divergence=0.3)
    for m in ("dwf", "tbc"):
        cfg = SimConfig(mechanism=m, warp_size=8, simd_width=2, n_sms=2, lat_global=50)
        ev, ev_wide = [], []
        assert simulate(trace, cfg, events=ev).to_dict() == \
            simulate(trace, cfg.replace(max_cycles=1 << 40), events=ev_wide).to_dict()
        assert ev == ev_wide and ev


def test_dwf_never_issues_more_than_serial_splits_and_en_dwf_merges_at_least_as_often():
    trace = synthetic(30, 512, seed=11, warp_size=32, block=(128, 1, 1), divergence=0.4, barrier_prob=0.0)
    cfg = SimConfig(warp_size=32, simd_width=8, n_sms=2, issue_policy="majority", lat_global=100)
    dwf = simulate(trace, cfg.replace(mechanism="dwf"))
    en = simulate(trace, cfg.replace(mechanism="en-dwf"))
    assert dwf.thread_insts == en.thread_insts == trace.total_thread_insts()
    assert dwf.merges > 0 and en.merges > 0
    assert en.lane_conflicts <= dwf.lane_conflicts + en.merges  # a whole-male merge replaces conflicts


@pytest.mark.parametrize("cfg, match", [
    (dict(mechanism="mp", hws=True, simd_width=8), "hws"),
    (dict(mechanism="tbc", hws=True, simd_width=8), "hws"),
    (dict(mechanism="tbc", issue_policy="majority"), "issue_policy"),
    (dict(mechanism="en-dwf", simd_width=12), "simd_width"),
    (dict(mechanism="sps", hws_sync_sms=True), "hws_sync_sms"),
])
def test_bad_combinations_are_rejected_with_the_field(cfg, match):
    trace = synthetic(5, 8, seed=0)
    with pytest.raises(ConfigError, match=match):
        simulate(trace, SimConfig(**cfg)) if cfg["mechanism"] in ("dwf", "en-dwf", "tbc") \
            else check_config(SimConfig(**cfg))


def test_barrier_in_divergent_code_deadlocks_tbc_with_a_clear_message_but_not_dwf():
    # A -> B (bar.sync) -> D ; A -> C -> D : under TBC's CTA stack B's warp waits for C's threads forever
    trace = tiny(blocks=[["alu", "bra"], ["bar"], ["alu"], ["exit"]], succ=[[1, 2], [3], [3], [4]],
                 paths=[[0, 1, 3, 4], [0, 2, 3, 4]], barrier=[1])
    from simt_fast.sim import SimulationError

    with pytest.raises(SimulationError, match="mechanism tbc deadlocked"):
        simulate(trace, SimConfig(mechanism="tbc", warp_size=4, simd_width=4))
    with pytest.raises(ReferenceError_):
        run_reference(trace, SimConfig(mechanism="tbc", warp_size=4, simd_width=4))
    # DWF lets C's thread run on and exit, which releases the barrier
    s = simulate(trace, SimConfig(mechanism="dwf", warp_size=4, simd_width=4, issue_policy="majority"))
    assert s.thread_insts == trace.total_thread_insts()


def test_barrier_keeps_its_per_cta_meaning_when_warps_mix_ctas():
    # two CTAs of 2 threads, warp 4: DWF may merge threads of both CTAs; each CTA's bar.sync waits
    # only for its own threads (CTA 1's long path delays CTA 1's barrier, not CTA 0's)
    trace = tiny(blocks=[["alu", "bra"], ["alu"] * 6, ["bar"], ["alu"]], succ=[[1, 2], [2], [3], [4]],
                 paths=[[0, 2, 3, 4], [0, 2, 3, 4], [0, 1, 2, 3, 4], [0, 2, 3, 4]], barrier=[2], block=(2, 1, 1),
                 chain=True)
    cfg = SimConfig(mechanism="dwf", warp_size=4, simd_width=4, issue_policy="majority", lat_alu=3)
    ev = []
    s = simulate(trace, cfg, events=ev)
    assert s.thread_insts == trace.total_thread_insts()
    assert s.to_dict() == run_reference(trace, cfg).to_dict()
    assert s.barrier_wait_cycles > 0


@st.composite
def hws_cases(draw):
    trace = draw(synthetic_traces(max_blocks=16, max_threads=72))
    warp_size = draw(st.sampled_from((4, 8, 16, 32)))
    simd = draw(st.sampled_from([s for s in (1, 2, 4, 8) if warp_size % s == 0]))
    cfg = SimConfig(
        mechanism="sps", hws=True, hws_sync_sms=draw(st.booleans()), warp_size=warp_size, simd_width=simd,
        n_sms=draw(st.integers(1, 3)), n_schedulers=draw(st.integers(1, 2)), max_warps_per_sm=64,
        max_ctas_per_sm=draw(st.integers(1, 3)), issue_policy=draw(st.sampled_from(("lrr", "gto"))),
        lat_alu=draw(st.integers(1, 12)), lat_global=draw(st.integers(1, 60)), lat_branch=draw(st.integers(1, 12)),
    )
    return trace, cfg


@examples(60, **SETTINGS)
@given(hws_cases())
def test_pdom_hws_core_matches_reference(case):
    """PDOM&HWS in the numba core vs the reference core with the squeeze (reference.pdom_hws)."""
    from simt_fast.sim import SimulationError, simulate
    from simt_fast.sim.reference.pdom_hws import simulate as pdom_hws

    trace, cfg = case
    fast_ev, ref_ev = [], []
    try:
        fast = simulate(trace, cfg, events=fast_ev)
    except SimulationError:
        with pytest.raises(ReferenceError_):
            pdom_hws(trace, cfg)
        return
    slow = pdom_hws(trace, cfg, events=ref_ev)
    assert fast.to_dict() == slow.to_dict()
    assert fast_ev == ref_ev
    plain = simulate(trace, cfg.replace(hws=False, hws_sync_sms=False))
    # the squeeze changes only how long a warp occupies the SIMD unit, never what is issued
    assert (fast.warp_insts, fast.thread_insts) == (plain.warp_insts, plain.thread_insts)
    assert fast.quarter_hist.sum() == fast.warp_insts
    if not cfg.hws_sync_sms:
        # each issue's width is its squeezed quarter count, never more than the unsqueezed one
        q = np.arange(len(fast.quarter_hist))
        assert (fast.quarter_hist * q).sum() <= (plain.quarter_hist * q).sum()
