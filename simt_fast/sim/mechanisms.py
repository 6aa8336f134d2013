"""The one table of divergence mechanisms: every list of names, codes and rules reads from here.

A mechanism is a row: its name (``SimConfig.mechanism``), the integer code the numba kernels
dispatch on, the kernel family that runs it (``core``: a warp is a fixed set of lanes of one CTA,
split into issue units by per-warp tables; ``formation``: threads move between warps), the module
that holds its rules and the plain-Python reference model beside it, the paper, and what it allows
(``hws``: the hybrid warp size switch; ``majority``: DWF's majority scheduler, its paper policy).

This module imports nothing, so that configuration, the CLI and the kernels can all read it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Mechanism:
    name: str
    code: int  # what the kernels dispatch on (a compile-time constant there)
    family: str  # "core" (sim/core) or "formation" (sim/formation)
    rules: str  # the module with the mechanism's rules
    reference: str  # its plain-Python reference model
    source: str  # the paper it implements
    summary: str
    hws: bool = False  # config field `hws` may be true (the squeeze and warp scaling of Jin 2012)
    majority: bool = False  # DWF's majority scheduling applies (and is the paper's policy: `issue_policy = auto`)
    counters: tuple = ()  # the stats (docs/DESIGN.md §5) only this mechanism counts; `simt-fast run` shows them


_SIM = "simt_fast.sim"

TABLE = (
    Mechanism("serial", 0, "core", f"{_SIM}.mech.serial", f"{_SIM}.reference.serial",
              "baseline (no reconvergence)", "no reconvergence: diverged splits run to exit separately"),
    Mechanism("sps", 1, "core", f"{_SIM}.mech.sps", f"{_SIM}.reference.sps",
              "Fung, Sham, Yuan, Aamodt, Dynamic Warp Formation and Scheduling for Efficient GPU Control Flow, "
              "MICRO 2007 (the PDOM stack)",
              "single-path IPDOM stack: one path of a diverged warp at a time", hws=True),
    Mechanism("dps", 2, "core", f"{_SIM}.mech.dps", f"{_SIM}.reference.dps",
              "Rhu and Erez, The Dual-Path Execution Model for Efficient GPU Control Flow, HPCA 2013",
              "dual-path stack: both paths of the top entry may issue, interleaved"),
    Mechanism("mp", 3, "core", f"{_SIM}.mech.mp", f"{_SIM}.reference.mp",
              "ElTantawy, Ma, O'Connor, Aamodt, A Scalable Multi-Path Microarchitecture for Efficient GPU "
              "Control Flow, HPCA 2014",
              "multi-path IPDOM: warp-split table + reconvergence table, any number of splits in parallel"),
    Mechanism("mp-oer", 4, "core", f"{_SIM}.mech.mp_oer", f"{_SIM}.reference.mp_oer",
              "ElTantawy et al., HPCA 2014, opportunistic early reconvergence",
              "mp + early reconvergence of splits found in the same basic block", counters=("early_reconvergences",)),
    Mechanism("dwf", 7, "formation", f"{_SIM}.formation.dwf", f"{_SIM}.reference.dwf",
              "Fung, Sham, Yuan, Aamodt, Dynamic Warp Formation and Scheduling for Efficient GPU Control Flow, "
              "MICRO 2007",
              "dynamic warp formation: per-SM warp pool keyed by PC, lane-aware merging, majority scheduling",
              hws=True, majority=True, counters=("merges", "lane_conflicts")),
    Mechanism("en-dwf", 8, "formation", f"{_SIM}.formation.dwf", f"{_SIM}.reference.dwf",
              "Jin, Hybrid Warp Size Mechanism (MSc thesis, 2012), section 4.4 and Appendix B",
              "enhanced DWF: a lane conflict moves the thread to another quarter of its lane", hws=True, majority=True,
              counters=("merges", "lane_conflicts")),
    Mechanism("tbc", 9, "formation", f"{_SIM}.formation.tbc", f"{_SIM}.reference.tbc",
              "Fung and Aamodt, Thread Block Compaction for Efficient SIMT Control Flow, HPCA 2011",
              "thread block compaction: CTA-wide stack, lane-aware compaction at divergent branches"),
    Mechanism("stackless", 10, "core", f"{_SIM}.mech.stackless", f"{_SIM}.reference.stackless",
              "Lee, Krashinsky, Grover, Keckler, Asanovic, Convergence and Scalarization for Data-Parallel "
              "Architectures, CGO 2013",
              "per-thread PCs, no stack: reconvergence only at compiler-placed syncwarp points"),
    Mechanism("frontier", 5, "core", f"{_SIM}.mech.frontier", f"{_SIM}.reference.frontier",
              "Diamos, Ashbaugh, Maiyuran, Kerr, Wu, Yalamanchili, SIMD Re-Convergence at Thread Frontiers, "
              "MICRO 2011",
              "earliest reconvergence: issue the threads at the highest-priority (RPO) PC"),
    Mechanism("mimd", 6, "core", f"{_SIM}.mech.mimd", f"{_SIM}.reference.mimd",
              "ideal MIMD bound (with fixed latencies)",
              "every thread issues on its own: a lower bound on every mechanism's cycles with fixed latencies "
              "(perfect memory or no addresses); with the memory model a reference point, not a bound"),
)

BY_NAME = {m.name: m for m in TABLE}
NAMES = tuple(m.name for m in TABLE)
CODE = {m.name: m.code for m in TABLE}
HWS_NAMES = tuple(m.name for m in TABLE if m.hws)
MAJORITY_NAMES = tuple(m.name for m in TABLE if m.majority)
FAMILIES = ("core", "formation")
