"""Simulation statistics (docs/DESIGN.md §5). Field names are the results-file column contract."""

from __future__ import annotations

from dataclasses import dataclass, field, fields

import numpy as np

# Scalar stats, in column order. Every mechanism fills every one (0 where it does not apply).
SCALAR_STATS = (
    "cycles",
    "warp_insts",
    "thread_insts",
    "simd_util",
    "ipc",
    "idle_cycles",
    "max_splits",
    "max_stack_depth",
    "max_st",
    "max_rt",
    "merges",
    "lane_conflicts",
    "early_reconvergences",
    "barrier_wait_cycles",
    "expanded_insts",
    # memory model (docs/memory.md); 0 under perfect memory or without addresses in the trace
    "mem_requests",
    "mem_sectors",
    "shared_requests",
    "shared_replays",
    "l1_hits",
    "l1_misses",
    "l2_hits",
    "l2_misses",
    "dram_bytes",
    "mem_stall_cycles",
)
# Histogram stats (1-D integer arrays).
HIST_STATS = ("occupancy_hist", "quarter_hist")

# ---- the kernels' counter vector ``g`` (int64), one layout for both cycle loops ----------------
# The counted stats first (the ratios are derived by `Stats.finalize`), then the run's state.
G_CYCLES = 0
G_WARP_INSTS = 1
G_THREAD_INSTS = 2
G_IDLE = 3
G_MAX_SPLITS = 4
G_MAX_STACK = 5
G_MAX_ST = 6
G_MAX_RT = 7
G_MERGES = 8
G_LANE_CONFLICTS = 9
G_EARLY = 10
G_BARWAIT = 11
G_EXPANDED = 12
G_ERR = 13  # the error that ended the run (`sim.visits` ERR_*), 0 = none
G_ERR_CYCLE = 14
G_ERR_WARP = 15  # the warp blamed (or, for a bad path step, the thread); -1: none
G_ERR_BLK = 16
G_ERR_OFF = 17
G_ERR_NEXT = 18  # a bad path step's next block
G_NEVENTS = 19  # rows written to the event buffer
G_EV_OVERFLOW = 20  # 1: the event buffer filled up
G_VKEY = 21  # the running visit, ((cycle + 1) * 2 + resume) * (n_sms + 1) + SM + 1; event rows carry it (`sim.events`)
G_AGE = 22  # next warp age (dispatch or creation order)
G_EPOCH = 23  # core: next divergence epoch (expanded_insts)
G_NREL = 24  # formation: CTAs queued for a barrier release
G_EXITS = 25  # formation: threads exited so far
G_N = 26  # then one per SM: formation's next warp id on that SM (g[G_N + sm])

_COUNTED = {"cycles": G_CYCLES, "warp_insts": G_WARP_INSTS, "thread_insts": G_THREAD_INSTS, "idle_cycles": G_IDLE,
            "max_splits": G_MAX_SPLITS, "max_stack_depth": G_MAX_STACK, "max_st": G_MAX_ST, "max_rt": G_MAX_RT,
            "merges": G_MERGES, "lane_conflicts": G_LANE_CONFLICTS, "early_reconvergences": G_EARLY,
            "barrier_wait_cycles": G_BARWAIT, "expanded_insts": G_EXPANDED}


@dataclass
class Stats:
    cycles: int = 0
    warp_insts: int = 0  # issued warp (or warp-split) instructions
    thread_insts: int = 0  # useful thread operations (active threads summed over issues)
    simd_util: float = 0.0  # thread_insts / (warp_insts * warp_size)
    ipc: float = 0.0  # thread_insts / cycles
    idle_cycles: int = 0  # SM-cycles with no issue while the SM has unfinished warps
    max_splits: int = 0  # most warp splits of one warp schedulable at once
    max_stack_depth: int = 0  # sps/dps/tbc stack depth high-water mark
    max_st: int = 0  # mp: split-table occupancy high-water mark (one warp)
    max_rt: int = 0  # mp: reconvergence-table occupancy high-water mark (one warp)
    merges: int = 0  # dwf/en-dwf: successful merges into a forming warp
    lane_conflicts: int = 0  # dwf/en-dwf: merges refused (or threads displaced) by lane conflicts
    early_reconvergences: int = 0  # mp-oer: splits merged before their IPDOM
    barrier_wait_cycles: int = 0  # warp-cycles spent waiting at bar.sync
    expanded_insts: int = 0  # instructions re-executed on blocks already run before reconvergence
    mem_requests: int = 0  # warp-level global/local memory instructions that accessed memory
    mem_sectors: int = 0  # distinct 32-byte sectors those instructions touched
    shared_requests: int = 0  # warp-level shared-memory instructions that accessed memory
    shared_replays: int = 0  # extra shared-memory passes caused by bank conflicts
    l1_hits: int = 0  # sector lookups in the L1s that hit
    l1_misses: int = 0
    l2_hits: int = 0  # sector lookups in the L2 that hit
    l2_misses: int = 0
    dram_bytes: int = 0  # bytes read from and written to DRAM
    mem_stall_cycles: int = 0  # warp-cycles with a load's (or atomic's) result outstanding
    occupancy_hist: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))  # [warp_size+1]
    quarter_hist: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))  # [n_quarters+1]

    def finalize(self, warp_size: int) -> "Stats":
        """Derive the ratio stats from the counts (never assumed: computed here, once)."""
        self.simd_util = self.thread_insts / (self.warp_insts * warp_size) if self.warp_insts else 0.0
        self.ipc = self.thread_insts / self.cycles if self.cycles else 0.0
        return self

    def add_launch_latency(self, latency: int, warp_size: int) -> "Stats":
        """Count a kernel launch's latency (cycles before its first CTA starts: no warp is resident, so
        no SM is idle-with-work) in ``cycles``, once per kernel, and derive the ratios again."""
        self.cycles += int(latency)
        return self.finalize(warp_size)

    def to_dict(self) -> dict:
        out = {}
        for f in fields(self):
            v = getattr(self, f.name)
            out[f.name] = v.tolist() if isinstance(v, np.ndarray) else v
        return out

    @classmethod
    def from_counters(cls, g, occupancy_hist, quarter_hist, warp_size: int) -> "Stats":
        """The stats of a kernel run: counter vector ``g`` (the G_* layout) and the two histograms."""
        return cls(**{name: int(g[i]) for name, i in _COUNTED.items()},
                   occupancy_hist=np.array(occupancy_hist, np.int64),
                   quarter_hist=np.array(quarter_hist, np.int64)).finalize(warp_size)

    @classmethod
    def from_dict(cls, d: dict) -> "Stats":
        kw = {}
        for f in fields(cls):
            if f.name in d:
                v = d[f.name]
                kw[f.name] = np.asarray(v, dtype=np.int64) if f.name in HIST_STATS else v
        return cls(**kw)
