"""Compile every numba kernel ahead of the first real run (``simt-fast warm``).

A kernel compiles on its first call on a machine and is cached on disk after that (`_jit`). Each
step here calls one kernel family on a small input, so that a later ``simt-fast run``, ``trace`` or
sweep only loads machine code. A step whose kernel is already cached takes about a second.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Callable

import numba

from . import _jit


def _core() -> None:
    from .sim import simulate
    from .sim.config import SimConfig
    from .trace.synth import synthetic

    simulate(synthetic(6, 64, seed=0, warp_size=8), SimConfig(mechanism="sps", warp_size=8, simd_width=4))


def _formation() -> None:
    from .sim import simulate
    from .sim.config import SimConfig
    from .trace.synth import synthetic

    simulate(synthetic(6, 64, seed=0, warp_size=8), SimConfig(mechanism="dwf", warp_size=8, simd_width=4))


def _emulator() -> None:
    from .sweep.traces import trace_workload

    with tempfile.TemporaryDirectory(prefix="simt-fast-warm-") as tmp:
        trace_workload("nn", "tiny", 0, Path(tmp) / "nn.h5")


def _dynamic() -> None:
    from .dynamic.expansion import ipdom_replay
    from .trace.synth import synthetic

    ipdom_replay(synthetic(6, 64, seed=0, warp_size=8), 8)


# (what it compiles, how) in the order a new user meets them
STEPS: list[tuple[str, Callable[[], None]]] = [
    ("simulator: core kernel (serial … mimd)", _core),
    ("simulator: formation kernel (dwf, en-dwf, tbc)", _formation),
    ("PTX emulator", _emulator),
    ("dynamic code-expansion replay", _dynamic),
]


def cache_dir() -> str:
    """Where the machine code goes (numba's cache directory for this source version)."""
    return str(numba.config.CACHE_DIR or "numba's default (next to the sources)")


def warm(on_step: Callable[[str], None] = lambda what: None) -> None:
    """Run every step; ``on_step(what)`` is called before each."""
    _jit.announce = False
    try:
        for what, step in STEPS:
            on_step(what)
            step()
    finally:
        _jit.announce = True
