"""Static analyses on the shipped workloads: transformation cost and what structuring costs at run time.

For every workload: Table 2 of Wu et al. 2012 (branches, Cut / Forward Copy / Backward Copy counts, code
size before and after, transform time), the convergence/variance analysis time and its counts, and
-- with ``--dynamic`` -- Wu et al. 2012's IPDOM vs STRUCT comparison (Fig. 15): thread instructions on the
emulator and cycles on the timing core (``sps``, the IPDOM stack) for the original and the
structured kernel (tiny inputs).

    /work/venv/bin/python bench/bench_analyses.py [--dynamic] [--repeat N]
"""

from __future__ import annotations

import argparse
import time

from simt_fast import workloads
from simt_fast.ir import build_cfg, parse_ptx
from simt_fast.ir.convergence import analyze_convergence
from simt_fast.ir.ptx_printer import print_module
from simt_fast.ir.structurize import structurize


def best_of(fn, repeat):
    best, out = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dynamic", action="store_true", help="also emulate and simulate original vs structured (slower)")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    print(f"{'workload':14s} {'br':>4s} {'cut':>4s} {'fwd':>4s} {'bwd':>4s} {'old':>6s} {'new':>6s} {'exp%':>7s} "
          f"{'new(pred)':>9s} {'struct ms':>9s} {'conv ms':>8s} {'instr/s (conv)':>15s}")
    for name in workloads.names():
        w = workloads.get(name)
        module = parse_ptx(w.ptx_path)
        k = module.find_kernel(w.kernel)
        t_struct, (new, s) = best_of(lambda: structurize(module), args.repeat)
        t_conv, conv = best_of(lambda: analyze_convergence(k, build_cfg(k)), args.repeat)
        _, s_pred = structurize(module, predicated_flags=True)
        n = len(k.instructions)
        print(f"{name:14s} {s.branch_instructions:4d} {s.cuts:4d} {s.forward_copies:4d} {s.backward_copies:4d} "
              f"{s.old_code_size:6d} {s.new_code_size:6d} {s.static_expansion_pct:7.2f} {s_pred.new_code_size:9d} "
              f"{t_struct * 1e3:9.2f} {t_conv * 1e3:8.2f} {n / t_conv:15,.0f}")
        if args.dynamic and s.cuts + s.forward_copies + s.backward_copies:
            from simt_fast.emu import launch
            from simt_fast.sim import simulate
            from simt_fast.sim.config import SimConfig

            runs = {}
            for label, ptx in (("IPDOM", w.ptx_path), ("STRUCT", print_module(new))):
                spec = w.launch_spec(size="tiny", seed=0)
                run = launch(ptx, w.kernel, spec.grid, spec.block, spec.args, spec.shared_bytes, trace=True)
                w.check(spec)
                stats = simulate(run.trace, SimConfig(mechanism="sps"))
                runs[label] = (run.thread_insts, stats.cycles, stats.simd_util)
            (ti0, c0, u0), (ti1, c1, u1) = runs["IPDOM"], runs["STRUCT"]
            print(f"{'':14s} IPDOM: {ti0:,} thread insts, {c0:,} cycles, simd_util {u0:.3f} | "
                  f"STRUCT: {ti1:,} (+{100 * (ti1 - ti0) / ti0:.1f}%), {c1:,} cycles "
                  f"({100 * (c1 - c0) / c0:+.1f}%), simd_util {u1:.3f}")


def scaling(reps_list=(10, 50, 100)):
    """Control tree + structurizer time on a chain of Fig. 3 short circuits (5 blocks each)."""
    from simt_fast.ir.control_tree import build_control_tree
    from simt_fast.ir.structurize import FlowGraph

    fig3 = [(0, 2), (0, 1), (1, 2), (1, 5), (2, 4), (2, 3), (3, 4), (3, 5), (4, 5)]
    print("\nscaling: chain of k short circuits (Fig. 3), 5k+1 blocks")
    for k in reps_list:
        edges = [(5 * r + u, 5 * r + v) for r in range(k) for u, v in fig3]
        n = 5 * k + 1
        succs = [[] for _ in range(n)]
        for u, v in edges:
            succs[u].append(v)
        t0 = time.perf_counter()
        build_control_tree(n, succs, 0, n - 1)
        t1 = time.perf_counter()
        g, s = structurize(FlowGraph(succs, 0, n - 1))
        t2 = time.perf_counter()
        print(f"  k={k:4d} blocks={n:5d} control tree {1e3 * (t1 - t0):8.1f} ms, structurize {1e3 * (t2 - t1):8.1f} ms "
              f"({s.forward_copies} forward copies, {g.n} blocks out)")


if __name__ == "__main__":
    main()
    scaling()
