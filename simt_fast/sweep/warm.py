"""Imported by the local pool's fork server: load the timing core's compiled kernels once.

numba loads a function's machine code (from its on-disk cache) on the first call, in every
process. Calling the simulator once on a tiny trace here, in the fork server, means every pool
worker forked from it starts with the kernels already in memory instead of each paying the
load (about a second per worker on a small machine) before its first point.
"""

from __future__ import annotations


def _warm() -> None:
    try:
        from ..sim import registry, simulate
        from ..sim.config import SimConfig
        from ..trace.synth import synthetic

        trace = synthetic(4, 8, seed=0, warp_size=4)
        names = registry.names()
    except Exception:  # warming is an optimisation only; a real error shows on the first point
        return
    for name in names:
        try:
            simulate(trace, SimConfig(mechanism=name, warp_size=4, simd_width=4))
        except Exception:
            pass


_warm()
