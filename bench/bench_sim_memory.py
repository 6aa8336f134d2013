"""Timing-model throughput with the memory model on, as a ratio to the same run without it.

    python bench/bench_sim_memory.py [--configs modern,fermi] [--mechanisms sps,dwf,...] [--ref-ctas C]
                                     [--workloads all|none|a,b,...] [--replicated-ctas N] [--size default]

Every trace runs three ways on each preset's machine, in this process, one after the other:

* ``off``: the trace without its addresses (the op classes' fixed latencies, lat_global 400: the
  timing model without the memory model);
* ``perfect``: ``perfect_memory = true`` (every memory instruction takes lat_alu);
* ``full``: the preset's whole memory system (L1s with their miss-status holding registers, the
  interconnect, the L2's slices, the L2, DRAM; the SMs share state, so the kernels run cycle-major).

Rates are simulated warp instructions per CPU second (best of 3 after a warm-up, so JIT compile is
excluded); the ratios divide two rates measured side by side here: ``full/off`` (issue 30's
measure) and ``full/perf`` (issue 31's). Traces:

* a synthetic trace with addresses (divergence 0.2, 48 blocks, 256-thread CTAs), under each of
  ``--mechanisms``; the last column compares the full model's kernel with the plain-Python
  reference on the trace's first C CTAs;
* a replicated-CTA trace (bench/replicated_trace.py: a matrixMul-shaped kernel whose CTAs all read
  the same lines, imported from its Accel-Sim text once into the temp directory), under sps;
* ``--workloads``: the shipped workloads at ``--size`` (traced once into the sweep's cache), sps.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

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


HEADER = (f"{'trace':16} {'config':7} {'off':>7} {'perfect':>7} {'full':>7} {'full/off':>8} {'full/perf':>9} "
          f"{'sec/req':>7} {'vs ref':>8}")


def row(name: str, trace: Trace, cfg, label: str, ref_trace=None) -> str:
    off = best_rate(without_addresses(trace), cfg)
    perfect = best_rate(trace, cfg.replace(perfect_memory=True))
    full = best_rate(trace, cfg)
    s = simulate(trace, cfg)
    spr = s.mem_sectors / s.mem_requests if s.mem_requests else float("nan")
    cells = (f"{name:16} {label:7} {off / 1e6:7.2f} {perfect / 1e6:7.2f} {full / 1e6:7.2f} {full / off:7.2f}x "
             f"{full / perfect:8.2f}x {spr:7.2f}")
    if ref_trace is not None:
        cells += f" {full / reference_rate(ref_trace, cfg):7.0f}x"
    return cells


def replicated_trace(n_ctas: int) -> Trace:
    """bench/replicated_trace.py's trace of ``n_ctas`` CTAs, imported once (kept in the temp directory)."""
    from simt_fast.trace import accelsim
    import replicated_trace

    cache = Path(tempfile.gettempdir()) / "simt-fast-bench" / f"replicated-{n_ctas}"
    out = cache / "kernel-1.h5"
    if not out.is_file():
        print(f"writing and importing the replicated-CTA trace ({n_ctas} CTAs) into {cache}", flush=True)
        listing = replicated_trace.write(cache / "text", n_ctas)
        accelsim.convert(listing.parent / "kernel-1.traceg", out)
    return Trace.load(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=16 * 1024)
    ap.add_argument("--ref-ctas", type=int, default=2)
    ap.add_argument("--configs", default="modern,fermi")
    ap.add_argument("--mechanisms", default="sps,dps,mp,mp-oer,dwf,tbc")
    ap.add_argument("--replicated-ctas", type=int, default=200, help="0: no replicated-CTA trace")
    ap.add_argument("--workloads", default="none", help="all, none or a comma list")
    ap.add_argument("--size", default="default")
    args = ap.parse_args()
    configs = {name: load_config(name) for name in args.configs.split(",")}
    print("M warp insts/s (CPU time); full/off and full/perf: the ratios of the rates measured here")
    print(HEADER, flush=True)
    trace = synthetic(n_blocks=48, n_threads=args.threads, seed=1, block=(256, 1, 1), divergence=0.2, with_mem=True)
    small = first_ctas(trace, args.ref_ctas)
    for label, base in configs.items():
        for m in args.mechanisms.split(","):
            print(row(f"synthetic {m}", trace, base.replace(mechanism=m), label, small), flush=True)
    if args.replicated_ctas:
        rep = replicated_trace(args.replicated_ctas)
        for label, base in configs.items():
            print(row("replicated-CTA", rep, base, label), flush=True)
    if args.workloads != "none":
        from simt_fast import workloads
        from simt_fast.sweep.spec import TraceSource
        from simt_fast.sweep.traces import resolve_traces

        names = workloads.names() if args.workloads == "all" else args.workloads.split(",")
        paths = resolve_traces([TraceSource(name=n, workload=n, size=args.size) for n in names])
        for n in names:
            t = Trace.load(paths[n][0])
            for label, base in configs.items():
                print(row(n, t, base, label), flush=True)


if __name__ == "__main__":
    main()
