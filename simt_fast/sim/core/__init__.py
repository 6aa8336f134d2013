"""The per-cycle SM timing core for the mechanisms that keep a warp's threads together (docs/core.md).

The core owns everything that is the same under every such mechanism: each thread's path cursor,
the masked register scoreboard (`scoreboard.py`), SIMD-unit occupancy, issue scheduling (lrr/gto),
barriers, CTA dispatch and replacement, event skipping, the no-progress guard and the statistics
(`loop.py`, `blocks.py`). A mechanism (``simt_fast.sim.mech.<name>``) owns only how the threads of
a warp are grouped into *issue units* (rows of the split table: PC + lane mask) — which units may
issue, and what happens to the tables when a unit reaches the end of a block. The core calls the
mechanism's small numba functions through an integer mechanism code (`sim.mechanisms`).

``simt_fast.sim.simulate`` allocates the state (`state.allocate`) and calls ``run``.
"""

from .loop import run
from .state import allocate

__all__ = ["allocate", "run"]
