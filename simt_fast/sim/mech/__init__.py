"""Divergence mechanisms, one module each, behind ``simt_fast.sim.registry``.

The integer codes below are what the numba core dispatches on (an int code plus small per-mechanism
@jit functions: numba caches them with ``cache=True``, which first-class function arguments do not
reliably allow). Later mechanisms (dwf, en-dwf, tbc, stackless) take the next codes.
"""

SERIAL = 0
SPS = 1
DPS = 2
MP = 3
MP_OER = 4
FRONTIER = 5
MIMD = 6
STACKLESS = 10  # (7-9: dwf, en-dwf, tbc)
