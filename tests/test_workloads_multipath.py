"""The multi-path study's workloads give a multi-path warp two ready paths to overlap.

sssp, bvh, hashprobe, spmv and mcreject were written so that both sides of a divergent branch
wait on global memory (docs/workloads.md).  On the ElTantawy et al. 2014 machine (the ``fermi`` preset) at
``tiny`` size, dps and mp must therefore beat the single-path stack, mp must have had at least
two splits of a warp issuable at once, and the gain must come from memory latency: with
``perfect_memory`` (memory as fast as the ALU) it shrinks. That last check runs on the fixed
400-cycle latency (the trace without its addresses): with the memory model most of bvh's tiny
working set hits in the caches, and its gain is then no larger than with perfect memory
(docs/memory.md).
"""

from __future__ import annotations

import dataclasses

import pytest

import simt_fast.emu
import simt_fast.workloads as workloads
from simt_fast.sim import simulate
from simt_fast.sim.config import load_config

MULTIPATH = ["sssp", "bvh", "hashprobe", "spmv", "mcreject"]
MIN_SPEEDUP = 1.04  # tiny sizes; the default sizes gain 1.1-2.4x (docs/workloads.md)


@pytest.fixture(scope="module", params=MULTIPATH)
def tiny_trace(request):
    wl = workloads.get(request.param)
    spec = wl.launch_spec("tiny", seed=0)
    run = simt_fast.emu.launch(wl.ptx_path, wl.kernel, spec.grid, spec.block, spec.args, spec.shared_bytes, trace=True)
    wl.check(spec)
    return request.param, run.trace


def cycles(trace, mechanism, **overrides):
    stats = simulate(trace, load_config("fermi", {"mechanism": mechanism, **overrides}))
    return stats.cycles, stats.max_splits


def test_dps_and_mp_overlap_the_two_sides_of_the_branch(tiny_trace):
    name, trace = tiny_trace
    sps, _ = cycles(trace, "sps")
    dps, _ = cycles(trace, "dps")
    mp, splits = cycles(trace, "mp")
    assert splits >= 2, f"{name}: mp never had two splits of a warp ready"
    assert sps >= MIN_SPEEDUP * mp and sps >= MIN_SPEEDUP * dps, f"{name}: sps {sps}, dps {dps}, mp {mp} cycles"


def test_the_gain_is_memory_latency(tiny_trace):
    # Round-robin dispatch puts the tiny launches' <= 8 CTAs one per SM on Fermi's 15; with one or
    # two warps an SM cannot hide even the ALU latency, and mp gains as much with perfect memory. Two
    # SMs give the tiny traces the several CTAs per SM of the default sizes.
    name, trace = tiny_trace
    fixed = dataclasses.replace(trace, mem_ptr=None, mem_addr=None, mem_format="")  # every load 400 cycles
    real = cycles(fixed, "sps", n_sms=2)[0] / cycles(fixed, "mp", n_sms=2)[0]
    perfect = (cycles(trace, "sps", n_sms=2, perfect_memory=True)[0]
               / cycles(trace, "mp", n_sms=2, perfect_memory=True)[0])
    assert perfect < real, f"{name}: mp gains {perfect:.3f}x with perfect memory, {real:.3f}x without"
