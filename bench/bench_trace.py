"""Trace layer throughput: synthetic walk (numba vs reference), HDF5 write/read, streaming, validate.

    /work/venv/bin/python bench/bench_trace.py [--threads 65536] [--blocks 64] [--big]

Every fast path is checked against its slow counterpart in the same run before numbers print.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import numpy as np

from simt_fast.trace import Trace, TraceWriter, synthetic, validate
from simt_fast.trace.io import CFG_FIELDS, INSTR_FIELDS
from simt_fast.trace.synth import _distance_to_exit, walk_paths, walk_paths_reference


def timed(fn, repeat=3):
    best = float("inf")
    out = None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def python_validate_paths(trace: Trace, n_threads: int) -> None:
    """Obviously-correct per-step loop over the first threads (the reference for the numpy check)."""
    edges = {(b, int(s)) for b in range(trace.n_blocks) for s in trace.succ_idx[trace.succ_ptr[b]:trace.succ_ptr[b + 1]]}
    for t in range(n_threads):
        p = trace.thread_path(t).tolist()
        assert p[0] == 0 and p[-1] == trace.exit and trace.exit not in p[:-1]
        assert all((a, b) in edges for a, b in zip(p, p[1:]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=65536)
    ap.add_argument("--blocks", type=int, default=64)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--big", action="store_true", help="also time a 70000-block CFG (uint32 paths; ~5-15 s)")
    args = ap.parse_args()

    synthetic(16, 64, 0)  # compile / load the cached walk kernels
    small_s, _ = timed(lambda: synthetic(64, 512, args.seed), repeat=10)
    print(f"synthetic(64 blocks, 512 threads): {small_s * 1e3:.2f} ms per trace")

    if args.big:
        big_s, big = timed(lambda: synthetic(70_000, 64, args.seed, max_path_len=64), repeat=1)
        validate(big)
        assert big.path.dtype == np.uint32  # block ids past 65535 widen the path (DESIGN §3)
        print(f"synthetic(70000 blocks, 64 threads): {big_s:.2f} s ({big_s / 70_000 * 1e6:.0f} us per block), "
              f"valid, uint32 paths")

    gen_s, trace = timed(lambda: synthetic(args.blocks, args.threads, args.seed, max_path_len=128), repeat=1)
    steps = len(trace.path)
    print(f"synthetic({args.blocks} blocks, {args.threads} threads): {gen_s:.3f} s, {steps:,} path steps "
          f"(mean path {steps / trace.n_threads:.1f} blocks)")

    # Walk kernel vs its plain-Python reference on the same inputs (a slice of threads for the reference).
    rng = np.random.default_rng(0)
    counts = np.diff(trace.succ_ptr)
    succ_cum = np.concatenate([np.cumsum(rng.dirichlet(np.ones(k))) if k else [] for k in counts])
    succ_cum[trace.succ_ptr[1:][counts > 0] - 1] = 1.0
    deviate = rng.uniform(0, 0.5, trace.n_blocks)
    succ = [list(trace.succ_idx[trace.succ_ptr[b]:trace.succ_ptr[b + 1]]) for b in range(trace.n_blocks)]
    dist = _distance_to_exit(trace.n_blocks, succ)
    walk = (trace.succ_ptr, trace.succ_idx, succ_cum, deviate, dist, 256, 32, 128, 7)
    n_ref = min(2048, args.threads)
    fast_s, (ptr, path) = timed(lambda: walk_paths(*walk, args.threads))
    ref_s, ref = timed(lambda: walk_paths_reference(*walk, n_ref), repeat=1)
    assert [path[ptr[t]:ptr[t + 1]].tolist() for t in range(n_ref)] == ref, "numba walk differs from reference"
    fast_rate = len(path) / fast_s
    ref_rate = sum(map(len, ref)) / ref_s
    print(f"walk: numba {fast_rate / 1e6:.1f} M steps/s, reference {ref_rate / 1e6:.3f} M steps/s "
          f"({fast_rate / ref_rate:.0f}x), outputs equal on {n_ref} threads")

    with tempfile.TemporaryDirectory() as d:
        f = Path(d) / "t.h5"
        save_s, _ = timed(lambda: trace.save(f))
        size = os.path.getsize(f)
        load_s, loaded = timed(lambda: Trace.load(f))
        assert loaded.digest() == trace.digest(), "load(save(t)) differs from t"
        raw = trace.path.nbytes + trace.path_ptr.nbytes
        print(f"save: {steps / save_s / 1e6:.1f} M steps/s; load: {steps / load_s / 1e6:.1f} M steps/s; "
              f"file {size / 1e6:.2f} MB for {raw / 1e6:.2f} MB of path arrays ({raw / size:.1f}x)")

        per_cta = trace.threads_per_cta
        cfg = {k: getattr(trace, k) for k in (*CFG_FIELDS, *INSTR_FIELDS, "label", "text")}

        def stream():
            with TraceWriter(Path(d) / "s.h5", kernel=trace.kernel, grid=trace.grid, block=trace.block, cfg=cfg) as w:
                for lo in range(0, trace.n_threads, per_cta):
                    p = trace.path_ptr[lo:lo + per_cta + 1]
                    w.append(p - p[0], trace.path[p[0]:p[-1]])

        stream_s, _ = timed(stream)
        assert Trace.load(Path(d) / "s.h5").digest() == trace.digest(), "streamed file differs"
        print(f"TraceWriter, one CTA ({per_cta} threads) per batch: {steps / stream_s / 1e6:.1f} M steps/s")

    val_s, _ = timed(lambda: validate(trace))
    n_py = min(2048, trace.n_threads)
    py_s, _ = timed(lambda: python_validate_paths(trace, n_py), repeat=1)
    py_steps = int(trace.path_ptr[n_py])
    print(f"validate: {steps / val_s / 1e6:.1f} M steps/s (numpy) vs {py_steps / py_s / 1e6:.2f} M steps/s "
          f"(per-step Python loop)")


if __name__ == "__main__":
    main()
