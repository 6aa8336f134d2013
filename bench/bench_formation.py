"""Formation mechanisms' throughput: simulated warp instructions per second, numba vs reference.

    /work/venv/bin/python bench/bench_formation.py [--threads N] [--blocks B] [--ref-ctas C]

dwf, en-dwf (majority scheduling), tbc, en-DWF&HWS and PDOM&HWS (sps + hws) on one GT200-like
machine (warp 32, SIMD 8, 8 SMs). The numba kernel replays the whole synthetic trace (best of 3
after a warm-up, so JIT compile time is excluded); the plain-Python reference replays the first C
CTAs of the same trace, and the ratio compares warp instructions per second in this same run.
Targets (docs/formation.md): >= 5 M warp insts/s for dwf, en-dwf, tbc; >= 15 M for sps + hws.

    /work/venv/bin/python bench/bench_formation.py --workloads DIR

instead prints the Jin 2012 comparison on the gt200 preset for every trace DIR/*.h5 (written by
`simt-fast trace <workload> --size tiny -o DIR/<workload>.h5`): speedup over PDOM of PDOM&HWS, DWF,
en-DWF, en-DWF&HWS and TBC, as a Markdown table with geometric means.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from bench_sim import first_ctas
from simt_fast.sim import simulate
from simt_fast.sim import simulate as core_simulate
from simt_fast.sim.config import SimConfig
from simt_fast.sim.reference import simulate as reference
from simt_fast.trace.synth import synthetic

CONFIGS = {
    "dwf": dict(mechanism="dwf", issue_policy="majority"),
    "en-dwf": dict(mechanism="en-dwf", issue_policy="majority"),
    "tbc": dict(mechanism="tbc"),
    "en-dwf+hws": dict(mechanism="en-dwf", issue_policy="majority", hws=True),
    "sps+hws": dict(mechanism="sps", hws=True),
}


def simulate(trace, cfg):
    if cfg.mechanism in ("dwf", "en-dwf", "tbc"):
        return simulate(trace, cfg)
    return core_simulate(trace, cfg)


THESIS = {  # Jin 2012 = Jin 2012 (name: config overrides on the gt200 preset)
    "PDOM": dict(mechanism="sps"),
    "PDOM&HWS": dict(mechanism="sps", hws=True),
    "DWF": dict(mechanism="dwf", issue_policy="majority"),
    "en-DWF": dict(mechanism="en-dwf", issue_policy="majority"),
    "en-DWF&HWS": dict(mechanism="en-dwf", issue_policy="majority", hws=True),
    "TBC": dict(mechanism="tbc"),
}


def bench_trace(blocks=48, threads=64 * 1024, cta=256, divergence=0.1):
    """The synthetic stress trace this benchmark replays."""
    return synthetic(blocks, threads, seed=1, warp_size=32, block=(cta, 1, 1), divergence=divergence,
                     max_path_len=200)


def bench_config():
    """The GT200-like machine of this benchmark: warp 32, SIMD 8, 8 SMs."""
    return SimConfig(warp_size=32, simd_width=8, n_sms=8, n_schedulers=1, max_warps_per_sm=48, max_ctas_per_sm=8,
                     lat_alu=24, lat_global=400)


def workload_table(directory: str) -> None:
    from pathlib import Path

    from simt_fast.sim.config import load_config
    from simt_fast.trace.model import Trace

    base = load_config("gt200")
    names = list(THESIS)
    print("| workload | " + " | ".join(names[1:]) + " | PDOM SIMD util |")
    print("|---" * len(names) + "|---|")
    logs = {n: [] for n in names[1:]}
    for path in sorted(Path(directory).glob("*.h5")):
        trace = Trace.load(path)
        cycles, util = {}, 0.0
        for name in names:
            try:
                s = simulate(trace, base.replace(**THESIS[name]))
            except Exception as e:  # e.g. a bar.sync in divergent code deadlocks the stack mechanisms
                cycles[name] = None
                print(f"<!-- {path.stem} {name}: {e} -->")
                continue
            cycles[name] = s.cycles
            if name == "PDOM":
                util = s.simd_util
        cells = []
        for name in names[1:]:
            if cycles["PDOM"] and cycles[name]:
                sp = cycles["PDOM"] / cycles[name]
                logs[name].append(np.log(sp))
                cells.append(f"{sp:.3f}")
            else:
                cells.append("n/a")
        print(f"| {path.stem} | " + " | ".join(cells) + f" | {util:.3f} |")
    means = [f"{np.exp(np.mean(v)):.3f}" if v else "n/a" for v in logs.values()]
    print("| **geometric mean** | " + " | ".join(means) + " | |")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--workloads", help="directory of workload traces: print the Jin 2012 comparison table")
    ap.add_argument("--threads", type=int, default=64 * 1024)
    ap.add_argument("--blocks", type=int, default=48)
    ap.add_argument("--cta", type=int, default=256)
    ap.add_argument("--ref-ctas", type=int, default=2)
    ap.add_argument("--divergence", type=float, default=0.1)
    ap.add_argument("--configs", default=",".join(CONFIGS))
    args = ap.parse_args()
    if args.workloads:
        workload_table(args.workloads)
        return

    trace = bench_trace(args.blocks, args.threads, args.cta, args.divergence)
    small = first_ctas(trace, args.ref_ctas)
    base = bench_config()
    print(f"trace: {trace.n_blocks} blocks, {trace.n_threads} threads, {trace.total_thread_insts():,} thread "
          f"instructions; reference on the first {args.ref_ctas} CTAs")
    print(f"{'config':12} {'warp insts':>12} {'cycles':>12} {'simd util':>9} {'numba Mwi/s':>12} {'ref kwi/s':>10} "
          f"{'ratio':>8}")
    for name in args.configs.split(","):
        c = base.replace(**CONFIGS[name])
        try:
            simulate(small, c)  # compile / load from cache
        except Exception as e:  # e.g. a combination this build does not simulate yet
            print(f"{name:12} skipped: {e}")
            continue
        best = np.inf
        for _ in range(3):
            t0 = time.process_time()
            s = simulate(trace, c)
            best = min(best, time.process_time() - t0)
        fast_rate = s.warp_insts / best
        t0 = time.process_time()
        r = reference(small, c)
        ref_rate = r.warp_insts / (time.process_time() - t0)
        print(f"{name:12} {s.warp_insts:12,} {s.cycles:12,} {s.simd_util:9.3f} {fast_rate / 1e6:12.2f} "
              f"{ref_rate / 1e3:10.1f} {fast_rate / ref_rate:8.0f}x")


if __name__ == "__main__":
    main()
