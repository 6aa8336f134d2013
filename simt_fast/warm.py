"""Compile every numba kernel ahead of the first real run (``simt-fast warm``).

A kernel compiles on its first call on a machine and is cached on disk after that (`_jit`). Each
step here calls one kernel family on a small input, so that a later ``simt-fast run``, ``trace`` or
sweep only loads machine code. A step whose kernel is already cached takes about a second. The
steps run in parallel processes (one per core).
"""

from __future__ import annotations

import os
import tempfile
from concurrent.futures import ProcessPoolExecutor, as_completed
from multiprocessing import get_context
from pathlib import Path
from typing import Callable

import numba

from . import _jit


def _simulate(mechanism: str) -> None:
    from .sim import simulate
    from .sim.config import SimConfig, load_config
    from .trace.synth import synthetic

    # two builds of the loop: without the memory model (a trace without addresses) and with it
    simulate(synthetic(6, 64, seed=0, warp_size=8), SimConfig(mechanism=mechanism, warp_size=8, simd_width=4))
    simulate(synthetic(6, 64, seed=0, warp_size=8, with_mem=True), load_config("fermi", {"mechanism": mechanism}))


def _core() -> None:
    _simulate("sps")


def _formation() -> None:
    _simulate("dwf")


def _emulator() -> None:
    from .sim.config import load_config
    from .sim.memory import profile
    from .sweep.traces import trace_workload
    from .trace.model import Trace

    with tempfile.TemporaryDirectory(prefix="simt-fast-warm-") as tmp:
        path = trace_workload("nn", "tiny", 0, Path(tmp) / "nn.h5")
        profile(Trace.load(path), load_config("fermi"))


def _dynamic() -> None:
    from .dynamic.expansion import ipdom_replay
    from .trace.accelsim import export
    from .trace.synth import synthetic

    ipdom_replay(synthetic(6, 64, seed=0, warp_size=8), 8)
    with tempfile.TemporaryDirectory(prefix="simt-fast-warm-") as tmp:  # the Accel-Sim export's line builder
        export(synthetic(6, 64, seed=0, warp_size=8, with_mem=True), tmp)


# A one-warp Accel-Sim kernel trace: a loop with a load in each address mode (the kernels compile
# whole, so any trace builds them all)
_ACCELSIM_TRACE = """-kernel name = _Z4warmv
-grid dim = (1,1,1)
-block dim = (4,1,1)
-accelsim tracer version = 4
#BEGIN_TB
thread block = 0,0,0
warp = 0
insts = 7
0000 0000000f 1 R0 S2R 0 0
0010 0000000f 1 R1 LDG.E 1 R0 4 1 0x7f0000000000 4
0020 0000000f 0 BRA 0 0
0010 00000003 1 R1 LDG.E 1 R0 4 2 0x7f0000000000 4
0020 00000000 0 BRA 0 0
0030 0000000f 0 STG.E 2 R0 R1 4 0 0x7f0000000010 0x7f0000000014 0x7f0000000018 0x7f000000001c
0040 0000000f 0 EXIT 0 0
#END_TB
"""


def _accelsim() -> None:
    from .trace import accelsim

    with tempfile.TemporaryDirectory(prefix="simt-fast-warm-") as tmp:
        trace = Path(tmp) / "kernel-1.traceg"
        trace.write_text(_ACCELSIM_TRACE)
        accelsim.convert(trace, Path(tmp) / "kernel-1.h5")


# (what it compiles, how), longest first, so that two processes finish about together. Cold, one
# at a time on a 2-core development machine: the formation kernel's two builds 63 s of CPU, the
# emulator 61 s, the core's two builds 39 s, the Accel-Sim importer's kernels 15 s, the IPDOM walk
# and the export's line builder a few seconds
STEPS: list[tuple[str, Callable[[], None]]] = [
    ("simulator's formation kernel (dwf, en-dwf, tbc)", _formation),
    ("PTX emulator and memory profile", _emulator),
    ("simulator's core kernel (serial … mimd)", _core),
    ("Accel-Sim trace importer", _accelsim),
    ("IPDOM walk (code expansion, Accel-Sim export)", _dynamic),
]


def _run_step(i: int) -> str:
    _jit.announce = False  # the progress bar says the same
    STEPS[i][1]()
    return STEPS[i][0]


def cache_dir() -> str:
    """Where the machine code goes (numba's cache directory for this source version)."""
    return str(numba.config.CACHE_DIR or "numba's default (next to the sources)")


def warm(on_done: Callable[[str], None] = lambda what: None, workers: int | None = None) -> None:
    """Run every step, ``workers`` processes at a time (default: one per core, at most one per
    step); ``on_done(what)`` is called as each step finishes. Each kernel family compiles in one
    process, into the shared on-disk cache."""
    workers = min(len(STEPS), workers or os.cpu_count() or 1)
    if workers <= 1:
        for i in range(len(STEPS)):
            on_done(_run_step(i))
        return
    with ProcessPoolExecutor(workers, mp_context=get_context("spawn")) as pool:
        for done in as_completed([pool.submit(_run_step, i) for i in range(len(STEPS))]):
            on_done(done.result())
