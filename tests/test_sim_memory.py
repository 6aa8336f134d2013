"""The memory model inside the timing model (docs/memory.md, *In the timing model*).

* kernel vs plain-Python reference with the model on, for every mechanism (stats and event logs),
  on random synthetic traces with addresses and random memory systems;
* without the model (perfect memory, a trace without /mem) the run is the fixed-latency run;
* hand-worked goldens: hits, misses, LSU and DRAM queueing of a few warps through the cycle loop;
* issue 18's microbenchmarks (L1 re-reads hit; a bandwidth-bound stream's cycles follow
  dram_bytes_per_cycle, a latency-bound one's do not);
* regrouped warps coalesce worse (dwf) and compaction recovers some of it (tbc), on divergent code.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from simt_fast.ir.model import OpClass
from simt_fast.sim import SimulationError, reference, simulate
from simt_fast.sim.config import ConfigError, SimConfig, load_config
from simt_fast.sim.memory.program import note, prepare_memory
from simt_fast.sim.registry import names
from simt_fast.trace.model import MEM_FORMAT, MEM_LOAD
from simt_fast.trace.synth import synthetic, traces as synthetic_traces

from hypothesis_budget import examples
from memory_helpers import UNLOADED
from sim_helpers import tiny_trace

MECHS = names()
MEMORY_STATS = ("mem_requests", "mem_sectors", "shared_requests", "shared_replays", "l1_hits", "l1_misses",
                "l2_hits", "l2_misses", "dram_bytes", "mem_stall_cycles", "mshr_stall_cycles", "icnt_wait_cycles",
                "slice_wait_cycles")


# ---- kernel vs reference ----------------------------------------------------------------------
@st.composite
def memory_configs(draw, warp_size: int):
    l1_assoc = draw(st.sampled_from((1, 2, 4)))
    l2_assoc = draw(st.sampled_from((1, 4)))
    mech = draw(st.sampled_from(MECHS))
    simd = draw(st.sampled_from((4, 8, 32)))
    return SimConfig(
        mechanism=mech, warp_size=warp_size, simd_width=simd,
        n_sms=draw(st.integers(1, 3)), n_schedulers=draw(st.integers(1, 2)), max_warps_per_sm=64,
        max_ctas_per_sm=draw(st.integers(1, 3)), issue_policy=draw(st.sampled_from(("auto", "lrr", "gto"))),
        hws=mech in ("sps", "dwf", "en-dwf") and warp_size % simd == 0 and draw(st.booleans()),
        lat_alu=draw(st.integers(1, 8)), lat_global=draw(st.integers(20, 120)), lat_shared=draw(st.integers(1, 20)),
        lat_const=draw(st.integers(1, 12)), lat_l1=draw(st.integers(1, 20)), lat_l2=draw(st.integers(10, 60)),
        l1_bytes=128 * l1_assoc * draw(st.sampled_from((0, 1, 2, 4))), l1_assoc=l1_assoc,
        l1_write_policy=draw(st.sampled_from(("write-evict", "write-through"))),
        l2_bytes=128 * l2_assoc * draw(st.sampled_from((0, 2, 8))), l2_assoc=l2_assoc,
        l2_write_miss=draw(st.sampled_from(("fetch", "allocate"))),
        lsu_sectors_per_cycle=draw(st.integers(1, 4)), shared_banks=draw(st.sampled_from((8, 16, 32))),
        shared_bank_group=draw(st.sampled_from((8, 16, 32))), dram_bytes_per_cycle=draw(st.sampled_from((0, 8, 40))),
        dram_partitions=draw(st.integers(1, 3)), dram_interleave_bytes=draw(st.sampled_from((32, 256))),
        l2_slices=draw(st.integers(1, 3)), l2_slice_bytes_per_cycle=draw(st.sampled_from((0, 8, 32))),
        icnt_flit_bytes=draw(st.sampled_from((16, 40))), icnt_bytes_per_cycle=draw(st.sampled_from((0, 10, 40))),
        l1_mshrs=draw(st.sampled_from((0, 1, 4))), l1_miss_queue=draw(st.sampled_from((0, 1, 8))),
        l1_mshr_merge=draw(st.sampled_from((0, 1, 8))), l2_mshr_merge=draw(st.sampled_from((0, 1, 4))),
    )


@examples(60)
@given(synthetic_traces(max_blocks=14, max_threads=96, with_mem=True), st.sampled_from((4, 8, 16, 32)), st.data())
def test_kernel_matches_reference_with_memory_on(trace, warp_size, data):
    cfg = data.draw(memory_configs(warp_size))
    fast_ev, ref_ev = [], []
    try:
        fast = simulate(trace, cfg, events=fast_ev)
    except (SimulationError, ConfigError):
        with pytest.raises((reference.ReferenceError_, ConfigError)):
            reference.simulate(trace, cfg)
        return
    ref = reference.simulate(trace, cfg, events=ref_ev)
    assert fast.to_dict() == ref.to_dict()
    assert fast_ev == ref_ev
    assert fast.mem_sectors >= fast.mem_requests


@pytest.mark.parametrize("mech", MECHS)
def test_every_mechanism_models_memory_like_its_reference(mech):
    trace = synthetic(n_blocks=12, n_threads=96, seed=5, block=(48, 1, 1), divergence=0.3, with_mem=True)
    cfg = SimConfig(mechanism=mech, warp_size=16, simd_width=8, n_sms=2, max_ctas_per_sm=1, lat_global=90,
                    lat_l2=40, l1_bytes=1024, l1_assoc=2, l2_bytes=4096, l2_assoc=4, dram_bytes_per_cycle=24,
                    dram_partitions=2)
    fast_ev, ref_ev = [], []
    fast = simulate(trace, cfg, events=fast_ev)
    assert fast.to_dict() == reference.simulate(trace, cfg, events=ref_ev).to_dict()
    assert fast_ev == ref_ev
    assert fast.mem_requests > 0 and fast.l1_hits + fast.l1_misses > 0 and fast.dram_bytes > 0


@pytest.mark.parametrize("cta,divergence", ((40, 0.4), (64, 0.4), (64, 0.0)))
@pytest.mark.parametrize("mech", ("sps", "mp-oer", "mimd", "dwf", "tbc"))
def test_every_thread_takes_each_of_its_entries_once(mech, cta, divergence, monkeypatch):
    """The kernels' cursors: after a run every thread has taken exactly its own /mem entries. CTAs of
    64 threads keep every core warp inside one group of address rows, so a converged warp moves its
    common row instead of its threads' cursors and writes them back when a lane drops out or its CTA
    retires (`memory.issue.access_mask`); without divergence only the retirement writes them. CTAs of 40
    mix such warps with warps over two groups."""
    import simt_fast.sim.run as run

    runs = []
    allocate = run.allocate_memory
    monkeypatch.setattr(run, "allocate_memory", lambda *a, **k: runs.append(allocate(*a, **k)) or runs[-1])
    trace = synthetic(n_blocks=16, n_threads=2 * cta, seed=2, block=(cta, 1, 1), divergence=divergence,
                      loop_prob=0.3, with_mem=True)
    cfg = SimConfig(mechanism=mech, simd_width=8, n_sms=2)
    assert simulate(trace, cfg).to_dict() == reference.simulate(trace, cfg).to_dict()
    assert np.array_equal(runs[-1].cursor, np.diff(trace.mem_ptr))


def test_address_rows_hold_each_threads_entries_in_order():
    """The kernels' layout (memory/program.py): entry j of thread t in row row0[t >> shift] + j, an
    affine row as base and stride with NO_ACCESS lanes void, any other row's lanes in `full`. Groups
    of 32 threads, or of one when rows that are not affine would more than double the addresses (two
    threads of a group with 100 random entries, the others 1)."""
    from simt_fast.sim.memory.program import GROUP_SHIFT, NOT_AFFINE, address_rows, thread_entries

    rng = np.random.default_rng(3)
    counts = rng.integers(2, 5, 70)  # 70 threads: a last group of 6
    n = counts.sum()
    mem_ptr = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    # entry j of thread t: affine in t for j 0 (stride 8) and 1 (broadcast, every third thread void),
    # random for j >= 2
    addr = rng.integers(0, 1 << 40, n).astype(np.int64)
    for t in range(70):
        addr[mem_ptr[t]] = 4096 + 8 * (t % 32)
        addr[mem_ptr[t] + 1] = -1 if t % 3 == 0 else 1 << 33
    cases = [(counts, addr, GROUP_SHIFT), (np.array([100, 100] + [1] * 30), None, 0)]
    for counts, addr, shift in cases:
        mem_ptr = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
        if addr is None:
            addr = rng.integers(0, 1 << 40, mem_ptr[-1]).astype(np.int64)
        got = address_rows(mem_ptr, addr.view(np.uint64))
        assert got[0] == shift
        for t, k in enumerate(counts):
            assert thread_entries(got, t, k) == addr[mem_ptr[t]:mem_ptr[t + 1]].tolist()
        rows = got[2].reshape(-1, 2)
        if shift:
            assert rows[got[1][:-1], 1].tolist().count(NOT_AFFINE) == 0  # every group's row 0 is affine
            assert (rows[got[1][:-1] + 1, 1] != NOT_AFFINE).all()  # and its row 1


@pytest.mark.parametrize("mech", ("sps", "dwf"))
def test_both_address_layouts_give_the_same_run(mech, monkeypatch):
    from simt_fast.sim.memory import program

    trace = synthetic(n_blocks=12, n_threads=256, seed=5, block=(64, 1, 1), divergence=0.3, with_mem=True)
    config = load_config("fermi", {"mechanism": mech})
    assert program.address_rows(trace.mem_ptr, trace.mem_addr)[0] == program.GROUP_SHIFT
    grouped = simulate(trace, config)
    monkeypatch.setattr(program.mem_rows, "MAX_PADDING", -1)  # every trace takes groups of one thread
    monkeypatch.setattr(program, "_last_layout", [None, None, None])
    assert program.address_rows(trace.mem_ptr, trace.mem_addr)[0] == 0
    assert simulate(trace, config).to_dict() == grouped.to_dict()


# ---- without the model: the fixed-latency run -------------------------------------------------
@pytest.mark.parametrize("mech", ("sps", "mp", "dwf", "tbc"))
def test_no_addresses_or_perfect_memory_is_the_fixed_latency_run(mech):
    with_mem = synthetic(n_blocks=12, n_threads=96, seed=9, block=(48, 1, 1), divergence=0.3, with_mem=True)
    without = dataclasses.replace(with_mem, mem_ptr=None, mem_addr=None, mem_format="")
    old_layout = dataclasses.replace(with_mem, mem_format="")
    cfg = SimConfig(mechanism=mech, simd_width=8, n_sms=2)
    fixed = simulate(without, cfg).to_dict()
    assert simulate(old_layout, cfg).to_dict() == fixed
    assert all(fixed[k] == 0 for k in MEMORY_STATS)
    assert simulate(with_mem, cfg).to_dict() != fixed  # the model is on: it changes the run
    perfect = cfg.replace(perfect_memory=True)
    assert simulate(with_mem, perfect).to_dict() == simulate(without, perfect).to_dict()
    assert note(cfg, without) and note(cfg, with_mem) is None and note(perfect, without) is None


# ---- hand-worked goldens ----------------------------------------------------------------------
def loop_trace(n_threads: int, n_iters: int, addr, *, chain: bool = False, use: bool = True,
               per_cta: int | None = None):
    """A: alu; B: a 4-byte global load then an alu reading it, repeated ``n_iters`` times; exit.
    ``addr(t, k)``: thread t's address in iteration k. ``chain``: each load's address register is
    the previous iteration's result (a dependent chain, as pointer chasing); ``use=False``: the alu
    does not read the load (nothing waits for memory: loads stream back to back)."""
    trace = tiny_trace([["alu"], ["gld", "alu"]], [[1], [1, 2]], [[0] + [1] * n_iters + [2]] * n_threads,
                       block=(per_cta or n_threads, 1, 1))
    dst = np.array([0, 1, 2], np.int16)  # alu r0; gld r1 <- [r0 or r2]; alu r2 <- r1
    src = np.full((3, 3), -1, np.int16)
    src[1, 0] = 2 if chain else 0
    src[2, 0] = 1 if use else 0
    mem_ptr = np.arange(n_threads + 1, dtype=np.int64) * n_iters
    mem_addr = np.array([addr(t, k) for t in range(n_threads) for k in range(n_iters)], np.uint64)
    return dataclasses.replace(trace, dst_reg=dst, src_reg=src, mem_ptr=mem_ptr, mem_addr=mem_addr,
                               mem_format=MEM_FORMAT, mem_bytes=np.array([0, 4, 0], np.uint8),
                               mem_kind=np.array([0, MEM_LOAD, 0], np.uint8))


GOLDEN = SimConfig(mechanism="sps", warp_size=4, simd_width=4, n_sms=1, lat_alu=2, lat_l1=10, lat_global=100,
                   l1_bytes=1024, l1_assoc=2, l2_bytes=0, dram_bytes_per_cycle=0, lsu_sectors_per_cycle=1, **UNLOADED)


def test_golden_l1_miss_then_hit_in_flight():
    # one warp of 4 threads, two passes over the same 16 bytes (one sector).
    # cycle 0: alu r0 (ready 2). cycle 2: load 1 (reads r0): the LSU takes sector 0 at cycle 2, an
    # L1 miss, DRAM without a queue: ready 2 + 100 = 102. The alu reading it issues at 102; load 2
    # issues the next cycle, 103: an L1 hit (the sector arrived at 102): ready 103 + 10 = 113; its
    # alu issues at 113 and ends at 115.
    trace = loop_trace(4, 2, lambda t, k: 4 * t)
    s = simulate(trace, GOLDEN)
    assert s.to_dict() == reference.simulate(trace, GOLDEN).to_dict()
    assert (s.mem_requests, s.mem_sectors, s.l1_misses, s.l1_hits, s.dram_bytes) == (2, 2, 1, 1, 32)
    assert s.cycles == 115
    assert s.mem_stall_cycles == (102 - 2) + (113 - 103)
    # two warps load the same sector a cycle apart: warp 1's hit (cycle 3) waits for warp 0's miss
    # to arrive (102), not 3 + 10; the alus issue at 102 and 103 (one scheduler) and end at 105
    shared = loop_trace(8, 1, lambda t, k: 4 * (t % 4))
    s = simulate(shared, GOLDEN)
    assert s.to_dict() == reference.simulate(shared, GOLDEN).to_dict()
    assert (s.l1_misses, s.l1_hits, s.cycles, s.mem_stall_cycles) == (1, 1, 105, (102 - 2) + (102 - 3))


def test_golden_lsu_and_dram_queueing():
    # two warps, each lane its own sector (stride 32 B): 4 sectors of one line per load, one per LSU
    # cycle. Warp 0 loads at cycle 2 (after its alu), warp 1 at cycle 3: the LSU takes warp 0's
    # sectors at 2..5 and warp 1's at 6..9. DRAM: one partition of 16 B/cycle, 2 cycles a sector:
    # warp 0's sectors start at 2, 4, 6, 8 (queued 0, 1, 2, 3): the last is ready 5 + 100 + 3 = 108;
    # warp 1's start at 10, 12, 14, 16 (queued 4..7): ready 9 + 100 + 7 = 116. Each alu issues at its
    # load's ready cycle and ends 2 later.
    trace = loop_trace(8, 1, lambda t, k: 32 * t)
    cfg = GOLDEN.replace(dram_bytes_per_cycle=16, dram_partitions=1, l1_bytes=0)
    s = simulate(trace, cfg)
    assert s.to_dict() == reference.simulate(trace, cfg).to_dict()
    assert (s.mem_requests, s.mem_sectors, s.l1_misses, s.dram_bytes) == (2, 8, 0, 256)
    assert s.cycles == 118
    assert s.mem_stall_cycles == (108 - 2) + (116 - 3)


# ---- issue 18's microbenchmarks ---------------------------------------------------------------
def test_rereading_an_array_smaller_than_l1_hits_after_the_first_pass():
    # 32 threads walk a 1 KiB array twice (8 loads per pass, each one coalesced 128-byte line)
    trace = loop_trace(32, 16, lambda t, k: 4 * (t + 32 * (k % 8)))
    cfg = SimConfig(warp_size=32, simd_width=32, n_sms=1, l1_bytes=16384, l1_assoc=4, l2_bytes=0,
                    dram_bytes_per_cycle=0)
    s = simulate(trace, cfg)
    assert (s.mem_requests, s.mem_sectors) == (16, 64)
    assert (s.l1_misses, s.l1_hits) == (32, 32)  # first pass misses every sector, the second hits all
    no_l1 = simulate(trace, cfg.replace(l1_bytes=0))
    assert no_l1.l1_hits == 0 and no_l1.cycles > s.cycles


@pytest.mark.parametrize("bound", ("bandwidth", "latency"))
def test_stream_cycles_follow_dram_bandwidth_only_when_bandwidth_bound(bound):
    base = SimConfig(warp_size=32, simd_width=32, n_sms=4, l1_bytes=0, l2_bytes=0, lat_global=400,
                     dram_partitions=4)
    if bound == "bandwidth":
        # 4 SMs x 4 CTAs of 128 threads, each thread 24 coalesced loads of fresh data that nothing
        # waits for: 6144 sectors, 192 KiB, stream as fast as DRAM allows
        trace = loop_trace(2048, 24, lambda t, k: 4 * (t + 2048 * k), use=False, per_cta=128)
        fast, slow = base.replace(dram_bytes_per_cycle=32), base.replace(dram_bytes_per_cycle=16)
    else:
        trace = loop_trace(128, 24, lambda t, k: 4 * (t + 128 * k), chain=True)  # 4 warps, dependent loads
        fast, slow = base.replace(dram_bytes_per_cycle=256), base.replace(dram_bytes_per_cycle=128)
    ratio = simulate(trace, slow).cycles / simulate(trace, fast).cycles
    if bound == "bandwidth":
        assert 1.8 < ratio < 2.05, ratio
    else:
        assert ratio < 1.05, ratio


# ---- regrouping and coalescing ----------------------------------------------------------------
def test_regrouped_warps_touch_more_sectors_and_compaction_fewer():
    # divergent synthetic code with addresses: dwf regroups threads of different warps (and CTAs),
    # whose elements are far apart, so its warps touch more sectors in all than sps' fixed warps;
    # tbc compacts only within a CTA, keeping more of the order. Total sectors compare directly
    # (every mechanism makes the same thread accesses); sectors *per request* do not order this way,
    # since they also count how many threads a request carries (docs/memory.md, *Regrouped warps*)
    trace = synthetic(n_blocks=24, n_threads=1024, seed=4, block=(256, 1, 1), divergence=0.5, with_mem=True)
    cfg = SimConfig(warp_size=32, simd_width=8, n_sms=2, perfect_memory=False)
    sectors = {m: simulate(trace, cfg.replace(mechanism=m)).mem_sectors for m in ("sps", "dwf", "tbc")}
    assert sectors["dwf"] > sectors["sps"], sectors
    assert sectors["tbc"] < sectors["dwf"], sectors


def test_memory_instruction_facts_default_to_4_byte_loads():
    trace = loop_trace(4, 1, lambda t, k: 4 * t)
    bare = dataclasses.replace(trace, mem_bytes=None, mem_kind=None)
    mp = prepare_memory(bare, GOLDEN)
    assert mp.on and list(mp.space) == [-1, int(OpClass.MEM_GLOBAL), -1]
    assert simulate(bare, GOLDEN).to_dict() == simulate(trace, GOLDEN).to_dict()


DIVERGENT = ("hashprobe", "mummer", "nqueens", "shortcircuit")


@pytest.fixture(scope="module")
def divergent_workloads():
    from simt_fast.sweep.spec import TraceSource
    from simt_fast.sweep.traces import resolve_traces
    from simt_fast.trace.model import Trace

    paths = resolve_traces([TraceSource(name=n, workload=n, size="tiny", seed=0) for n in DIVERGENT])
    return {n: Trace.load(paths[n][0]) for n in DIVERGENT}


@pytest.mark.parametrize("name", DIVERGENT)
def test_dwf_touches_more_sectors_than_sps_and_tbc_fewer_than_dwf(name, divergent_workloads):
    # The same trace makes the same thread accesses under every mechanism, so total sectors compare
    # directly: dwf's regrouped warps mix threads from far apart and touch more, tbc compacts
    # within a CTA and touches fewer than dwf (the TBC paper's argument; docs/memory.md's table)
    trace = divergent_workloads[name]
    base = load_config("fermi")
    s = {m: simulate(trace, base.replace(mechanism=m)) for m in ("sps", "dwf", "tbc")}
    assert s["sps"].mem_requests > 0
    assert s["dwf"].mem_sectors > s["sps"].mem_sectors
    assert s["tbc"].mem_sectors < s["dwf"].mem_sectors


def test_the_split_bench_still_patches_the_kernels():
    # bench/bench_memory_split.py records a full run's accesses and reads its ready cycles back by
    # patching copies of the package at exact lines: a change to those lines must change the bench
    import importlib.util
    from pathlib import Path

    import simt_fast

    root = Path(__file__).resolve().parents[1]
    spec = importlib.util.spec_from_file_location("bench_memory_split", root / "bench" / "bench_memory_split.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    package = Path(simt_fast.__file__).parent
    assert bench.patch_problems(package, bench.RECORD_PATCH) == []
    assert bench.patch_problems(package, bench.LOOKUP_PATCH) == []
    broken = [(rel, old + "#", new) for rel, old, new in bench.LOOKUP_PATCH]
    assert bench.patch_problems(package, broken) == [rel for rel, _, _ in bench.LOOKUP_PATCH]
