#!/usr/bin/env python3
"""Cost of the built-in workloads: input generation, numpy reference, and (when the functional
emulator exists) emulated launches, with every emulated output checked against the reference.

    python bench/bench_workloads.py                 # tiny launches, all workloads
    python bench/bench_workloads.py --size default bfs nqueens

Prints, per workload: threads, generator and reference seconds, and for emulated launches the
thread instructions executed, seconds and thread instructions per second.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import simt_fast.workloads as workloads


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*", help="workloads (default: all)")
    ap.add_argument("--size", default="tiny", choices=workloads.SIZES)
    ap.add_argument("--no-emu", action="store_true", help="skip emulated launches")
    opts = ap.parse_args()
    try:
        from simt_fast.emu import launch
    except ImportError:
        launch = None
    if opts.no_emu:
        launch = None
    print(f"{'workload':14s} {'threads':>8s} {'gen s':>7s} {'ref s':>7s} {'thread insts':>13s} {'emu s':>7s} {'Minst/s':>8s}")
    for name in opts.names or workloads.names():
        wl = workloads.get(name)
        t0 = time.perf_counter()
        spec = wl.launch_spec(opts.size, seed=0)
        t1 = time.perf_counter()
        wl.reference(spec)
        t2 = time.perf_counter()
        row = f"{name:14s} {spec.n_threads:8d} {t1 - t0:7.3f} {t2 - t1:7.3f}"
        if launch is not None:
            t3 = time.perf_counter()
            result = launch(wl.ptx_path, wl.kernel, spec.grid, spec.block, spec.args, spec.shared_bytes, trace=False)
            t4 = time.perf_counter()
            insts = int(np.sum(result.thread_insts))
            wl.check(spec)  # a fast wrong answer is not a result
            row += f" {insts:13d} {t4 - t3:7.2f} {insts / (t4 - t3) / 1e6:8.2f}"
        print(row, flush=True)


if __name__ == "__main__":
    main()
