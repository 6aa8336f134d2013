"""Synthetic traces: always valid, realistic CFG shapes, warp-correlated paths, numba walk == reference."""

import sys

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from simt_fast.ir import graph
from simt_fast.ir.model import OpClass
from simt_fast.trace import synthetic, validate
from simt_fast.trace.model import MEM_ATOMIC, MEM_FORMAT, MEM_LOAD, MEM_STORE, NO_ACCESS
from simt_fast.trace.synth import (
    _distance_to_exit,
    _splitmix,
    _splitmix_py,
    _uniform,
    _uniform_py,
    traces,
    walk_paths,
    walk_paths_reference,
)

from simt_fast.trace import synth as synth_module  # noqa: E402

from hypothesis_budget import examples


def succ_lists(t):
    return [list(map(int, t.succ_idx[t.succ_ptr[b] : t.succ_ptr[b + 1]])) for b in range(t.n_blocks)]


@examples(150)
@given(trace=traces())
def test_synthetic_traces_always_validate(trace):
    validate(trace)


@examples(60)
@given(trace=traces(max_blocks=40))
def test_cfg_shape_invariants(trace):
    n, exit_block = trace.n_blocks, trace.n_blocks - 1
    # Every block reachable from the entry and reaching the exit.
    assert len(graph.reverse_postorder(n, trace.succ_ptr, trace.succ_idx, 0)) == n
    succs = succ_lists(trace)
    assert (_distance_to_exit(n, succs) >= 0).all()
    # ipdom is the CFG layer's answer.
    assert np.array_equal(trace.ipdom, graph.immediate_postdominators(n, trace.succ_ptr, trace.succ_idx, exit_block))
    # Loops are natural: every edge going backwards in code order targets a block that dominates its source.
    idom = graph.immediate_dominators(n, trace.succ_ptr, trace.succ_idx, 0)
    for u, ss in enumerate(succs):
        for v in ss:
            if v <= u:
                assert graph.dominates(idom, v, u), f"back edge {u}->{v} is not natural"
    # Terminators agree with the successor lists (DESIGN §2).
    for b in range(exit_block):
        last = trace.op_class[trace.block_start[b + 1] - 1]
        ss = succs[b]
        if trace.has_barrier[b]:
            assert last == OpClass.BARRIER and ss == [b + 1]
        elif ss == [exit_block]:
            assert last == OpClass.EXIT
        elif len(ss) > 1:
            assert last in (OpClass.BRANCH, OpClass.EXIT)
        if len(ss) == 2 and last == OpClass.BRANCH:
            # the conditional branch reads the predicate its block's setp wrote (a scoreboard dependency)
            i = trace.block_start[b + 1] - 1
            assert trace.src_reg[i, 0] == trace.dst_reg[i - 1] >= 0


@examples(60)
@given(trace=traces(barrier_prob=1.0))
def test_barriers_are_passed_exactly_once_by_every_thread(trace):
    n = trace.n_blocks
    loops = graph.natural_loops(n, trace.succ_ptr, trace.succ_idx)
    for b in np.flatnonzero(trace.has_barrier):
        assert graph.dominates(trace.ipdom, int(b), 0), "a barrier block must post-dominate the entry"
        assert not any(b in L.body for L in loops), "a barrier block must lie outside loops"
        counts = np.add.reduceat((trace.path == b).astype(np.int64), trace.path_ptr[:-1])
        assert (counts == 1).all()


def test_defaults_produce_loops_several_exits_and_unstructured_edges():
    from simt_fast.ir.control_tree import build_control_tree

    seen = dict(loops=0, multi_exit=0, loop_breaks=0, barriers=0, switches=0, unstructured=0)
    for seed in range(20):
        t = synthetic(40, 64, seed)
        n = t.n_blocks
        # Wu et al. 2012's interacting edges, found by the structural analysis of simt_fast.ir.control_tree
        seen["unstructured"] += not build_control_tree(n, succ_lists(t), 0, n - 1).is_structured
        loops = graph.natural_loops(n, t.succ_ptr, t.succ_idx)
        seen["loops"] += len(loops)
        seen["multi_exit"] += int(np.sum(t.succ_idx == n - 1) >= 2)
        # an edge leaving a loop from a block that is not its latch: a `break` (unstructured in Wu et al. 2012's sense)
        seen["loop_breaks"] += sum(1 for L in loops for (src, _) in L.exits if src not in L.latches)
        seen["barriers"] += int(t.has_barrier.sum())
        seen["switches"] += int((np.diff(t.succ_ptr) > 2).sum())
    assert all(v > 0 for v in seen.values()), seen


