"""Shared fixtures of the sweep tests: small synthetic traces, sweep files, injected simulators."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from simt_fast._jit import ensure_compiled, jit
from simt_fast.trace import synthetic


def make_traces(directory: Path, n: int = 2) -> list:
    """``n`` small divergent synthetic traces saved as ``syn<i>.h5`` (deterministic)."""
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(n):
        p = directory / f"syn{i}.h5"
        if not p.exists():
            synthetic(10 + 4 * i, 64 + 32 * i, seed=100 + i, divergence=0.3).save(p)
        paths.append(p)
    return paths


SWEEP = """\
# a small sweep over two synthetic traces
baseline = "sps"
traces = ["traces/*.h5"]

[grid]
mechanism = ["sps", "mp", "mimd"]
simd_width = [8, 32]

[[exclude]]
mechanism = "mimd"
simd_width = 8
"""


def make_sweep(directory: Path, text: str = SWEEP) -> Path:
    make_traces(directory / "traces")
    p = directory / "sweep.toml"
    p.write_text(text)
    return p


def slow_simulate(trace, config):
    """The real simulator, slowed down so a test can kill a sweep half way."""
    from simt_fast.sim import simulate

    time.sleep(0.15)
    return simulate(trace, config)


def failing_simulate(trace, config):
    """Fails on one mechanism only (a point failure must not stop the sweep)."""
    from simt_fast.sim import simulate

    if config.mechanism == "mp":
        raise RuntimeError("injected failure\nsecond line")
    return simulate(trace, config)


@jit
def sweep_test_kernel(n, x):
    total = 0.0
    for i in range(n):
        total += x * i
    return total


COMPILE_NOTICE = "the sweep test's kernel"


def compiling_simulate(trace, config):
    """The real simulator, after a first call of a small kernel of its own that every worker needs
    (a build nobody has compiled: the test clears its cache)."""
    from simt_fast.sim import simulate

    args = (np.int64(trace.n_threads), np.float64(0.5))
    ensure_compiled(sweep_test_kernel, COMPILE_NOTICE, 1, args)
    sweep_test_kernel(*args)
    return simulate(trace, config)
