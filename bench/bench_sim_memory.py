"""Timing-model throughput with the memory model on, as a ratio to the same run without it.

    python bench/bench_sim_memory.py [--threads N] [--mechanisms sps,dwf,...] [--ref-ctas C]
                                     [--workloads a,b,...|none]

For each mechanism, the same trace (a synthetic one with addresses: divergence 0.2, 48 blocks,
256-thread CTAs) runs three ways on the `fermi` preset's machine, in this process:

* ``off``: the trace without its addresses (the op classes' fixed latencies, i.e. the timing model
  as it was before the memory model; what ``perfect memory`` meant in issue 17);
* ``L1``: the memory model with the preset's L1, no L2 and no DRAM limit (SMs independent, so the
  kernels may run SM-major);
* ``L1+L2+DRAM``: the full preset (16 KB L1, 768 KB L2, 127 bytes per cycle over 6 partitions;
  the SMs share state, so the kernels run cycle-major).

Rates are simulated warp instructions per CPU second (best of 3 after a warm-up, so JIT compile
is excluded); the ratios divide two rates measured side by side here. The last column compares
the kernel with memory (full preset) to the plain-Python reference on the trace's first C CTAs.
``--workloads`` adds the shipped workloads at their default size (traced once into the sweep's
cache) with the same columns, without the reference.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from simt_fast.sim import reference, simulate  # noqa: E402
from simt_fast.sim.config import load_config  # noqa: E402
from simt_fast.trace.model import Trace  # noqa: E402
from simt_fast.trace.synth import synthetic  # noqa: E402


def first_ctas(trace: Trace, n: int) -> Trace:
    """The same kernel with only its first ``n`` CTAs, addresses included (for the slow reference)."""
    t_end = n * trace.threads_per_cta
    ptr = trace.path_ptr[: t_end + 1]
    mem = trace.mem_ptr[: t_end + 1]
    return dataclasses.replace(trace, grid=(n, 1, 1), path_ptr=ptr, path=trace.path[: ptr[-1]], mem_ptr=mem,
                               mem_addr=trace.mem_addr[: mem[-1]])


def without_addresses(trace: Trace) -> Trace:
    return dataclasses.replace(trace, mem_ptr=None, mem_addr=None, mem_format="")


def best_rate(trace: Trace, cfg, repeat: int = 3) -> float:
    """Warp instructions per CPU second: best of ``repeat`` after a warm-up run."""
    s = simulate(trace, cfg)  # compile / load from cache
    best = np.inf
    for _ in range(repeat):
        t0 = time.process_time()
        simulate(trace, cfg)
        best = min(best, time.process_time() - t0)
    return s.warp_insts / best


def reference_rate(trace: Trace, cfg) -> float:
    t0 = time.process_time()
    s = reference.simulate(trace, cfg)
    return s.warp_insts / (time.process_time() - t0)


def row(name: str, trace: Trace, cfg, ref_trace=None) -> str:
    off = best_rate(without_addresses(trace), cfg)
    l1 = best_rate(trace, cfg.replace(l2_bytes=0, dram_bytes_per_cycle=0))
    full = best_rate(trace, cfg)
    s = simulate(trace, cfg)
    spr = s.mem_sectors / s.mem_requests if s.mem_requests else float("nan")
    cells = f"{name:16} {off / 1e6:8.2f} {l1 / 1e6:8.2f} {full / 1e6:8.2f} {l1 / off:7.2f}x {full / off:7.2f}x {spr:7.2f}"
    if ref_trace is not None:
        cells += f" {full / reference_rate(ref_trace, cfg):9.0f}x"
    return cells


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=16 * 1024)
    ap.add_argument("--ref-ctas", type=int, default=2)
    ap.add_argument("--mechanisms", default="sps,dps,mp,mp-oer,dwf,tbc")
    ap.add_argument("--workloads", default="none")
    args = ap.parse_args()
    base = load_config("fermi")
    trace = synthetic(n_blocks=48, n_threads=args.threads, seed=1, block=(256, 1, 1), divergence=0.2, with_mem=True)
    small = first_ctas(trace, args.ref_ctas)
    print(f"synthetic trace: {trace.n_threads} threads, fermi preset; M warp insts/s (CPU time)")
    print(f"{'mechanism':16} {'off':>8} {'L1':>8} {'L1+L2+DR':>8} {'L1/off':>8} {'full/off':>8} {'sec/req':>7}"
          f" {'vs ref':>10}")
    for m in args.mechanisms.split(","):
        print(row(m, trace, base.replace(mechanism=m), small), flush=True)
    if args.workloads != "none":
        from simt_fast.sweep.spec import TraceSource
        from simt_fast.sweep.traces import resolve_traces

        names = args.workloads.split(",")
        paths = resolve_traces([TraceSource(name=n, workload=n, size="default") for n in names])
        print("\nshipped workloads (default size), sps on the fermi preset")
        for n in names:
            print(row(n, Trace.load(paths[n][0]), base), flush=True)


if __name__ == "__main__":
    main()
