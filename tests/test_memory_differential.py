"""The numba memory model against its plain-Python reference (docs/memory.md) on random access streams
and random configurations: ready cycles of every access, every counter, and the final contents of
every cache in LRU order (which sectors are valid and dirty), so hits, misses, evictions, LRU order,
sector fills, write policies, the LSU and DRAM queueing all have to agree. Then the trace-level
profile against its reference on random synthetic traces with addresses."""

import numpy as np
from hypothesis import HealthCheck, given
from hypothesis import strategies as st

from hypothesis_budget import examples
from memory_helpers import AT, C, G, L, LD, S, ST, Access, run_numba, run_reference

from simt_fast._jit import jit
from simt_fast.sim import memory
from simt_fast.sim.config import LINE_BYTES, SimConfig
from simt_fast.sim.memory.layout import SCRATCH_WORDS
from simt_fast.sim.memory.mshr import register_free, take_register
from simt_fast.sim.memory.shared_banks import shared_passes
from simt_fast.sim.reference import memory as ref
from simt_fast.trace.synth import synthetic

X = 1 << 40
SETTINGS = examples(300, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def configs(draw):
    def cache(level, set_choices):
        sets = draw(st.sampled_from(set_choices))
        assoc = draw(st.integers(1, 4))
        return {f"{level}_bytes": sets * LINE_BYTES * assoc, f"{level}_assoc": assoc}

    return SimConfig(
        **cache("l1", (0, 1, 2, 3)), **cache("l2", (0, 1, 2, 5)),
        l1_write_policy=draw(st.sampled_from(("write-evict", "write-through"))),
        l2_write_miss=draw(st.sampled_from(("fetch", "allocate"))),
        lat_l1=draw(st.integers(1, 40)), lat_l2=draw(st.integers(1, 120)), lat_global=draw(st.integers(1, 300)),
        lat_shared=draw(st.integers(1, 40)), lat_const=draw(st.integers(1, 40)), lat_alu=draw(st.integers(1, 30)),
        lsu_sectors_per_cycle=draw(st.integers(1, 4)),
        shared_banks=draw(st.sampled_from((1, 2, 4, 16, 32))), shared_bank_group=draw(st.sampled_from((1, 4, 16, 32))),
        dram_bytes_per_cycle=draw(st.sampled_from((0, 1, 7, 32, 127, 300))),
        dram_partitions=draw(st.integers(1, 5)), dram_interleave_bytes=draw(st.sampled_from((32, 96, 256, 512))),
        l2_slices=draw(st.integers(1, 5)), l2_slice_bytes_per_cycle=draw(st.sampled_from((0, 1, 7, 16, 32))),
        icnt_flit_bytes=draw(st.sampled_from((8, 32, 40, 64))), icnt_bytes_per_cycle=draw(st.sampled_from((0, 3, 20, 40))),
        l1_mshrs=draw(st.sampled_from((0, 1, 2, 4, 64))), l1_miss_queue=draw(st.sampled_from((0, 1, 2, 8))),
        l1_mshr_merge=draw(st.sampled_from((0, 1, 2, 8))), l2_mshr_merge=draw(st.sampled_from((0, 1, 2, 4))),
    )


@st.composite
def streams(draw):
    """(accesses, n_sms, n_warps, width): issue times never decrease (a warp's issues are in cycle
    order in every kernel), addresses from a small pool so caches hit, conflict and evict. Each warp
    is a CTA of ``width`` threads in its own slot of the SM (local memory's layout)."""
    n_sms = draw(st.sampled_from((1, 1, 2, 3)))
    n_warps = draw(st.integers(1, 4))
    width = draw(st.sampled_from((1, 4, 8, 32)))
    now = 0
    out = []
    for _ in range(draw(st.integers(1, 25))):
        now += draw(st.sampled_from((0, 0, 1, 3, 20, 150)))
        space = draw(st.sampled_from((G, G, G, L, S, C)))
        kind = draw(st.sampled_from((LD, LD, ST, AT)))
        nbytes = draw(st.sampled_from((4, 4, 8, 16, 1, 3, 12)))
        stride = draw(st.sampled_from((0, 1, 2, 32, 33)))
        base = draw(st.integers(0, 12)) * 64 + draw(st.sampled_from((0, 0, 2, 30)))
        mask = draw(st.integers(0, (1 << width) - 1)) | draw(st.sampled_from((0, (1 << width) - 1)))
        pattern = draw(st.sampled_from(("stride", "random")))
        addrs = []
        for lane in range(width):
            if not (mask >> lane) & 1:
                addrs.append(None)
            elif pattern == "random":
                addrs.append(draw(st.integers(0, 1023)))
            else:
                addrs.append(base + lane * stride * max(nbytes, 4))
        if space in (G,):
            addrs = [None if a is None else X + a for a in addrs]
        warp = draw(st.integers(0, n_warps - 1))
        out.append(Access(draw(st.integers(0, n_sms - 1)), warp, now, space, kind, nbytes, addrs,
                          [warp * 32 + lane for lane in range(width)], writes_reg=kind != ST))
    return out, n_sms, n_warps, width


@SETTINGS
@given(configs(), streams())
def test_numba_matches_reference(cfg, stream):
    accesses, n_sms, n_warps, width = stream
    ready, stats, state = run_numba(cfg, accesses, n_sms, n_warps, width, n_warps)
    ready_ref, stats_ref, model = run_reference(cfg, accesses, n_sms, n_warps, width, n_warps)
    assert ready == ready_ref
    assert stats == stats_ref
    if cfg.l1_bytes:
        for sm in range(n_sms):
            assert memory.cache_contents(state, "l1", sm) == model.cache_contents("l1", sm)
    if cfg.l2_bytes:
        assert memory.cache_contents(state, "l2") == model.cache_contents("l2")


@SETTINGS
@given(configs(), streams())
def test_per_sm_parts_do_not_depend_on_the_order_of_sms(cfg, stream):
    """Without an L2 and a bandwidth limit below the SMs, running each SM's accesses alone, SM after
    SM (the kernels' SM-major visit order), gives every access the same ready cycle and the same
    counters as the accesses in global issue order (docs/core.md, *Visit order*): the SMs' own
    ports, registers and queues are theirs alone."""
    cfg = cfg.replace(l2_bytes=0, dram_bytes_per_cycle=0, l2_slice_bytes_per_cycle=0, icnt_bytes_per_cycle=0)
    assert not memory.couples_sms(cfg, synthetic(n_blocks=4, n_threads=8, with_mem=True))
    accesses, n_sms, n_warps, width = stream
    warps_of_sm = {}
    for a in accesses:  # warps belong to one SM in the kernels
        a.sm = warps_of_sm.setdefault(a.warp, a.sm)
    in_order, stats, _ = run_numba(cfg, accesses, n_sms, n_warps, width, n_warps)
    sm_major = sorted(range(len(accesses)), key=lambda i: (accesses[i].sm, i))
    ready, stats_sm_major, _ = run_numba(cfg, [accesses[i] for i in sm_major], n_sms, n_warps, width, n_warps)
    assert [ready[sm_major.index(i)] for i in range(len(accesses))] == in_order
    assert stats_sm_major == stats


@examples(40, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 10**6), st.sampled_from((8, 16, 32)), st.integers(1, 3), configs())
def test_profile_matches_reference(seed, warp_size, n_sms, cfg):
    trace = synthetic(n_blocks=10, n_threads=96, seed=seed, warp_size=warp_size, block=(48, 1, 1), with_mem=True)
    cfg = cfg.replace(warp_size=warp_size, n_sms=n_sms)
    got = memory.profile(trace, cfg)
    want = ref.profile(trace, cfg)
    for k, v in want.items():
        if k.startswith("inst_"):
            arr = getattr(got, k)
            assert {i: int(x) for i, x in enumerate(arr) if x} == v, k
        else:
            assert getattr(got, k) == v, k
    assert got.mem_requests == int(got.inst_requests[np.isin(trace.op_class, (2, 4))].sum())  # global + local
    assert np.all(got.inst_requests[~np.isin(trace.op_class, (2, 3, 4, 5))] == 0)


