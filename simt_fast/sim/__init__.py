"""Timing simulation: replay a trace under a divergence mechanism (docs/DESIGN.md §4–5, docs/core.md).

``simulate(trace, config)`` validates and flattens its inputs in plain Python, runs the kernel
family's numba loop on flat arrays (``core`` or ``formation``, by mechanism: `sim.mechanisms`), and
wraps the counters into :class:`Stats`. ``simt_fast.sim.reference.simulate`` is the slow, readable
model with the same contract.
"""

from __future__ import annotations

from .program import latencies, prepare, rpo_priority
from .run import SimulationError, simulate
from .stats import Stats

__all__ = ["simulate", "SimulationError", "prepare", "latencies", "rpo_priority", "Stats"]
