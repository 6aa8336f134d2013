"""Soundness of the convergence analysis against emulator traces: every thread of a warp runs a block
the analysis calls convergent the same number of times (early-exit rule off, so exited threads
cannot excuse a difference). Also the structurizer on the multi-entry-loop workload."""

import numpy as np
import pytest

from simt_fast import workloads
from simt_fast.emu import launch
from simt_fast.ir import build_cfg, parse_ptx
from simt_fast.ir.convergence import analyze_convergence
from simt_fast.ir.ptx_printer import print_module
from simt_fast.ir.structurize import structurize

WARP = 32


def warp_block_counts(trace):
    """Yield (threads x blocks) visit-count matrices, one per warp."""
    cta = int(np.prod(trace.block))
    n = len(trace.path_ptr) - 1
    for c0 in range(0, n, cta):
        for w0 in range(c0, min(c0 + cta, n), WARP):
            ts = range(w0, min(w0 + WARP, c0 + cta, n))
            yield np.array([np.bincount(trace.path[trace.path_ptr[t]:trace.path_ptr[t + 1]].astype(np.int64),
                                        minlength=trace.n_blocks) for t in ts])


@pytest.mark.parametrize("name", ["bfs", "laplace3d", "shortcircuit", "statemachine", "raytrace", "aes"])
def test_convergent_blocks_run_in_lock_step_in_every_warp(name):
    w = workloads.get(name)
    k = parse_ptx(w.ptx_path).find_kernel(w.kernel)
    cfg = build_cfg(k)
    res = analyze_convergence(k, cfg, early_exit=False)
    spec = w.launch_spec(size="tiny", seed=0)
    trace = launch(w.ptx_path, w.kernel, spec.grid, spec.block, spec.args, spec.shared_bytes, trace=True).trace
    assert trace.n_blocks == cfg.n_blocks  # no calls: the traced CFG is the kernel's
    convergent = [b for b in range(cfg.n_blocks) if res.convergent[b] and b != cfg.exit]
    assert convergent
    for counts in warp_block_counts(trace):
        for b in convergent:
            assert (counts[:, b] == counts[0, b]).all(), (name, cfg.blocks[b].label or b)


def test_multi_entry_loop_workload_is_peeled_and_still_correct():
    w = workloads.get("multientry")
    module, stats = structurize(parse_ptx(w.ptx_path))
    assert stats.backward_copies >= 1
    spec = w.launch_spec(size="tiny", seed=0)
    launch(print_module(module), w.kernel, spec.grid, spec.block, spec.args, spec.shared_bytes, trace=False)
    w.check(spec)
