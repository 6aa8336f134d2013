"""The core family's divergence mechanisms, one module each (the table: ``simt_fast.sim.mechanisms``).

Each module holds its mechanism's rules as small numba functions on the per-warp tables
(``_tables``); the core's cycle loop (``simt_fast.sim.core``) dispatches on the integer codes below,
compile-time constants read from the table.
"""

from ..mechanisms import CODE

SERIAL = CODE["serial"]
SPS = CODE["sps"]
DPS = CODE["dps"]
MP = CODE["mp"]
MP_OER = CODE["mp-oer"]
FRONTIER = CODE["frontier"]
MIMD = CODE["mimd"]
STACKLESS = CODE["stackless"]
