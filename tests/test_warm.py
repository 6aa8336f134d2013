"""`simt-fast warm` compiles every build a first run uses: afterwards a new process only loads."""

from __future__ import annotations

import subprocess
import sys

from simt_fast import _jit
from simt_fast.warm import STEPS, warm

FIRST_RUNS = """
from simt_fast.sim import core, formation, simulate
from simt_fast.sim.config import SimConfig, load_config
from simt_fast.trace.synth import synthetic
for mech in ("sps", "dwf"):
    simulate(synthetic(5, 32, seed=2, warp_size=8), SimConfig(mechanism=mech, warp_size=8, simd_width=4))
    simulate(synthetic(5, 32, seed=2, warp_size=8, with_mem=True), load_config("fermi", {"mechanism": mech}))
stats = [k.run.stats for k in (core, formation)]
print(sum(sum(s.cache_hits.values()) for s in stats), sum(sum(s.cache_misses.values()) for s in stats))
"""


def test_after_warm_first_runs_with_and_without_memory_only_load(monkeypatch):
    monkeypatch.setattr(_jit, "announce", _jit.announce)  # a step turns the stderr line off: restored after
    done = []
    warm(done.append, workers=1)  # (in CI the README's `simt-fast warm` ran first: every step loads)
    assert sorted(done) == sorted(what for what, _ in STEPS)
    out = subprocess.run([sys.executable, "-W", "ignore", "-c", FIRST_RUNS], capture_output=True, text=True,
                         check=True)
    hits, misses = map(int, out.stdout.split())
    assert (hits, misses) == (4, 0)  # each loop with and without the memory model, from the cache
    assert "compiling" not in out.stderr
