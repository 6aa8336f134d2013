"""Dynamic scalarization statistics (Lee et al. 2013 §4.2, Fig. 6) on hand-made traces and a workload."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, strategies as st

from simt_fast.dynamic.expansion import ipdom_replay
from simt_fast.dynamic.scalarize import (ScalarFacts, counts_from_replay, dynamic_stats, facts_for_trace,
                                            scalarize_trace, static_stats, unscalarized_facts)
from simt_fast.sim import simulate
from simt_fast.sim.config import SimConfig
from simt_fast.trace import synthetic
from simt_fast.trace.model import TraceError

from hypothesis_budget import examples
from sim_helpers import tiny_trace


def diamond():
    blocks = [["alu", "bra"], ["alu"], ["alu", "alu"], ["gld", "exit"]]
    tr = tiny_trace(blocks, [[1, 2], [3], [3], [4]], [[0, 1, 3, 4]] * 2 + [[0, 2, 3, 4]] * 2)
    a = lambda *v: np.array(v, np.int64)  # noqa: E731
    facts = ScalarFacts(block_start=np.asarray(tr.block_start, np.int64),
                        convergent=np.array([1, 0, 0, 1, 1], bool),
                        scalar=np.array([1, 1, 0, 0, 0, 0, 1], bool), warp_seq=np.array([0, 0, 0, 0, 0, 1, 0], bool),
                        mem=np.array([0, 0, 0, 0, 0, 1, 0], bool), src_scalar=a(0, 1, 1, 0, 1, 1, 0),
                        src_private=a(0, 0, 1, 1, 1, 0, 0), dst_scalar=a(1, 0, 0, 0, 0, 0, 0),
                        dst_private=a(0, 0, 1, 1, 1, 1, 0), n_scalar_regs=2, n_private_regs=3)
    return tr, facts


def test_diamond_hand_worked():
    tr, facts = diamond()
    d = dynamic_stats(tr, facts, warp_sizes=(4,))
    c, base = d["warp_sizes"][4], d["baseline"]
    assert (c["issued_scalar"], c["issued_static_converged"], c["issued_dynamic_converged"], c["issued_diverged"]) \
        == (3, 1, 0, 3)
    assert c["issued"] == 7 == simulate(tr, SimConfig(mechanism="sps", warp_size=4)).warp_insts
    assert c["diverged_threads"] == 2 + 2 * 2
    assert c["thread_ops"] == 3 + 2 + 4 + 4 and base["thread_ops"] == base["issued"] == 22
    assert (c["reg_reads"], base["reg_reads"]) == (10, 18)
    assert (c["reg_writes"], base["reg_writes"]) == (11, 14)
    assert (c["mem_addresses"], c["mem_data"], base["mem_addresses"]) == (1, 4, 4)
    assert c["convergent_partial"] == 0
    assert c["saving_pct"]["thread_ops"] == pytest.approx(100 * 9 / 22)
    s = static_stats(facts, warp_sizes=(4,))
    assert s["scalar_instructions"] == 3 and s["registers_per_warp"][4] == {
        "scalarized": 2 + 4 * 3, "baseline": 4 * 5, "saving_pct": pytest.approx(100 * 6 / 20)}


def test_fully_converged_kernel():
    """Every thread on the same path: nothing diverges, converged issues are all issues."""
    tr = tiny_trace([["alu", "bra"], ["alu"], ["exit"]], [[1, 2], [2], [3]], [[0, 1, 2, 3]] * 16)
    facts = unscalarized_facts(tr)
    for w, c in dynamic_stats(tr, facts)["warp_sizes"].items():
        assert c["issued_diverged"] == c["diverged_threads"] == 0
        assert c["issued_dynamic_converged"] == c["issued"] == 4 * -(-16 // w)
        assert c["thread_ops"] == tr.total_thread_insts()  # no scalars: every thread works


def random_facts(tr, rng):
    n, nb = tr.n_instrs, tr.n_blocks
    conv = rng.random(nb) < 0.5
    blk = np.repeat(np.arange(nb), np.diff(tr.block_start))
    scalar = (rng.random(n) < 0.4) & conv[blk]
    mem = rng.random(n) < 0.3
    r = lambda: rng.integers(0, 3, n).astype(np.int64)  # noqa: E731
    return ScalarFacts(np.asarray(tr.block_start, np.int64), conv, scalar, mem & (rng.random(n) < 0.5) & ~scalar,
                       mem, r(), r(), r(), r(), 3, 5)


@examples(50)
@given(seed=st.integers(0, 10_000), n_blocks=st.integers(3, 14))
def test_wider_warps_issue_less_and_diverge_more(seed, n_blocks):
    tr = synthetic(n_blocks=n_blocks, n_threads=64, seed=seed)
    facts = random_facts(tr, np.random.default_rng(seed))
    d = dynamic_stats(tr, facts)
    base, ws = d["baseline"], d["warp_sizes"]
    assert base["thread_ops"] == tr.total_thread_insts()
    for small, big in ((4, 8), (8, 16), (16, 32)):
        a, b = ws[small], ws[big]
        # a warp of 2k threads issues at most what its two k-thread halves issue (IPDOM splits of the
        # wide warp project onto the halves' own splits), and a thread converged in the wide warp is
        # converged in its half, so diverged thread work only grows
        assert b["issued"] <= a["issued"]
        assert b["issued_scalar"] <= a["issued_scalar"]
        assert b["diverged_threads"] >= a["diverged_threads"]
        for k in ("thread_ops", "reg_reads", "reg_writes", "mem_addresses"):
            assert b[k] <= a[k] <= base[k]
        assert b["mem_data"] <= a["mem_data"] <= base["mem_data"]
    for w, c in ws.items():
        assert c["issued"] == ipdom_replay(tr, w).warp_insts
        assert c["mem_data"] >= c["mem_addresses"] or facts.warp_seq.any()


def test_workload_trace_with_its_ptx():
    from simt_fast.emu import launch
    from simt_fast.workloads import get

    wl = get("shortcircuit")
    spec = wl.launch_spec("tiny")
    run = launch(wl.ptx_path, wl.kernel, spec.grid, spec.block, spec.args, spec.shared_bytes)
    r = scalarize_trace(run.trace, wl.ptx_path)
    assert r["dynamic"]["baseline"]["thread_ops"] == run.thread_insts
    assert 0 < r["static"]["scalar_instructions"] < r["static"]["instructions"]
    for w, c in r["dynamic"]["warp_sizes"].items():
        assert c["issued"] == simulate(run.trace, SimConfig(mechanism="sps", warp_size=w, max_warps_per_sm=512)).warp_insts
        assert 0 < c["saving_pct"]["thread_ops"] < 100
    other = get("bfs")
    with pytest.raises(TraceError, match="not recorded from kernel"):
        facts_for_trace(run.trace, other.ptx_path, other.kernel)


def brute_force_counts(tr, facts, w):
    """Fig. 6 counts from the sps timing core's issue log, one issue at a time (independent of the
    replay): an issue is 'full' when its mask holds every lane whose thread still has instructions."""
    ev = []
    simulate(tr, SimConfig(mechanism="sps", warp_size=w, max_warps_per_sm=64), events=ev)
    sizes = tr.block_sizes()
    tpc = tr.threads_per_cta
    wpc = -(-tpc // w)
    left = {}
    for t in range(tr.n_threads):
        cta, lt = divmod(t, tpc)
        left[(cta * wpc + lt // w, lt % w)] = int(sizes[tr.thread_path(t).astype(np.int64)].sum())
    keys = ("issued_scalar", "issued_static_converged", "issued_dynamic_converged", "issued_diverged",
            "diverged_threads", "thread_ops", "reg_reads", "reg_writes", "mem_addresses", "mem_data")
    c = dict.fromkeys(keys, 0)
    blk_of = facts.block_of()
    for e in ev:
        if e["kind"] != "issue":
            continue
        b, off = e["pc"]
        i = int(tr.block_start[b]) + off
        lanes = [l for l in range(w) if e["mask"] >> l & 1]
        live = [l for l in range(w) if left.get((e["warp"], l), 0) > 0]
        p = len(lanes)
        sc, conv = bool(facts.scalar[i]), bool(facts.convergent[blk_of[i]])
        if sc:
            c["issued_scalar"] += 1
        elif conv:
            c["issued_static_converged"] += 1
        elif lanes == live:
            c["issued_dynamic_converged"] += 1
        else:
            c["issued_diverged"] += 1
            c["diverged_threads"] += p
        c["thread_ops"] += 1 if sc else p
        c["reg_reads"] += facts.src_scalar[i] + facts.src_private[i] * p
        c["reg_writes"] += facts.dst_scalar[i] + facts.dst_private[i] * p
        if facts.mem[i]:
            c["mem_addresses"] += 1 if sc or facts.warp_seq[i] else p
            c["mem_data"] += 1 if sc else p
        for l in lanes:
            left[(e["warp"], l)] -= 1
    return c


@examples(40)
@given(seed=st.integers(0, 10_000), n_blocks=st.integers(3, 12), w=st.sampled_from([4, 8, 32]))
def test_counts_match_issue_by_issue_brute_force(seed, n_blocks, w):
    tr = synthetic(n_blocks=n_blocks, n_threads=64, seed=seed)
    facts = random_facts(tr, np.random.default_rng(seed + 1))
    got = counts_from_replay(facts, ipdom_replay(tr, w))
    want = brute_force_counts(tr, facts, w)
    assert {k: got[k] for k in want} == want


# Lee et al. 2013 Fig. 1's FIR filter (results[idx] = sum over i < flen of coeffs[i] * samples[idx + i]),
# written as nvcc would emit it: the kernel's four arguments are read with ld.param, which the paper's
# abstract machine does with ordinary loads (Fig. 1(b) b02-b05) and scalarizes (Fig. 1(c) c02-c05).
FIR_PTX = """
.version 7.0
.target sm_75
.address_size 64
.visible .entry fir(.param .u64 samples, .param .u64 coeffs, .param .u32 flen, .param .u64 results)
{
    .reg .pred %p<2>;
    .reg .b32 %r<4>;
    .reg .f32 %f<4>;
    .reg .b64 %rd<10>;
    ld.param.u64 %rd1, [samples];
    ld.param.u64 %rd2, [coeffs];
    ld.param.u32 %r1, [flen];
    ld.param.u64 %rd3, [results];
    cvta.to.global.u64 %rd4, %rd1;
    cvta.to.global.u64 %rd5, %rd2;
    cvta.to.global.u64 %rd6, %rd3;
    mov.u32 %r2, %tid.x;
    mul.wide.u32 %rd7, %r2, 4;
    add.s64 %rd8, %rd4, %rd7;
    mov.f32 %f1, 0f00000000;
    mov.u32 %r3, 0;
    setp.lt.s32 %p1, %r3, %r1;
    @!%p1 bra DONE;
LOOP:
    ld.global.f32 %f2, [%rd5];
    ld.global.f32 %f3, [%rd8];
    fma.rn.f32 %f1, %f2, %f3, %f1;
    add.s64 %rd5, %rd5, 4;
    add.s64 %rd8, %rd8, 4;
    add.s32 %r3, %r3, 1;
    setp.lt.s32 %p1, %r3, %r1;
    @%p1 bra LOOP;
DONE:
    add.s64 %rd9, %rd6, %rd7;
    st.global.f32 [%rd9], %f1;
    ret;
}
"""


def test_fir_memory_counts_hand_worked():
    """Every memory access of the abstract machine counts, kernel parameters included.

    8 threads, flen = 3.  Per thread: 4 ld.param + 3 x (coefficient, sample) + 1 store = 11 accesses,
    88 in all without scalarization.  Scalarized, per warp: the 4 parameter loads and each coefficient
    load are scalar (1 address, 1 datum); each sample load and the store are warp-sequential (1 address,
    one datum per thread).  Warps of 4 (two warps): addresses 2 x (4 + 3 x 2 + 1) = 22, data
    2 x (4 + 3 x (1 + 4) + 4) = 46.  One warp of 8: addresses 11, data 4 + 3 x (1 + 8) + 8 = 39.
    """
    from simt_fast.emu import launch

    samples = np.arange(10, dtype=np.float32)
    coeffs = np.array([0.5, 0.25, 0.125], np.float32)
    out = np.zeros(8, np.float32)
    run = launch(FIR_PTX, "fir", 1, 8, [samples, coeffs, np.int32(3), out])
    np.testing.assert_array_equal(out, [sum(coeffs[i] * samples[t + i] for i in range(3)) for t in range(8)])
    d = scalarize_trace(run.trace, FIR_PTX, warp_sizes=(4, 8))["dynamic"]
    assert d["baseline"]["mem_addresses"] == d["baseline"]["mem_data"] == 88
    w4, w8 = d["warp_sizes"][4], d["warp_sizes"][8]
    assert (w4["mem_addresses"], w4["mem_data"]) == (22, 46)
    assert (w8["mem_addresses"], w8["mem_data"]) == (11, 39)
    assert w4["saving_pct"]["mem_data"] == pytest.approx(100 * 42 / 88)
