"""Differential tests: the numba lock-step interpreter vs the plain-Python thread-at-a-time reference
(simt_fast/emu/reference.py) -- same block paths, /mem entries, instruction counts and memory for
race-free kernels."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from simt_fast import workloads
from simt_fast.emu import launch, load_kernel
from simt_fast.emu.reference import run_reference

from hypothesis_budget import examples
from test_emu_launch import CALLS, DIVERGE, SHARED


def _compare(kern, grid, block, make_args, shared=0):
    a1, a2 = make_args(), make_args()
    run = launch(kern, None, grid, block, a1, shared)
    mem = []
    paths, insts = run_reference(kern, grid, block, a2, shared, mem_out=mem)
    tr = run.trace
    assert insts == run.thread_insts
    assert len(paths) == tr.n_threads
    for t, p in enumerate(paths):
        assert list(tr.thread_path(t)) == p, f"thread {t}"
        assert tr.mem_addr[tr.mem_ptr[t]:tr.mem_ptr[t + 1]].tolist() == mem[t], f"thread {t} /mem"
    for x, y in zip(a1, a2):
        if isinstance(x, np.ndarray):
            assert np.array_equal(x, y)


@examples(5)
@given(seed=st.integers(0, 2**31 - 1))
def test_small_kernels_match_reference(seed):
    rng = np.random.default_rng(seed)
    _compare(load_kernel(DIVERGE), 2, 32, lambda: [np.zeros(32, np.uint32)])
    vals = rng.integers(0, 2**32, 128, dtype=np.uint32)
    _compare(load_kernel(SHARED), 1, 128, lambda: [vals.copy()])
    _compare(load_kernel(CALLS, "k"), 1, 32, lambda: [np.zeros(32, np.uint32)])


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("name", ["shortcircuit", "earlyexit", "inlinedreturn", "statemachine"])
def test_workloads_match_reference(name, seed):
    """Fixed inputs (two seeds of each workload's tiny launch), not a property test: the pure-Python
    reference emulates thread by thread (one inlinedreturn input: 21 s in a loaded `--durations`
    run), so random inputs are left to test_small_kernels_match_reference."""
    wl = workloads.get(name)
    spec = wl.launch_spec("tiny", seed=seed)
    # a slice of the launch keeps the pure-Python reference fast: the first two CTAs
    grid = (min(spec.grid[0], 2), 1, 1) if spec.grid[1] == 1 and spec.grid[2] == 1 else spec.grid
    _compare(load_kernel(wl.ptx_path, wl.kernel), grid, spec.block,
             lambda: [a.copy() if isinstance(a, np.ndarray) else a for a in spec.args], spec.shared_bytes)