@examples(60)
@given(trace=traces(max_blocks=48, structured=True, loop_prob=0.3, switch_prob=0.1))
def test_structured_cfgs_reduce_to_one_region(trace):
    """structured=True: structural analysis (Wu et al. 2012) collapses the CFG with no interacting edge."""
    from simt_fast.ir.control_tree import build_control_tree

    n = trace.n_blocks
    tree = build_control_tree(n, succ_lists(trace), 0, n - 1)
    assert tree.is_structured and not tree.interacting_edges
    assert int(np.sum(trace.succ_idx == n - 1)) == 1  # a single return
    validate(trace)


def test_deterministic_for_a_seed():
    a, b, c = synthetic(32, 128, 5), synthetic(32, 128, 5), synthetic(32, 128, 6)
    assert a.digest() == b.digest() != c.digest()


def test_thread_paths_do_not_depend_on_launch_size():
    small = synthetic(24, 64, 3, block=(32, 1, 1))
    big = synthetic(24, 256, 3, block=(32, 1, 1))
    assert np.array_equal(small.path, big.path[: len(small.path)])
    assert np.array_equal(small.path_ptr, big.path_ptr[: 65])


def test_divergence_zero_means_warps_never_split():
    t = synthetic(40, 256, 11, warp_size=16, block=(64, 1, 1), divergence=0.0, loop_prob=0.3)
    for first in range(0, t.n_threads, 16):
        ref = t.thread_path(first)
        for lane in range(1, 16):
            assert np.array_equal(t.thread_path(first + lane), ref)


def test_divergence_is_tunable_not_total():
    def distinct_paths_per_warp(div):
        t = synthetic(40, 512, 2, warp_size=32, divergence=div)
        return np.mean([len({t.thread_path(w + i).tobytes() for i in range(32)}) for w in range(0, 512, 32)])

    low, mid, high = distinct_paths_per_warp(0.0), distinct_paths_per_warp(0.2), distinct_paths_per_warp(1.0)
    assert low == 1.0 and low < mid < high
    assert high < 32  # even at divergence 1 some branches stay uniform


def test_path_length_budget():
    t = synthetic(30, 128, 1, loop_prob=0.5, max_path_len=20)
    lengths = np.diff(t.path_ptr)
    dist0 = _distance_to_exit(t.n_blocks, succ_lists(t))[0]
    assert lengths.max() <= max(20, dist0 + 1)
    validate(t)


def test_launch_shapes():
    t = synthetic(8, 600, 0, block=(100, 2, 1))
    assert t.grid == (3, 1, 1) and t.block == (100, 2, 1) and t.n_threads == 600
    t = synthetic(8, None, 0, block=(8, 1, 1), grid=(2, 2, 1))
    assert t.n_threads == 32
    assert synthetic(8, 1000, 0).block == (250, 1, 1)  # the largest CTA <= 256 threads that tiles 1000
    assert synthetic(8, 1024, 0).block == (256, 1, 1) and synthetic(8, 96, 0).block == (96, 1, 1)
    with pytest.raises(ValueError, match="not a multiple"):
        synthetic(8, 100, 0, block=(32, 1, 1))
    with pytest.raises(ValueError, match="n_blocks must be at least 2"):
        synthetic(1, 32, 0)
    with pytest.raises(ValueError, match="divergence must be a probability"):
        synthetic(8, 32, 0, divergence=1.5)
    with pytest.raises(ValueError, match=r"op_mix may not contain control classes \(BARRIER\)"):
        synthetic(8, 32, 0, op_mix={OpClass.ALU: 1.0, OpClass.BARRIER: 0.1})


