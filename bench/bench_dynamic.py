#!/usr/bin/env python
"""Throughput of the IPDOM replay behind the dynamic analyses (expansion, scalarization).

Compares, on the same synthetic trace, the numba replay against its plain-Python reference and
against the sps timing core (which computes the same issue groups plus timing):

    python bench/bench_dynamic.py [--threads 65536] [--blocks 24] [--warp 32]
"""

from __future__ import annotations

import argparse
import time


def timed(fn, *a):
    t = time.perf_counter()
    out = fn(*a)
    return out, time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=65536)
    ap.add_argument("--blocks", type=int, default=24)
    ap.add_argument("--warp", type=int, default=32)
    ap.add_argument("--ref-threads", type=int, default=2048, help="threads for the slow reference run")
    a = ap.parse_args()

    from simt_fast.dynamic.expansion import ipdom_replay, ipdom_replay_reference
    from simt_fast.sim import simulate
    from simt_fast.sim.config import SimConfig
    from simt_fast.trace import synthetic

    tr = synthetic(n_blocks=a.blocks, n_threads=a.threads, seed=1)
    small = synthetic(n_blocks=a.blocks, n_threads=a.ref_threads, seed=1)
    ipdom_replay(small, a.warp)  # compile (or load the cache) outside the timing
    steps = len(tr.path)
    rc, t_fast = timed(ipdom_replay, tr, a.warp)
    _, t_ref = timed(ipdom_replay_reference, small, a.warp)
    _, t_fast_small = timed(ipdom_replay, small, a.warp)
    cfg = SimConfig(mechanism="sps", warp_size=a.warp, max_warps_per_sm=64)
    simulate(small, cfg)
    st, t_core = timed(simulate, tr, cfg)
    assert st.warp_insts == rc.warp_insts
    print(f"trace: {a.threads} threads, {steps} path steps, {rc.thread_insts} thread instructions, warp {a.warp}")
    print(f"ipdom_replay (numba):     {t_fast:8.3f} s  {steps / t_fast / 1e6:8.2f} M path steps/s")
    print(f"sps timing core:          {t_core:8.3f} s  {steps / t_core / 1e6:8.2f} M path steps/s "
          f"(replay {t_core / t_fast:.1f}x faster)")
    print(f"reference ({a.ref_threads} threads): {t_ref:8.3f} s  vs numba {t_fast_small:.4f} s on the same "
          f"trace ({t_ref / max(t_fast_small, 1e-9):.0f}x)")


if __name__ == "__main__":
    main()
