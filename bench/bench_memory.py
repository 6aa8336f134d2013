"""Memory-model throughput: warp-level accesses per second, numba vs the plain-Python reference.

    python bench/bench_memory.py [--accesses N] [--ref-accesses M] [--workloads a,b,...|all|none]

Each row is a stream of warp-level memory instructions (32 lanes) through ``memory.access`` (by
``memory.replay``, one numba call for the whole stream) on the `fermi` preset's memory system (16 KB
L1, 768 KB L2, 127 bytes per cycle over 6 DRAM partitions), with the same stream's first M accesses
through ``reference.memory.MemoryModel.access``; the ratio compares accesses per second measured in
this run. The last row is the trace-level profile (``memory.profile`` vs ``reference.memory.profile``)
of a synthetic trace with addresses, in warp-level accesses per second. Times are process CPU time,
best of 3 after a warm-up (JIT compile excluded).

With ``--workloads``, a second table: each shipped workload at its default size (traced by the
emulator, cached like a sweep's traces) measured by ``memory.profile`` on the `fermi` preset: fixed
warps at full convergence, so the access patterns as the code has them (docs/memory.md).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from simt_fast.sim import memory  # noqa: E402
from simt_fast.sim.config import load_config  # noqa: E402
from simt_fast.sim.memory import layout  # noqa: E402
from simt_fast.sim.reference import memory as ref  # noqa: E402
from simt_fast.trace.synth import synthetic  # noqa: E402

LANES = 32
N_SMS = 15
X = 1 << 40


def stream(kind: str, n: int, rng: np.random.Generator) -> dict:
    """Arrays of ``n`` accesses of one pattern (issue cycles rise by 0..3 per access)."""
    lane = np.arange(LANES, dtype=np.int64)
    warp = rng.integers(0, 48 * N_SMS, n)
    out = dict(sms=warp // 48, warps=warp, nows=np.cumsum(rng.integers(0, 4, n)),
               spaces=np.full(n, layout.SPACE_GLOBAL, np.int64), kinds=np.full(n, layout.KIND_LOAD, np.int64),
               nbytes=np.full(n, 4, np.int64), writes_reg=np.ones(n, np.bool_), n_lanes=np.full(n, LANES, np.int64),
               resident=(warp % 48)[:, None] * LANES + lane[None, :])  # one CTA of 48 warps per SM
    base = rng.integers(0, 1 << 20, n)[:, None] * 128  # a 128 MB working set: mostly misses
    if kind == "coalesced loads":
        base = rng.integers(0, 1 << 9, n)[:, None] * 128  # 64 KB: L2 hits, some L1 hits
        addrs = X + base + 4 * lane[None, :]
    elif kind == "stride-32 loads":
        addrs = X + base + 128 * lane[None, :]
    elif kind == "gather/store/atomic":
        addrs = X + rng.integers(0, 1 << 16, (n, LANES)) * 4
        out["kinds"] = rng.choice([layout.KIND_LOAD, layout.KIND_STORE, layout.KIND_ATOMIC], n, p=[0.6, 0.3, 0.1])
        out["writes_reg"] = out["kinds"] != layout.KIND_STORE
    elif kind == "shared (stride 1/2/32)":
        out["spaces"][:] = layout.SPACE_SHARED
        addrs = rng.choice([4, 8, 128], n)[:, None] * lane[None, :]
    elif kind == "constant":
        out["spaces"][:] = layout.SPACE_CONST
        addrs = (lane[None, :] % rng.integers(1, 8, n)[:, None]) * 4
    elif kind == "local":
        out["spaces"][:] = layout.SPACE_LOCAL
        addrs = np.repeat(rng.integers(0, 64, n)[:, None] * 4, LANES, axis=1)
    else:
        raise ValueError(kind)
    out["addrs"] = np.ascontiguousarray(addrs, np.int64)
    return out


def numba_rate(cfg, s: dict, repeat: int = 3) -> float:
    n = len(s["sms"])
    best = np.inf
    for _ in range(repeat + 1):  # the first run compiles (or loads from the cache)
        state, params = memory.allocate(cfg, N_SMS, 48 * N_SMS, 48 * LANES, 1)
        counters = np.zeros(memory.C_N, np.int64)
        ready = np.zeros(n, np.int64)
        t0 = time.process_time()
        memory.replay(state, params, s["sms"], s["warps"], s["nows"], s["spaces"], s["kinds"], s["nbytes"],
                      s["writes_reg"], s["addrs"], s["resident"], s["n_lanes"], counters, ready)
        best = min(best, time.process_time() - t0)
    return n / best


def reference_rate(cfg, s: dict, m: int) -> float:
    model = ref.MemoryModel(cfg, N_SMS, 48 * N_SMS, 48 * LANES, 1)
    rows = [(int(s["sms"][i]), int(s["warps"][i]), int(s["nows"][i]), int(s["spaces"][i]), int(s["kinds"][i]),
             int(s["nbytes"][i]), bool(s["writes_reg"][i]), s["addrs"][i].tolist(), s["resident"][i].tolist())
            for i in range(m)]
    t0 = time.process_time()
    for r in rows:
        model.access(*r)
    return m / (time.process_time() - t0)


def workload_table(names: list) -> None:
    from simt_fast.sweep.spec import TraceSource
    from simt_fast.sweep.traces import resolve_traces
    from simt_fast.trace.model import Trace

    cfg = load_config("fermi")
    sources = [TraceSource(name=n, workload=n, size="default") for n in names]
    paths = resolve_traces(sources, on_trace=lambda n, ev: ev == "tracing" and print(f"  tracing {n} ..."))
    print(f"\nshipped workloads (default size), memory.profile on the fermi preset")
    print(f"{'workload':<14} {'requests':>9} {'sectors/req':>11} {'shared req':>10} {'replays/req':>11} "
          f"{'const/req':>9} {'L1 hit':>7} {'L2 hit':>7} {'DRAM MB':>8}")
    for n in names:
        p = memory.profile(Trace.load(paths[n][0]), cfg)
        rate = lambda h, m: f"{h / (h + m):7.2f}" if h + m else f"{'-':>7}"  # noqa: E731
        print(f"{n:<14} {p.mem_requests:>9} {p.sectors_per_request:>11.2f} {p.shared_requests:>10} "
              f"{p.shared_replays / max(p.shared_requests, 1):>11.2f} "
              f"{p.const_accesses / max(p.const_requests, 1):>9.2f} {rate(p.l1_hits, p.l1_misses)} "
              f"{rate(p.l2_hits, p.l2_misses)} {p.dram_bytes / 1e6:>8.2f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--accesses", type=int, default=200_000)
    ap.add_argument("--ref-accesses", type=int, default=3_000)
    ap.add_argument("--workloads", default="none", help="comma-separated shipped workloads, 'all', or 'none'")
    a = ap.parse_args()
    cfg = load_config("fermi")
    rng = np.random.default_rng(1)
    print(f"{'stream':<24} {'numba, M accesses/s':>20} {'reference, k accesses/s':>24} {'ratio':>8}")
    for kind in ("coalesced loads", "stride-32 loads", "gather/store/atomic", "shared (stride 1/2/32)", "constant",
                 "local"):
        s = stream(kind, a.accesses, rng)
        fast = numba_rate(cfg, s)
        slow = reference_rate(cfg, s, min(a.ref_accesses, a.accesses))
        print(f"{kind:<24} {fast / 1e6:>20.2f} {slow / 1e3:>24.1f} {fast / slow:>7.0f}x")
    trace = synthetic(n_blocks=24, n_threads=8192, seed=3, block=(256, 1, 1), with_mem=True)
    small = synthetic(n_blocks=24, n_threads=512, seed=3, block=(256, 1, 1), with_mem=True)
    pcfg = cfg.replace(n_sms=4)
    memory.profile(small, pcfg)  # compile
    best = np.inf
    for _ in range(3):
        t0 = time.process_time()
        prof = memory.profile(trace, pcfg)
        best = min(best, time.process_time() - t0)
    n_fast = prof.mem_requests + prof.shared_requests + prof.const_requests
    t0 = time.process_time()
    want = ref.profile(small, pcfg)
    slow = (want["mem_requests"] + want["shared_requests"] + want["const_requests"]) / (time.process_time() - t0)
    fast = n_fast / best
    print(f"{'profile (synthetic)':<24} {fast / 1e6:>20.2f} {slow / 1e3:>24.1f} {fast / slow:>7.0f}x")
    if a.workloads != "none":
        from simt_fast import workloads

        workload_table(workloads.names() if a.workloads == "all" else a.workloads.split(","))


if __name__ == "__main__":
    main()
