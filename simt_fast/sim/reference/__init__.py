"""Plain-Python reference models of every mechanism (readable first, fast never).

``simulate(trace, config, events=None)`` has the same contract as ``simt_fast.sim.simulate``;
tests compare the two on random traces. One file per mechanism (named in the table,
``simt_fast.sim.mechanisms``) and two engines: ``core`` steps warps whose threads stay together
(with ``pdom_hws`` for sps under hws), ``formation`` warps whose threads move (``dwf``, ``tbc``).
The references import nothing from the numba kernels.
"""

from __future__ import annotations

from ..config import SimConfig
from ..mechanisms import BY_NAME
from ..stats import Stats
from . import dwf, pdom_hws, tbc
from .core import ReferenceCore
from .tables import ReferenceError_

__all__ = ["simulate", "ReferenceError_"]


def simulate(trace, config: SimConfig, *, events: list | None = None, syncwarp=None) -> Stats:
    """The reference model's answer for ``trace`` under ``config`` (slow; small traces only)."""
    m = config.mechanism
    if BY_NAME[m].family == "formation":
        stats = (tbc if m == "tbc" else dwf).simulate(trace, config, events=events)
    elif config.hws:
        stats = pdom_hws.simulate(trace, config, events=events)
    else:
        stats = ReferenceCore(trace, config, events, syncwarp).run()
    return stats.add_launch_latency(config.kernel_launch_latency, config.warp_size)
