"""Running access streams through the numba memory model and its plain-Python reference side by side."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from simt_fast.sim import memory
from simt_fast.sim.memory import layout
from simt_fast.sim.reference.memory import MemoryModel

# the loaded machine's parts off (unlimited ports, unbounded registers and queues): the rules before
# them, in isolation
UNLOADED = dict(l2_slice_bytes_per_cycle=0, icnt_bytes_per_cycle=0, l1_mshrs=0, l1_miss_queue=0, l1_mshr_merge=0,
                l2_mshr_merge=0)

G, S, L, C = layout.SPACE_GLOBAL, layout.SPACE_SHARED, layout.SPACE_LOCAL, layout.SPACE_CONST
LD, ST, AT = layout.KIND_LOAD, layout.KIND_STORE, layout.KIND_ATOMIC


@dataclass
class Access:
    sm: int
    warp: int
    now: int
    space: int
    kind: int
    nbytes: int
    addrs: list  # per lane: address or None (no access)
    resident: list = None  # per lane: its thread's slot on the SM (CTA slot x CTA threads + index)
    writes_reg: bool = True

    def slots(self):
        return self.resident if self.resident is not None else list(range(len(self.addrs)))


def run_numba(config, accesses, n_sms, n_warps, tpc, ctas_per_sm=1):
    """(ready cycles, stats incl. extra counters, state) of the numba model on ``accesses`` (CTAs of
    ``tpc`` threads, ``ctas_per_sm`` of them per SM: local memory's layout)."""
    state, params = memory.allocate(config, n_sms, n_warps, tpc, ctas_per_sm)
    counters = np.zeros(memory.C_N, np.int64)
    n = len(accesses)
    width = max([len(a.addrs) for a in accesses] + [1])
    addrs = np.full((n, width), layout.NO_ACCESS, np.int64)
    tids = np.zeros((n, width), np.int64)
    for i, a in enumerate(accesses):
        for lane, x in enumerate(a.addrs):
            if x is not None:
                addrs[i, lane] = x
        tids[i, : len(a.addrs)] = a.slots()
    col = lambda f, dt=np.int64: np.array([f(a) for a in accesses], dt)  # noqa: E731
    ready = np.zeros(n, np.int64)
    memory.replay(state, params, col(lambda a: a.sm), col(lambda a: a.warp), col(lambda a: a.now),
                  col(lambda a: a.space), col(lambda a: a.kind), col(lambda a: a.nbytes),
                  col(lambda a: a.writes_reg, np.bool_), addrs, tids, col(lambda a: len(a.addrs)), counters, ready)
    named = {**layout.STAT_COUNTERS, **layout.EXTRA_COUNTERS}
    return ready.tolist(), {k: int(counters[i]) for k, i in named.items()}, state


def run_reference(config, accesses, n_sms, n_warps, tpc, ctas_per_sm=1):
    model = MemoryModel(config, n_sms, n_warps, tpc, ctas_per_sm)
    ready = [model.access(a.sm, a.warp, a.now, a.space, a.kind, a.nbytes, a.writes_reg, a.addrs, a.slots())
             for a in accesses]
    return ready, model.stats(), model
