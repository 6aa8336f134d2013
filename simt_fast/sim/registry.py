"""Look up mechanisms by name (MGPUSim's policy-by-name idea), over the one table in
``simt_fast.sim.mechanisms``: unknown names are refused at configuration time, in one sentence."""

from __future__ import annotations

from .config import ConfigError
from .mechanisms import BY_NAME, NAMES, Mechanism

__all__ = ["Mechanism", "get", "names"]


def names() -> list[str]:
    """Mechanisms this build can simulate, in table order."""
    return list(NAMES)


def get(name: str) -> Mechanism:
    """The mechanism called ``name``; an unknown name raises ConfigError."""
    if name not in BY_NAME:
        raise ConfigError(f"unknown mechanism '{name}' (mechanisms: {', '.join(NAMES)})")
    return BY_NAME[name]
