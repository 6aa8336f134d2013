"""The tables of docs/memory.md, computed: sectors per request under sps, dwf and tbc on the shipped
workloads, and the multi-path comparison (sps, dps, mp, mp-oer) on the fermi preset with fixed
memory latencies (the trace without its addresses: the timing model before the memory model) vs
the memory model (caches and bandwidth), and the memory system's hit rates and traffic under sps.

    PYTHONPATH=. python scripts/memory_tables.py [--size tiny|default] [--workloads a,b,...]
                                                 [--tables coalescing,multipath,system]

Traces come from the sweep's workload cache (emulated with addresses on a miss).
"""

from __future__ import annotations

import argparse
import dataclasses

from simt_fast import workloads
from simt_fast.sim import SimulationError, simulate
from simt_fast.sim.config import load_config
from simt_fast.sweep.spec import TraceSource
from simt_fast.sweep.traces import resolve_traces
from simt_fast.trace.model import Trace


def spr(s) -> str:
    return f"{s.mem_sectors / s.mem_requests:.2f}" if s.mem_requests else "-"


def run(trace, cfg):
    try:
        return simulate(trace, cfg)
    except SimulationError:
        return None


def coalescing(traces: dict, base) -> None:
    print("| workload | SIMD util (sps) | sectors/req sps | dwf | tbc | sectors dwf / sps | tbc / sps "
          "| cycles dwf / sps | tbc / sps |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, trace in traces.items():
        s = {m: run(trace, base.replace(mechanism=m)) for m in ("sps", "dwf", "tbc")}
        if s["sps"] is None or not s["sps"].mem_requests:
            continue
        cells = [spr(x) if x else "n/a" for x in s.values()]
        # the same trace: every mechanism makes the same thread accesses, so total sectors compare directly
        total = [f"{x.mem_sectors / s['sps'].mem_sectors:.3f}" if x else "n/a" for x in (s["dwf"], s["tbc"])]
        ratio = [f"{x.cycles / s['sps'].cycles:.3f}" if x else "n/a" for x in (s["dwf"], s["tbc"])]
        print(f"| {name} | {s['sps'].simd_util:.3f} | " + " | ".join(cells + total + ratio) + " |", flush=True)


def multipath(traces: dict, base) -> None:
    mechs = ("sps", "dps", "mp", "mp-oer")
    print("| workload | memory | " + " | ".join(f"{m} cycles" for m in mechs) + " | dps | mp | mp-oer (speedup over sps) |")
    print("|---|---|" + "---|" * (2 * len(mechs) - 1))
    for name, trace in traces.items():
        fixed = dataclasses.replace(trace, mem_ptr=None, mem_addr=None, mem_format="")
        for label, tr in (("fixed latency", fixed), ("caches + DRAM", trace)):
            s = {m: run(tr, base.replace(mechanism=m)) for m in mechs}
            cyc = [f"{s[m].cycles:,}" if s[m] else "n/a" for m in mechs]
            sp = [f"{s['sps'].cycles / s[m].cycles:.3f}" if s[m] and s["sps"] else "n/a" for m in mechs[1:]]
            print(f"| {name} | {label} | " + " | ".join(cyc + sp) + " |", flush=True)


def system(traces: dict, base) -> None:
    """The memory system under sps: the share of sector lookups that hit in the L1 and in the L2,
    DRAM bytes per cycle, sectors per request."""
    print("| workload | L1 hits | L2 hits | DRAM B/cycle | sectors/req |")
    print("|---|---|---|---|---|")
    for name, trace in traces.items():
        s = run(trace, base.replace(mechanism="sps"))
        if s is None or not s.mem_requests:
            continue
        l1 = s.l1_hits / max(1, s.l1_hits + s.l1_misses)
        l2 = s.l2_hits / max(1, s.l2_hits + s.l2_misses)
        print(f"| {name} | {l1:.2f} | {l2:.2f} | {s.dram_bytes / s.cycles:.1f} | {spr(s)} |", flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", default="tiny")
    ap.add_argument("--workloads", default=",".join(workloads.names()))
    ap.add_argument("--tables", default="coalescing,multipath,system")
    args = ap.parse_args()
    names = args.workloads.split(",")
    paths = resolve_traces([TraceSource(name=n, workload=n, size=args.size, seed=0) for n in names])
    traces = {n: Trace.load(paths[n][0]) for n in names}
    base = load_config("fermi")
    if "coalescing" in args.tables:
        coalescing(traces, base)
    if "multipath" in args.tables:
        print()
        multipath(traces, base)
    if "system" in args.tables:
        print()
        system(traces, base)


if __name__ == "__main__":
    main()