def test_op_mix_is_respected():
    t = synthetic(64, 32, 0, op_mix={OpClass.SFU: 1.0}, instrs_per_block=(6, 6))
    body = ~np.isin(t.op_class, [OpClass.BRANCH, OpClass.EXIT, OpClass.BARRIER])
    setp_or_rem = np.array(["setp" in x or "rem" in x for x in t.text])
    assert set(t.op_class[body & ~setp_or_rem]) == {OpClass.SFU}


# ---- counter-based RNG and the walk kernel vs its plain-Python reference ----------------------


def test_splitmix64_known_values():
    # splitmix64 with state 0: the first outputs of Vigna's reference generator.
    assert _splitmix_py(0) == 0xE220A8397B1DCDAF
    assert _splitmix_py(0x9E3779B97F4A7C15) == 0x6E789E6AA1B965F4
    with np.errstate(over="ignore"):
        assert int(_splitmix(np.uint64(0))) == 0xE220A8397B1DCDAF


@examples(100)
@given(seed=st.integers(0, 2**64 - 1), stream=st.integers(0, 3), a=st.integers(0, 2**31), b=st.integers(0, 2**20),
       c=st.integers(0, 1000))
def test_uniform_numba_equals_python(seed, stream, a, b, c):
    with np.errstate(over="ignore"):  # uint64 wrap-around is the point (matters under NUMBA_DISABLE_JIT)
        u = _uniform(np.uint64(seed), stream, a, b, c)
    assert u == _uniform_py(seed, stream, a, b, c)
    assert 0.0 <= u < 1.0


@examples(80)
@given(trace=traces(max_blocks=20, max_threads=48), walk_seed=st.integers(0, 2**63), data=st.data())
def test_walk_kernel_equals_reference(trace, walk_seed, data):
    n = trace.n_blocks
    rng = np.random.default_rng(walk_seed)
    counts = np.diff(trace.succ_ptr)
    succ_cum = np.concatenate([np.cumsum(rng.dirichlet(np.ones(k))) if k else [] for k in counts])
    succ_cum[trace.succ_ptr[1:][counts > 0] - 1] = 1.0
    deviate = rng.uniform(0, 1, n)
    dist = _distance_to_exit(n, succ_lists(trace))
    per_cta = data.draw(st.integers(1, 40))
    n_threads = per_cta * data.draw(st.integers(1, 3))
    warp = data.draw(st.sampled_from([1, 4, 32]))
    max_len = int(dist[0]) + 1 + data.draw(st.integers(0, 60))
    ptr, path = walk_paths(trace.succ_ptr, trace.succ_idx, succ_cum, deviate, dist, per_cta, warp, max_len, walk_seed,
                           n_threads)
    ref = walk_paths_reference(trace.succ_ptr, trace.succ_idx, succ_cum, deviate, dist, per_cta, warp, max_len,
                               walk_seed, n_threads)
    assert [list(path[ptr[t] : ptr[t + 1]]) for t in range(n_threads)] == ref
    assert all(len(p) <= max_len for p in ref)


def test_walk_golden_chain_with_loop():
    # 0 -> 1 ; 1 -> {2 (leave), 1 (self loop, p=1)} ; 2 -> exit 3. A loop that always continues must be
    # cut by the budget: the path is 0, 1 x (max_len - 3), 2, 3 for every thread.
    succ_ptr = np.array([0, 1, 3, 4, 4])
    succ_idx = np.array([1, 2, 1, 3])
    succ_cum = np.array([1.0, 0.0, 1.0, 1.0])
    dist = np.array([3, 2, 1, 0])
    ptr, path = walk_paths(succ_ptr, succ_idx, succ_cum, np.zeros(4), dist, 4, 4, 10, 123, 4)
    assert np.array_equal(np.diff(ptr), [10] * 4)
    assert list(path[:10]) == [0] + [1] * 7 + [2, 3]


# ---- /mem addresses ------------------------------------------------------------------------------


