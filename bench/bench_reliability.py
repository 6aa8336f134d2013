"""What the reliability guards cost, as ratios measured side by side in one run.

* the trace gate (``trace.validate.require_valid``, uncached) against one simulation of the same
  trace, per mechanism, and the cached gate (a sweep's second point on a trace);
* the stored-digest check ``Trace.load`` does against loading without it;
* a results row appended with the disk reservation against one without it (``_storage.reserve``
  replaced by a no-op).

    python bench/bench_reliability.py [--threads 65536] [--blocks 64] [--repeat 3]
"""

from __future__ import annotations

import argparse
import importlib
import tempfile
import time
from pathlib import Path

import numpy as np

from simt_fast import _storage, results
from simt_fast.sim import simulate
from simt_fast.sim.config import SimConfig
from simt_fast.sim.stats import Stats
from simt_fast.trace import Trace, synthetic

validate = importlib.import_module("simt_fast.trace.validate")  # the package re-exports the function


def best_of(fn, repeat):
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=65536)
    ap.add_argument("--blocks", type=int, default=64)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--rows", type=int, default=2000)
    a = ap.parse_args()
    trace = synthetic(a.blocks, a.threads, seed=1, divergence=0.3)
    print(f"synthetic trace: {a.threads} threads, {a.blocks} blocks, {len(trace.path):,} path steps")

    def gate_uncached():
        validate._passed.clear()
        validate.require_valid(trace)

    t_gate = best_of(gate_uncached, a.repeat)
    t_cached = best_of(lambda: validate.require_valid(trace), a.repeat)
    t_digest = best_of(trace.digest, a.repeat)
    for mech in ("sps", "mp", "dwf"):
        cfg = SimConfig(mechanism=mech)
        simulate(trace, cfg)  # compile / warm
        t_sim = best_of(lambda: simulate(trace, cfg), a.repeat)  # includes the cached gate
        print(f"  gate / simulate({mech}): {t_gate / t_sim:.3f}  (cached gate: {t_cached / t_sim:.6f}; "
              f"digest check on load: {t_digest / t_sim:.3f})")

    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "t.h5"
        trace.save(p)
        t_check = best_of(lambda: Trace.load(p), a.repeat)
        t_plain = best_of(lambda: Trace.load(p, allow_digest_mismatch=True), a.repeat)
        print(f"  Trace.load with the digest check / without: {t_check / t_plain:.3f}")

        st = Stats(cycles=1, warp_insts=2, occupancy_hist=np.arange(33), quarter_hist=np.arange(5)).to_dict()
        cfg = SimConfig().to_dict()

        def append_rows(tag):
            out = Path(d) / f"r-{tag}-{time.perf_counter_ns()}.h5"
            with results.ResultsWriter(out) as w:
                for i in range(a.rows):
                    w.append(f"{i:032x}", "t" * 64, "tr", cfg, st)

        t_reserved = best_of(lambda: append_rows("reserved"), a.repeat)
        real = _storage.reserve
        results._storage.reserve = lambda fd, n: None
        try:
            t_bare = best_of(lambda: append_rows("bare"), a.repeat)
        finally:
            results._storage.reserve = real
        print(f"  results append with the disk reservation / without: {t_reserved / t_bare:.3f} "
              f"({a.rows} rows, flushed each)")


if __name__ == "__main__":
    main()
