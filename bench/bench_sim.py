"""Timing-core throughput: simulated warp instructions per second, per mechanism, numba vs reference.

    python bench/bench_sim.py [--threads N] [--blocks B] [--ref-ctas C] [--workloads a,b,...|all|none]
    python bench/bench_sim.py --baseline REV [--reps N]   # warm throughput, this checkout vs REV

Two measurements:

1. A large synthetic *stress* trace (64K threads, 4.3-instruction blocks, divergence 0.1: SIMD
   utilisation ~0.11, so nearly every block end diverges or reconverges, and 32 randomly reused
   registers keep several writes in flight per register) on a GT200-like machine scaled to 8 SMs x
   2 schedulers. The numba kernel replays the whole trace (best of 3 after a warm-up, so JIT
   compile time is excluded); the plain-Python reference replays the first C CTAs of the same trace
   (it is ~1000x slower), and the ratio compares warp instructions per second measured in this run.
2. Real kernels: the shipped workloads at their default size, traced by the emulator (cached like a
   sweep's traces, so only the first run pays for the emulation), on the `gt200` preset (Jin 2012
   Table 5.1), with the geometric mean over workloads. The issue-4 target (`sps` >= 20 M warp
   instructions per second on one core) is read on this table.

Times are process CPU time (the machine is shared; wall-clock time would count other jobs).

``--baseline REV`` measures only the stress trace's numba throughput, in fresh processes, for this
checkout and for REV's package (extracted with ``git archive``, as ``bench_compile.py`` does),
alternating the two ``--reps`` times, and prints the ratio this / REV per mechanism: a change's
effect on warm speed, side by side in one run.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

from simt_fast.sim import reference, simulate
from simt_fast.sim.config import SimConfig, load_config
from simt_fast.sim.registry import names
from simt_fast.trace.model import Trace
try:
    from simt_fast.trace.synth import synthetic
except ImportError:  # a --baseline revision before the module's rename
    from simt_fast.trace.synthetic import synthetic


def first_ctas(trace: Trace, n: int) -> Trace:
    """The same kernel with only its first ``n`` CTAs (for the slow reference)."""
    t_end = n * trace.threads_per_cta
    ptr = trace.path_ptr[: t_end + 1]
    return Trace(kernel=trace.kernel, grid=(n, 1, 1), block=trace.block, block_start=trace.block_start,
                 succ_ptr=trace.succ_ptr, succ_idx=trace.succ_idx, ipdom=trace.ipdom, label=trace.label,
                 has_barrier=trace.has_barrier, op_class=trace.op_class, dst_reg=trace.dst_reg, src_reg=trace.src_reg,
                 text=trace.text, path_ptr=ptr, path=trace.path[: ptr[-1]])


DEFAULT_WORKLOADS = "aes,blackscholes,libor,mummer,nqueens,raytrace"


def configured(base: SimConfig, label: str) -> SimConfig:
    """``base`` running ``label``: a mechanism name, ``+hws`` for the hybrid warp size (``sps+hws`` is
    the thesis' PDOM&HWS); dwf/en-dwf run their paper's majority scheduler through issue_policy auto."""
    name, _, extra = label.partition("+")
    return base.replace(mechanism=name, hws=extra == "hws")


def best_rate(trace: Trace, cfg: SimConfig, repeat: int = 3):
    """(stats, warp instructions per CPU second): best of ``repeat`` after a warm-up run."""
    simulate(trace, cfg)  # compile / load from cache
    best = np.inf
    for _ in range(repeat):
        t0 = time.process_time()
        s = simulate(trace, cfg)
        best = min(best, time.process_time() - t0)
    return s, s.warp_insts / best


def workload_table(workload_names: list, mechanisms: list):
    from simt_fast.sweep.spec import TraceSource
    from simt_fast.sweep.traces import resolve_traces

    print("\nshipped workloads (default size) on the gt200 preset, M warp insts/s (process CPU time)")
    sources = [TraceSource(name=n, workload=n, size="default") for n in workload_names]
    paths = resolve_traces(sources, on_trace=lambda n, ev: ev == "tracing" and print(f"  tracing {n} ..."))
    base = load_config("gt200")
    first = mechanisms[0]
    print(f"{'workload':14} {first + ' wi':>11} {'simd util':>9} " + " ".join(f"{m:>9}" for m in mechanisms))
    logs = {m: [] for m in mechanisms}
    for n in workload_names:
        trace = Trace.load(paths[n][0])
        cells, wi, util = [], 0, 0.0
        for m in mechanisms:
            try:
                s, rate = best_rate(trace, configured(base, m))
            except Exception:  # e.g. bar.sync in divergent code deadlocks a stack mechanism
                cells.append(f"{'n/a':>9}")
                continue
            if m == mechanisms[0]:
                wi, util = s.warp_insts, s.simd_util
            logs[m].append(np.log(rate))
            cells.append(f"{rate / 1e6:9.2f}")
        print(f"{n:14} {wi:11,} {util:9.3f} " + " ".join(cells))
    print(f"{'geometric mean':36} " + " ".join(f"{np.exp(np.mean(v)) / 1e6:9.2f}" for v in logs.values()))


def stress_trace(args) -> Trace:
    return synthetic(args.blocks, args.threads, seed=1, warp_size=32, block=(args.cta, 1, 1),
                     divergence=args.divergence, max_path_len=200)


# a GT200-like machine (Jin 2012 Table 5.1) scaled to 8 SMs with 2 schedulers
STRESS_MACHINE = dict(warp_size=32, simd_width=8, n_sms=8, n_schedulers=2, max_warps_per_sm=48, max_ctas_per_sm=8,
                      lat_alu=24, lat_global=400)


def compare_with(args, mechanisms: list) -> None:
    """Warm numba throughput on the stress trace, this checkout vs ``args.baseline``, alternating."""
    from bench_compile import ROOT, extract

    sides = {"this": ROOT, args.baseline: extract(args.baseline)}
    child = [sys.executable, __file__, "--rates-only", "--threads", str(args.threads), "--blocks", str(args.blocks),
             "--cta", str(args.cta), "--divergence", str(args.divergence), "--mechanisms", ",".join(mechanisms),
             "--repeat", str(args.repeat)]
    best = {s: {} for s in sides}
    for _ in range(args.reps):
        for side, root in sides.items():
            out = subprocess.run(child, env=dict(os.environ, PYTHONPATH=str(root)), capture_output=True, text=True)
            if out.returncode:
                raise SystemExit(f"{side}: bench failed:\n{out.stderr[-3000:]}")
            for m, rate in json.loads(out.stdout.strip().splitlines()[-1]).items():
                best[side][m] = max(best[side].get(m, 0.0), rate)
    print(f"warm numba throughput on the stress trace, M warp insts / CPU s (best of {args.reps} alternating runs)")
    print(f"{'mechanism':12}{'this':>10}{args.baseline:>12}{'this/base':>11}")
    ratios = []
    for m in mechanisms:
        a, b = best["this"][m], best[args.baseline][m]
        ratios.append(a / b)
        print(f"{m:12}{a / 1e6:10.2f}{b / 1e6:12.2f}{a / b:11.2f}")
    print(f"{'geomean':34}{np.exp(np.mean(np.log(ratios))):11.2f}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=64 * 1024)
    ap.add_argument("--blocks", type=int, default=48)
    ap.add_argument("--cta", type=int, default=256)
    ap.add_argument("--ref-ctas", type=int, default=2)
    ap.add_argument("--divergence", type=float, default=0.1)
    ap.add_argument("--mechanisms", default=",".join(names() + ["sps+hws", "en-dwf+hws"]))
    ap.add_argument("--workloads", default=DEFAULT_WORKLOADS,
                    help="comma-separated shipped workloads for the real-kernel table, 'all', or 'none'")
    ap.add_argument("--baseline", help="git revision: compare warm throughput with it, side by side")
    ap.add_argument("--reps", type=int, default=3, help="--baseline: alternating runs per side")
    ap.add_argument("--repeat", type=int, default=3, help="timed runs per measurement (the best is kept)")
    ap.add_argument("--rates-only", action="store_true", help=argparse.SUPPRESS)  # --baseline's child
    args = ap.parse_args()
    mechanisms = args.mechanisms.split(",")
    if args.baseline:
        return compare_with(args, mechanisms)

    trace = stress_trace(args)
    cfg = SimConfig(**STRESS_MACHINE)
    if args.rates_only:
        print(json.dumps({m: best_rate(trace, configured(cfg, m), args.repeat)[1] for m in mechanisms}))
        return
    small = first_ctas(trace, args.ref_ctas)
    print(f"trace: {trace.n_blocks} blocks, {trace.n_threads} threads, {trace.total_thread_insts():,} thread "
          f"instructions; reference on the first {args.ref_ctas} CTAs")
    print(f"{'mechanism':10} {'warp insts':>12} {'cycles':>12} {'numba Mwi/s':>12} {'ref kwi/s':>10} {'ratio':>8}")
    for m in mechanisms:
        c = configured(cfg, m)
        s, fast_rate = best_rate(trace, c)
        t0 = time.process_time()
        r = reference.simulate(small, c)
        ref_rate = r.warp_insts / (time.process_time() - t0)
        print(f"{m:10} {s.warp_insts:12,} {s.cycles:12,} {fast_rate / 1e6:12.2f} {ref_rate / 1e3:10.2f} "
              f"{fast_rate / ref_rate:8.0f}x")
    if args.workloads != "none":
        from simt_fast import workloads

        wl = workloads.names() if args.workloads == "all" else args.workloads.split(",")
        workload_table(wl, mechanisms)


if __name__ == "__main__":
    main()