def test_memory_addresses_follow_the_paths(tmp_path):
    t = synthetic(24, 128, 4, block=(64, 1, 1), with_mem=True, loop_prob=0.3)
    validate(t)
    assert t.mem_format == MEM_FORMAT
    is_mem = np.isin(t.op_class, [OpClass.MEM_GLOBAL, OpClass.MEM_SHARED, OpClass.MEM_LOCAL, OpClass.MEM_CONST])
    mem_per_block = np.array([is_mem[t.block_start[b]:t.block_start[b + 1]].sum() for b in range(t.n_blocks)])
    for th in range(t.n_threads):  # one entry per executed memory instruction of any space
        assert t.mem_ptr[th + 1] - t.mem_ptr[th] == mem_per_block[t.thread_path(th).astype(np.int64)].sum()
    assert set(np.unique(t.op_class[is_mem])) >= {OpClass.MEM_GLOBAL, OpClass.MEM_SHARED, OpClass.MEM_CONST}
    # facts per instruction: widths 4/8/16 on memory instructions only, kinds from the instruction's form
    assert set(np.unique(t.mem_bytes[is_mem])) <= {4, 8, 16} and not t.mem_bytes[~is_mem].any()
    assert set(np.unique(t.mem_kind[is_mem])) <= {MEM_LOAD, MEM_STORE, MEM_ATOMIC}
    # every entry is NO_ACCESS (a guarded instruction whose guard is false) or aligned to its width
    instr = _entry_instructions(t)
    live = t.mem_addr != NO_ACCESS
    assert (~live).any() and live.any()
    assert np.all(t.mem_addr[live] % t.mem_bytes[instr[live]] == 0)
    assert np.all(np.char.startswith(np.array(t.text)[instr[~live]], "@%p"))  # only guarded ones skip
    t.save(tmp_path / "m.h5")
    from simt_fast.trace import Trace

    u = Trace.load(tmp_path / "m.h5")
    assert np.array_equal(u.mem_addr, t.mem_addr) and u.digest() == t.digest() and u.mem_format == MEM_FORMAT


def _entry_instructions(t) -> np.ndarray:
    """The instruction of every /mem entry (entries follow each thread's path in order)."""
    is_mem = np.isin(t.op_class, [OpClass.MEM_GLOBAL, OpClass.MEM_SHARED, OpClass.MEM_LOCAL, OpClass.MEM_CONST])
    out = []
    for th in range(t.n_threads):
        for b in t.thread_path(th):
            out.extend(np.flatnonzero(is_mem[t.block_start[b]:t.block_start[b + 1]]) + t.block_start[b])
    return np.array(out, np.int64)


def test_memory_patterns_golden():
    # One block with a coalesced 4-byte global load (instruction 0) walked by 8 threads: thread t reads word t.
    from simt_fast.trace.synth import COALESCED, _Draws, _memory_addresses

    class FixedDraws(_Draws):  # pattern and width draws -> COALESCED, 4 bytes; no guard, no atomic
        def weighted(self, cum):
            return COALESCED

        def random(self):
            return 0.99

    op = np.array([OpClass.MEM_GLOBAL, OpClass.EXIT], np.uint8)
    dst = np.array([3, -1], np.int16)
    src = np.array([[1, -1, -1], [-1, -1, -1]], np.int16)
    block_start = np.array([0, 2, 2])
    path_ptr = np.arange(0, 17, 2)
    path = np.tile([0, 1], 8)
    mem = _memory_addresses(op, dst, src, ["ld", "ret"], block_start, path_ptr, path, 4, 32,
                            FixedDraws(np.random.default_rng(0)), 0)
    assert list(mem["mem_ptr"]) == list(range(9))
    assert list(mem["mem_addr"]) == [(1 << 32) + 4 * t for t in range(8)]
    assert list(mem["mem_bytes"]) == [4, 0] and list(mem["mem_kind"]) == [MEM_LOAD, 0]
    assert mem["text"][0] == "ld.global.u32 %r3, [%r1];"
    # A self loop run 3 times by each of 2 threads: iteration k of thread t reads word t + 2k (next tile).
    path_ptr = np.array([0, 4, 8])
    path = np.array([0, 0, 0, 1, 0, 0, 0, 1])
    mem = _memory_addresses(op, dst, src, ["ld", "ret"], block_start, path_ptr, path, 2, 32,
                            FixedDraws(np.random.default_rng(0)), 0)
    assert list(mem["mem_ptr"]) == [0, 3, 6]
    assert [int(a) - (1 << 32) for a in mem["mem_addr"]] == [0, 8, 16, 4, 12, 20]
