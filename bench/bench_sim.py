"""Timing-core throughput: simulated warp instructions per second, per mechanism, numba vs reference.

    /work/venv/bin/python bench/bench_sim.py [--threads N] [--blocks B] [--ref-ctas C]

The numba kernel replays the whole large synthetic trace (best of 3 after a warm-up, so JIT compile
time is excluded); the plain-Python reference replays the first C CTAs of the same trace (it is
~1000x slower), and the ratio compares warp instructions per second measured in this same run.
Times are process CPU time (the machine is shared; wall-clock time would count other jobs).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from simt_fast.sim import reference, simulate
from simt_fast.sim.config import SimConfig
from simt_fast.sim.registry import names
from simt_fast.trace.model import Trace
from simt_fast.trace.synthetic import synthetic


def first_ctas(trace: Trace, n: int) -> Trace:
    """The same kernel with only its first ``n`` CTAs (for the slow reference)."""
    t_end = n * trace.threads_per_cta
    ptr = trace.path_ptr[: t_end + 1]
    return Trace(kernel=trace.kernel, grid=(n, 1, 1), block=trace.block, block_start=trace.block_start,
                 succ_ptr=trace.succ_ptr, succ_idx=trace.succ_idx, ipdom=trace.ipdom, label=trace.label,
                 has_barrier=trace.has_barrier, op_class=trace.op_class, dst_reg=trace.dst_reg, src_reg=trace.src_reg,
                 text=trace.text, path_ptr=ptr, path=trace.path[: ptr[-1]])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=64 * 1024)
    ap.add_argument("--blocks", type=int, default=48)
    ap.add_argument("--cta", type=int, default=256)
    ap.add_argument("--ref-ctas", type=int, default=2)
    ap.add_argument("--divergence", type=float, default=0.1)
    ap.add_argument("--mechanisms", default=",".join(names()))
    args = ap.parse_args()

    trace = synthetic(args.blocks, args.threads, seed=1, warp_size=32, block=(args.cta, 1, 1),
                      divergence=args.divergence, max_path_len=200)
    small = first_ctas(trace, args.ref_ctas)
    # a GT200-like machine (seed 003 Table 5.1) scaled to 8 SMs with 2 schedulers
    cfg = SimConfig(warp_size=32, simd_width=8, n_sms=8, n_schedulers=2, max_warps_per_sm=48, max_ctas_per_sm=8,
                    lat_alu=24, lat_global=400)
    print(f"trace: {trace.n_blocks} blocks, {trace.n_threads} threads, {trace.total_thread_insts():,} thread "
          f"instructions; reference on the first {args.ref_ctas} CTAs")
    print(f"{'mechanism':10} {'warp insts':>12} {'cycles':>12} {'numba Mwi/s':>12} {'ref kwi/s':>10} {'ratio':>8}")
    for m in args.mechanisms.split(","):
        c = cfg.replace(mechanism=m)
        simulate(small, c)  # compile / load from cache
        best = np.inf
        for _ in range(3):
            t0 = time.process_time()
            s = simulate(trace, c)
            best = min(best, time.process_time() - t0)
        fast_rate = s.warp_insts / best
        t0 = time.process_time()
        r = reference.simulate(small, c)
        ref_rate = r.warp_insts / (time.process_time() - t0)
        print(f"{m:10} {s.warp_insts:12,} {s.cycles:12,} {fast_rate / 1e6:12.2f} {ref_rate / 1e3:10.2f} "
              f"{fast_rate / ref_rate:8.0f}x")


if __name__ == "__main__":
    main()
