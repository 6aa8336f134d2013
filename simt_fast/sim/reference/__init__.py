"""Plain-Python reference models of every mechanism (readable first, fast never).

``simulate(trace, config, events=None)`` has the same contract as ``simt_fast.sim.simulate``;
tests compare the two on random traces. One file per mechanism plus the shared ``core``.
"""

from .core import ReferenceError_, simulate

__all__ = ["simulate", "ReferenceError_"]
