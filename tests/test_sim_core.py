"""Timing core: numba kernel vs plain-Python reference (hypothesis), invariants, guards, errors."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given
from hypothesis import strategies as st

from simt_fast.sim import SimulationError, reference, simulate
from simt_fast.sim.config import ConfigError, SimConfig
from simt_fast.sim.memory import model_enabled as memory_model_enabled
from simt_fast.sim.registry import names
from simt_fast.trace.synth import synthetic, traces as synthetic_traces

from hypothesis_budget import examples
from sim_helpers import tiny_trace as tiny

MECHS = names()


@st.composite
def configs(draw, warp_size: int, mechanism=None):
    return SimConfig(
        mechanism=mechanism or draw(st.sampled_from(MECHS)),
        warp_size=warp_size,
        simd_width=draw(st.sampled_from((1, 4, 8, 32, 64))),
        n_sms=draw(st.integers(1, 3)),
        n_schedulers=draw(st.integers(1, 2)),
        max_warps_per_sm=64,
        max_ctas_per_sm=draw(st.integers(1, 3)),
        issue_policy=draw(st.sampled_from(("lrr", "gto"))),
        lat_alu=draw(st.integers(1, 12)),
        lat_sfu=draw(st.integers(1, 20)),
        lat_global=draw(st.integers(1, 60)),
        lat_shared=draw(st.integers(1, 20)),
        lat_branch=draw(st.integers(1, 12)),
        perfect_memory=draw(st.booleans()),
    )


@st.composite
def cases(draw, mechanism=None):
    trace = draw(synthetic_traces(max_blocks=18, max_threads=140))
    warp_size = draw(st.sampled_from((4, 8, 16, 32, 64)))  # 64: lane 63 is the int64 sign bit
    return trace, draw(configs(warp_size, mechanism))


def check_tables(events):
    """Masks never overlap and no entry is lost: every RT pending mask is exactly covered by the
    splits and nested entries that still have to arrive there."""
    for e in events:
        if e["kind"] != "tables":
            continue
        seen = 0
        for u in e["st"]:
            assert u["mask"] != 0, e
            assert seen & u["mask"] == 0, f"overlapping split masks in {e}"
            seen |= u["mask"]
        ids = {r["id"] for r in e["rt"]}
        for u in e["st"]:
            assert u["parent"] == -1 or u["parent"] in ids, f"split points at a lost RT entry: {e}"
        for r in e["rt"]:
            assert r["pending"] & ~r["rmask"] == 0, e
            cover = 0
            for u in e["st"]:
                if u["parent"] == r["id"]:
                    cover |= u["mask"]
            for r2 in e["rt"]:
                if r2["parent"] == r["id"]:
                    assert cover & r2["rmask"] == 0, e
                    cover |= r2["rmask"]
            assert cover == r["pending"], f"RT entry {r} pending != arriving threads {cover:b} in {e}"
        roots = 0
        for x in [u["mask"] for u in e["st"] if u["parent"] == -1] + [r["rmask"] for r in e["rt"] if r["parent"] == -1]:
            assert roots & x == 0, e
            roots |= x


def run_both(trace, cfg):
    fast_ev, ref_ev = [], []
    try:
        fast = simulate(trace, cfg, events=fast_ev)
    except (SimulationError, ConfigError) as e:
        with pytest.raises((reference.ReferenceError_, ConfigError)):
            reference.simulate(trace, cfg)
        return None, None, str(e)
    ref = reference.simulate(trace, cfg, events=ref_ev)
    return (fast, fast_ev), (ref, ref_ev), None


@examples(150, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(cases())
def test_numba_core_matches_reference_stats_and_events(case):
    trace, cfg = case
    fast, ref, err = run_both(trace, cfg)
    if err:
        return
    assert fast[0].to_dict() == ref[0].to_dict()
    assert fast[1] == ref[1]  # identical issue sequence and identical ST/RT contents after every change


def _outcome(trace, cfg, sm_major):
    """Stats and debug events of a run, or its error message."""
    ev = []
    try:
        return simulate(trace, cfg, events=ev, sm_major=sm_major).to_dict(), ev
    except (SimulationError, ConfigError) as e:
        return str(e)


CORE_MECHS = [m for m in MECHS if m not in ("dwf", "en-dwf", "tbc")]  # (those: tests/test_formation_mech.py)


@examples(100, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(cases(), st.sampled_from(CORE_MECHS), st.booleans(), st.sampled_from((2_000_000_000, 40, 150, 600)),
       st.sampled_from((1_000_000, 3, 12, 40)))
def test_sm_major_visits_give_the_cycle_major_run(case, mech, hws, max_cycles, no_progress):
    # `core._run` runs one SM at a time (stopping whenever a freed CTA slot waits for the next CTA)
    # unless asked for the cycle-major order; both must be the same machine, down to the event log,
    # and to the error and its cycle when a tight max_cycles / no_progress_cycles (or a divergent
    # barrier) stops the run
    trace, cfg = case
    hws = hws and mech == "sps" and cfg.warp_size % cfg.simd_width == 0 and cfg.simd_width < cfg.warp_size
    cfg = cfg.replace(mechanism=mech, hws=hws, max_cycles=max_cycles, no_progress_cycles=no_progress)
    assert _outcome(trace, cfg, True) == _outcome(trace, cfg, False)


@pytest.mark.parametrize("mech", CORE_MECHS)
def test_sm_major_hands_out_ctas_in_cycle_then_sm_order(mech):
    # 30 CTAs over 3 SMs of 2 slots: most CTAs go to the slot that frees first; kernel and reference
    # agree on the whole event log, CTA dispatches (tables events) included
    trace = synthetic(20, 600, seed=5, warp_size=8, block=(20, 1, 1))
    cfg = SimConfig(mechanism=mech, warp_size=8, simd_width=4, n_sms=3, max_ctas_per_sm=2, max_warps_per_sm=64,
                    lat_global=37)
    fast_ev, ref_ev = [], []
    fast = simulate(trace, cfg, events=fast_ev)
    assert fast.to_dict() == reference.simulate(trace, cfg, events=ref_ev).to_dict()
    assert fast_ev == ref_ev
    assert _outcome(trace, cfg, False) == (fast.to_dict(), fast_ev)


@examples(60, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(synthetic_traces(max_blocks=20, max_threads=96), st.sampled_from((4, 8, 16, 32)), st.data())
def test_invariants_for_every_mechanism(trace, warp_size, data):
    base = data.draw(configs(warp_size, "sps"))
    cycles = {}
    for m in MECHS:
        cfg = base.replace(mechanism=m)
        ev = []
        s = simulate(trace, cfg, events=ev)
        # every thread ran its whole path to the exit, exactly once
        assert s.thread_insts == trace.total_thread_insts()
        assert int((s.occupancy_hist * np.arange(warp_size + 1)).sum()) == s.thread_insts
        assert s.occupancy_hist.sum() == s.warp_insts == s.quarter_hist.sum()
        assert s.occupancy_hist[0] == 0 and s.quarter_hist[0] == 0
        check_tables(ev)
        last = {}
        for e in ev:
            if e["kind"] == "tables":
                last[e["warp"]] = e
        assert all(not e["st"] and not e["rt"] for e in last.values()), "a warp ended with table entries left"
        cycles[m] = s.cycles
    # mimd is a lower bound on every mechanism with fixed latencies (docs/core.md); with the memory
    # model its one-thread accesses do not coalesce, so it is none
    if not memory_model_enabled(base, trace):
        assert all(cycles["mimd"] <= c for c in cycles.values()), cycles


def test_mimd_lower_bound_on_a_larger_trace():
    trace = synthetic(30, 512, seed=7, warp_size=32, block=(128, 1, 1), divergence=0.3)
    cfg = SimConfig(warp_size=32, simd_width=8, n_sms=2, max_warps_per_sm=8, lat_global=100)
    res = {m: simulate(trace, cfg.replace(mechanism=m)) for m in MECHS}
    assert all(res["mimd"].cycles <= r.cycles for r in res.values())
    # the same IPDOM reconvergence points give the same SIMD utilisation for sps, dps and mp
    # (ElTantawy et al. 2014)
    assert res["sps"].warp_insts == res["dps"].warp_insts == res["mp"].warp_insts
    assert res["mp-oer"].warp_insts <= res["mp"].warp_insts
    assert res["serial"].warp_insts >= res["sps"].warp_insts


def test_results_are_deterministic_and_independent_of_event_logging():
    trace = synthetic(20, 200, seed=3, warp_size=16, block=(50, 1, 1))
    for m in MECHS:
        cfg = SimConfig(mechanism=m, warp_size=16, simd_width=4)
        a = simulate(trace, cfg).to_dict()
        assert simulate(trace, cfg, events=[]).to_dict() == a == simulate(trace, cfg).to_dict()


def test_unimplemented_and_unknown_mechanisms_are_rejected_by_name():
    trace = synthetic(5, 8, seed=0)
    with pytest.raises(ConfigError, match="'hws' = true is defined for sps"):
        simulate(trace, SimConfig(mechanism="tbc", hws=True, simd_width=8))  # (every mechanism is implemented)
    with pytest.raises(ConfigError, match="mechanism"):
        SimConfig(mechanism="pdom2")
    with pytest.raises(ConfigError, match="issue_policy"):
        simulate(trace, SimConfig(mechanism="sps", issue_policy="majority"))


def test_cta_that_does_not_fit_names_the_field():
    trace = synthetic(5, None, seed=0, block=(256, 1, 1), grid=(1, 1, 1))
    with pytest.raises(ConfigError, match="max_warps_per_sm"):
        simulate(trace, SimConfig(max_warps_per_sm=4))


def test_barrier_in_divergent_code_deadlocks_under_sps_with_a_clear_message():
    # A -> B (bar.sync) -> D ; A -> C -> D : under a stack, the B split waits forever for C's threads
    trace = tiny(blocks=[["alu", "bra"], ["bar"], ["alu"], ["exit"]], succ=[[1, 2], [3], [3], [4]],
                 paths=[[0, 1, 3, 4], [0, 2, 3, 4]], barrier=[1])
    with pytest.raises(SimulationError, match=r"mechanism sps deadlocked.*warp 0"):
        simulate(trace, SimConfig(mechanism="sps", warp_size=4, simd_width=4))
    with pytest.raises(reference.ReferenceError_):
        reference.simulate(trace, SimConfig(mechanism="sps", warp_size=4, simd_width=4))
    # mimd lets every thread run on: C's thread exits, which releases the barrier
    s = simulate(trace, SimConfig(mechanism="mimd", warp_size=4, simd_width=4))
    assert s.thread_insts == trace.total_thread_insts()


def test_no_progress_guard_names_mechanism_cycle_and_warp():
    trace = tiny(blocks=[["gld"], ["exit"]], succ=[[1], [2]], paths=[[0, 1, 2]], chain=True)
    with pytest.raises(SimulationError, match=r"mechanism mp made no progress for 10 cycles at cycle \d+ \(warp 0"):
        simulate(trace, SimConfig(mechanism="mp", warp_size=4, lat_global=500, no_progress_cycles=10))


def test_barrier_wait_is_counted():
    # two warps; warp 1's threads take a long path before the barrier block every thread passes
    trace = tiny(blocks=[["alu", "bra"], ["alu", "alu", "alu", "alu"], ["bar"], ["exit"]],
                 succ=[[1, 2], [2], [3], [4]], paths=[[0, 2, 3, 4]] * 4 + [[0, 1, 2, 3, 4]] * 4, chain=True,
                 barrier=[2])
    s = simulate(trace, SimConfig(mechanism="sps", warp_size=4, simd_width=4, lat_alu=5))
    assert s.barrier_wait_cycles > 0
    assert s.to_dict() == reference.simulate(trace, SimConfig(mechanism="sps", warp_size=4, simd_width=4,
                                                              lat_alu=5)).to_dict()


def test_syncwarp_flags_are_validated_per_block():
    trace = synthetic(6, 32, seed=1)
    ok = np.zeros(trace.n_blocks, bool)
    assert simulate(trace, SimConfig(), syncwarp=ok).to_dict() == simulate(trace, SimConfig()).to_dict()
    with pytest.raises(ConfigError, match="one entry per block"):
        simulate(trace, SimConfig(), syncwarp=np.zeros(trace.n_blocks + 1, bool))


@pytest.mark.parametrize("mech", MECHS)
def test_64_lane_warps_use_the_sign_bit_correctly(mech):
    trace = synthetic(14, None, seed=11, warp_size=64, block=(128, 1, 1), grid=(2, 1, 1), divergence=0.4)
    cfg = SimConfig(mechanism=mech, warp_size=64, simd_width=16, lat_global=40)
    fast_ev, ref_ev = [], []
    fast = simulate(trace, cfg, events=fast_ev)
    assert fast.to_dict() == reference.simulate(trace, cfg, events=ref_ev).to_dict()
    assert fast_ev == ref_ev
    assert fast.thread_insts == trace.total_thread_insts()
    assert any(e["kind"] == "issue" and e["mask"] >> 63 for e in fast_ev)  # lane 63 did issue


def test_kernel_is_loaded_from_the_numba_cache_in_a_new_process():
    import subprocess
    import sys

    code = ("from simt_fast.sim import simulate, core\nfrom simt_fast.sim.config import SimConfig\n"
            "from simt_fast.trace.synth import synthetic\n"
            "simulate(synthetic(5, 8, seed=0), SimConfig())\n"
            "print(sum(core.run.stats.cache_hits.values()), sum(core.run.stats.cache_misses.values()))")
    simulate(synthetic(5, 8, seed=0), SimConfig())  # make sure the cache is populated
    out = subprocess.run([sys.executable, "-W", "ignore", "-c", code], capture_output=True, text=True, check=True)
    hits, misses = map(int, out.stdout.split())
    assert (hits, misses) == (1, 0)
