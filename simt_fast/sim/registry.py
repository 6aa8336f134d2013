"""One registry of divergence mechanisms (MGPUSim's policy-by-name idea).

Each mechanism is a module under ``simt_fast.sim.mech`` that declares ``NAME``, ``CODE`` (the small
integer the numba core dispatches on), ``SOURCE`` (the paper it implements) and ``SUMMARY``. The
timing core (``simt_fast.sim.core``) owns everything that is the same for every mechanism; the
mechanism owns how threads are grouped into issue units (docs/core.md, "Mechanism interface").

Names that ``SimConfig`` accepts but that no module implements yet are rejected here, at
configuration time, with a sentence saying so.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass

from .config import MECHANISMS, ConfigError

# name -> module under simt_fast.sim.mech (the later issue adds dwf, en-dwf, tbc, stackless here)
_MODULES = {
    "serial": "serial",
    "sps": "sps",
    "dps": "dps",
    "mp": "mp",
    "mp-oer": "mp_oer",
    "dwf": "dwf",  # dwf, en-dwf and tbc run on the formation kernel (simt_fast.sim.formation)
    "en-dwf": "en_dwf",
    "tbc": "tbc",
    "frontier": "frontier",
    "mimd": "mimd",
    "stackless": "stackless",
}


@dataclass(frozen=True)
class Mechanism:
    name: str
    code: int
    source: str
    summary: str


def names() -> list[str]:
    """Mechanisms this build can simulate, in registry order."""
    return list(_MODULES)


def get(name: str) -> Mechanism:
    """The registered mechanism called ``name``; unknown or unimplemented names raise ConfigError."""
    if name not in _MODULES:
        if name in MECHANISMS:
            raise ConfigError(
                f"mechanism '{name}' is a valid config value but is not implemented by the timing core yet "
                f"(implemented: {', '.join(_MODULES)})"
            )
        raise ConfigError(f"unknown mechanism '{name}' (implemented: {', '.join(_MODULES)})")
    mod = importlib.import_module(f"simt_fast.sim.mech.{_MODULES[name]}")
    return Mechanism(name=mod.NAME, code=mod.CODE, source=mod.SOURCE, summary=mod.SUMMARY)
