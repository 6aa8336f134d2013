"""Kernels with known access patterns (data/cuda/corpus/memory_patterns.cu), emulated with addresses and
measured by the trace-level memory profile (docs/memory.md): sectors per request, bank-conflict
replays, constant serialisation, local interleaving and L1 reuse equal the numbers worked out by hand
in each test; the plain-Python reference profile agrees on every trace."""

from pathlib import Path

import numpy as np
import pytest

from simt_fast.emu import launch
from simt_fast.sim import memory
from simt_fast.sim.config import SimConfig
from simt_fast.sim.reference import memory as ref

PTX = Path(__file__).resolve().parents[1] / "data" / "ptx" / "corpus" / "memory_patterns.O3.ptx"
CFG = SimConfig(n_sms=1)  # GTX480-like caches (the defaults); one SM sees every CTA
THREADS = 128  # 4 warps per CTA


def run(kernel, args, grid=1, block=THREADS, symbols=None):
    return launch(PTX, kernel, grid, block, args, symbols=symbols).trace


def per_request(trace, prof, prefix):
    """(requests, units per request) of the one instruction whose PTX starts with ``prefix``."""
    [i] = [i for i, text in enumerate(trace.text) if text.startswith(prefix)]
    return int(prof.inst_requests[i]), prof.inst_units[i] / prof.inst_requests[i]


def check_reference(trace, prof, cfg=CFG):
    want = ref.profile(trace, cfg)
    for k, v in want.items():
        if not k.startswith("inst_"):
            assert getattr(prof, k) == v, k


@pytest.mark.parametrize("stride, sectors", [(1, 4), (2, 8), (32, 32), (0, 1)])
def test_strided_global_loads(stride, sectors):
    trace = run("stride_load", [np.zeros(THREADS, np.float32), np.ones(THREADS * 32, np.float32), np.int32(stride)])
    prof = memory.profile(trace, CFG)
    assert per_request(trace, prof, "ld.global") == (4, sectors)
    assert per_request(trace, prof, "st.global") == (4, 4)
    assert prof.mem_requests == 8 and prof.mem_sectors == 4 * (sectors + 4)
    check_reference(trace, prof)


def test_random_gather():
    rng = np.random.default_rng(7)
    idx = rng.integers(0, 4096, THREADS).astype(np.int32)
    trace = run("gather", [np.zeros(THREADS, np.float32), np.ones(4096, np.float32), idx])
    prof = memory.profile(trace, CFG)
    # in[] is 256-byte aligned, so element e lies in its sector e // 8; each warp touches the distinct ones
    expected = sum(len(set(idx[w * 32:(w + 1) * 32] // 8)) for w in range(4))
    requests = [i for i, text in enumerate(trace.text) if text.startswith("ld.global.f32")]
    assert int(prof.inst_units[requests[0]]) == expected and int(prof.inst_requests[requests[0]]) == 4
    assert per_request(trace, prof, "ld.global.u32") == (4, 4)  # idx[tid]: coalesced
    check_reference(trace, prof)


@pytest.mark.parametrize("stride, passes", [(1, 1), (2, 2), (32, 32), (0, 1)])
def test_shared_bank_conflicts(stride, passes):
    trace = run("shared_stride", [np.zeros(THREADS, np.float32), np.int32(stride)])
    prof = memory.profile(trace, CFG)
    assert per_request(trace, prof, "ld.shared") == (4, passes)
    # the fill loop's stores are consecutive words (conflict-free): every replay is the load's
    assert prof.shared_replays == 4 * (passes - 1)
    if stride == 32:
        assert prof.shared_replays == 4 * 31  # a 32-way conflict replays 31 extra times per warp
    check_reference(trace, prof)


def test_gt200_half_warps():
    trace = run("shared_stride", [np.zeros(THREADS, np.float32), np.int32(1)])
    gt200 = CFG.replace(shared_banks=16, shared_bank_group=16)
    prof = memory.profile(trace, gt200)
    assert per_request(trace, prof, "ld.shared") == (4, 2)  # two half-warps, one pass each
    assert prof.shared_replays == 0
    check_reference(trace, prof, gt200)


def test_constant_serialisation():
    trace = run("const_spread", [np.zeros(THREADS, np.float32), np.int32(5)],
                symbols={"table": np.arange(32, dtype=np.float32)})
    prof = memory.profile(trace, CFG)
    assert per_request(trace, prof, "ld.const") == (4, 5)  # tid % 5: five distinct addresses per warp
    assert per_request(trace, prof, "ld.param.u32") == (4, 1)  # a kernel parameter: one for all
    check_reference(trace, prof)


def test_local_memory_interleaving():
    trace = run("local_array", [np.zeros(THREADS, np.float32), np.ones(THREADS, np.float32), np.int32(5)])
    prof = memory.profile(trace, CFG)
    assert per_request(trace, prof, "ld.local") == (4, 4)  # one word per thread, 32 threads interleaved
    stores = [i for i, text in enumerate(trace.text) if text.startswith("st.local.v4")]
    assert len(stores) == 4 and all(prof.inst_units[i] == 4 * 16 for i in stores)  # 4 words x 4 sectors
    check_reference(trace, prof)


def test_small_array_hits_in_l1_after_the_first_pass():
    n, passes = 1024, 4  # 4 KB, far below the 16 KB L1
    trace = run("reread", [np.zeros(THREADS, np.float32), np.ones(n, np.float32), np.int32(n), np.int32(passes)])
    prof = memory.profile(trace, CFG)
    # 128 sectors, each read by one warp per pass: the first pass misses them all, later passes hit;
    # the 4 warps' final stores (4 sectors each) miss the L1 and do not allocate
    assert prof.l1_hits == 128 * (passes - 1)
    assert prof.l1_misses == 128 + 4 * 4
    assert prof.l2_misses == 128 + 4 * 4 and prof.l2_hits == 0
    assert memory.profile(trace, CFG.replace(l1_bytes=0)).l1_hits == 0  # no L1: nothing to hit
    check_reference(trace, prof)


def test_streaming_kernel_has_no_reuse():
    n = 4096
    trace = run("stream", [np.zeros(n, np.float32), np.ones(n, np.float32), np.ones(n, np.float32), np.int32(n)],
                grid=4)
    prof = memory.profile(trace, CFG)
    # 16 warps x 8 grid-stride iterations x (2 loads + 1 store) x 4 sectors
    assert (prof.mem_requests, prof.mem_sectors) == (16 * 8 * 3, 16 * 8 * 3 * 4)
    assert prof.l1_hits == 0 and prof.l2_hits == 0
    # Fermi's L2 ("fetch"): loads read 2 x 16 KB, stores write 16 KB through and read it in again;
    # "allocate": the written lines stay dirty in the L2 (nothing is evicted), only the reads remain
    assert prof.dram_bytes == 4 * n * 4
    assert memory.profile(trace, CFG.replace(l2_write_miss="allocate")).dram_bytes == 2 * n * 4
    check_reference(trace, prof)