@jit
def _shared_passes(addrs, n_lanes, nbytes, banks, group, atomic, scratch):  # (helpers have no Python entry)
    return shared_passes(addrs, n_lanes, nbytes, banks, group, atomic, scratch)


@st.composite
def lane_rows(draw):
    """A warp's shared addresses, mostly affine rows (lane l at a0 + l * stride: what `affine_passes`
    counts in closed form), some with one lane moved or switched off (the word-by-word count)."""
    n = draw(st.integers(1, 32))
    a0 = draw(st.integers(0, 1 << 12)) * draw(st.sampled_from((1, 4)))
    stride = draw(st.sampled_from((0, 4, -4, 8, 12, 64, 128, 132, 4 * 33))) if draw(st.booleans()) \
        else draw(st.integers(-40, 200))
    addrs = [a0 + lane * stride + (1 << 14) for lane in range(n)]
    if draw(st.integers(0, 3)) == 0:
        addrs[draw(st.integers(0, n - 1))] = draw(st.sampled_from((-1, 0, 4, 128)))
    return addrs


@examples(400)
@given(lane_rows(), st.sampled_from((1, 2, 4, 8)), st.sampled_from((1, 2, 16, 24, 32)), st.sampled_from((1, 4, 16, 32)),
       st.booleans())
def test_shared_passes_affine_and_counted_match_the_reference(addrs, nbytes, banks, group, atomic):
    """Bank passes of a warp's shared access, the closed form for affine rows and the word-by-word count
    for the others, against the reference's count over each lane group."""
    cfg = SimConfig(shared_banks=banks, shared_bank_group=group)
    want = ref.MemoryModel(cfg, 1, 1, 32, 1).shared_passes(addrs, nbytes, atomic)
    passes, replays = _shared_passes(np.array(addrs, np.int64), len(addrs), nbytes, banks, group, atomic,
                                     np.zeros(SCRATCH_WORDS, np.int64))
    assert (passes, replays) == (sum(want), sum(p - 1 for p in want))


@jit
def _miss_starts(n, times, durations, out):  # (helpers have no Python entry)
    mshr = np.zeros((1, n + 1), np.int64)
    for i in range(times.shape[0]):
        start = register_free(mshr, 0, n, times[i])
        take_register(mshr, 0, n, start + durations[i])
        out[i] = start


@examples(200)
@given(st.sampled_from((1, 2, 3, 8, 64, 512)), st.lists(st.tuples(st.integers(0, 3), st.integers(1, 3000)),
                                                        min_size=1, max_size=3000))
def test_miss_status_registers_match_a_min_over_every_register(n, requests):
    """The register file kept as a row swept when full (`mshr`) against the plain rule: a miss at cycle
    t takes the register that frees first and starts when it is free. Requests come in cycle order
    (steps of 0-3 cycles, so bursts fill every register) and hold their register 1-3000 cycles."""
    times = np.cumsum([step for step, _ in requests]).astype(np.int64)
    durations = np.array([d for _, d in requests], np.int64)
    regs = [0] * n
    want = []
    for t, d in zip(times.tolist(), durations.tolist()):
        e = min(range(n), key=lambda i: regs[i])
        start = max(t, regs[e])
        regs[e] = start + d
        want.append(start)
    got = np.zeros(len(times), np.int64)
    _miss_starts(n, times, durations, got)
    assert got.tolist() == want
