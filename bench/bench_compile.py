"""Cold JIT compile time of the simulator's kernels, this checkout against another revision.

    python bench/bench_compile.py [--baseline REV] [--kernels core,formation,...] [--reps N]

Each measurement is a fresh process with an empty numba cache: it builds a small synthetic trace
(its own numba helpers compile before the clock starts), then times, in process CPU seconds, the
import of ``simt_fast.sim`` plus the first ``simulate`` call — what a user's first run pays. A second
fresh process on the now warm cache times the same (loading the machine code). Kernels:

- ``core``: the IPDOM-family cycle loop (one build serves serial … mimd), first run ``sps`` + hws on
  a trace without addresses (no memory model);
- ``formation``: the dwf/en-dwf/tbc cycle loop, first run ``dwf`` + hws, the same trace;
- ``formation-wide``: after that, a run with ``max_cycles`` past 2^31 (revisions that keep the
  scoreboard in int32 when they can build the kernel a second time, for int64);
- ``core-memory``, ``formation-memory``: the same first runs on a trace with addresses, so the
  memory model runs: what a first run on a traced workload compiles (a revision without the
  memory model runs the trace without addresses, its own first run);
- ``emulator``: tracing the ``nn`` workload (tiny) — the PTX interpreter (not run by default).

``--baseline REV`` (default 32dfb2b) extracts REV's package with ``git archive`` and measures it
the same way, alternating with this checkout, and prints the ratio this / REV. The machine may be
shared: compare the ratio of one run, not absolute seconds across runs.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import json, sys, time
try:
    from simt_fast.trace.synth import synthetic
except ImportError:  # revisions before the module's rename
    from simt_fast.trace.synthetic import synthetic
kernel = sys.argv[1]
try:  # the -memory kernels: a trace with addresses, so the memory model runs (and compiles)
    trace = synthetic(n_blocks=12, n_threads=256, seed=1, block=(64, 1, 1), with_mem=kernel.endswith("-memory"))
except TypeError:  # a revision before the memory model: its first run has none to compile
    trace = synthetic(n_blocks=12, n_threads=256, seed=1, block=(64, 1, 1))
if kernel == "emulator":
    import tempfile
    from pathlib import Path
    t0 = time.process_time()
    from simt_fast.sweep.traces import trace_workload
    with tempfile.TemporaryDirectory() as d:
        trace_workload("nn", "tiny", 0, Path(d) / "nn.h5")
    print(json.dumps({"cpu": time.process_time() - t0}))
    sys.exit(0)
t0 = time.process_time()
from simt_fast.sim import simulate
from simt_fast.sim.config import SimConfig
mech = "sps" if kernel.startswith("core") else "dwf"
cfg = SimConfig(mechanism=mech, simd_width=8, hws=True)
if kernel == "formation-wide":
    simulate(trace, cfg)
    t0 = time.process_time()
    cfg = cfg.replace(max_cycles=1 << 40)
stats = simulate(trace, cfg)
print(json.dumps({"cpu": time.process_time() - t0, "cycles": stats.cycles}))
"""


def extract(rev: str) -> Path:
    """REV's ``simt_fast`` package, presets and workload PTX under the user cache directory, extracted once."""
    sha = subprocess.run(["git", "-C", str(ROOT), "rev-parse", rev], capture_output=True, text=True,
                         check=True).stdout.strip()
    xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    where = Path(xdg) / "simt-fast" / "bench-baseline" / f"{sha[:12]}-tree"
    if not (where / "simt_fast").is_dir() or not (where / "data" / "ptx").is_dir():
        blob = subprocess.run(["git", "-C", str(ROOT), "archive", sha, "simt_fast", "data/configs", "data/ptx"],
                              capture_output=True, check=True).stdout
        tmp = Path(tempfile.mkdtemp(prefix="tree-", dir=where.parent if where.parent.is_dir() else None))
        with tarfile.open(fileobj=io.BytesIO(blob)) as tar:
            tar.extractall(tmp, filter="data")
        where.parent.mkdir(parents=True, exist_ok=True)
        shutil.rmtree(where, ignore_errors=True)  # an extract from before the PTX was included
        os.rename(tmp, where)
    return where


def measure(root: Path, kernel: str, cache: str) -> dict:
    env = dict(os.environ, PYTHONPATH=str(root), NUMBA_CACHE_DIR=cache)
    res = subprocess.run([sys.executable, "-c", CHILD, kernel], env=env, cwd=cache, capture_output=True, text=True)
    if res.returncode:
        raise SystemExit(f"{root}: the {kernel} run failed:\n{res.stderr[-3000:]}")
    return json.loads(res.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--baseline", default="32dfb2b", help="git revision to compare with ('none': this checkout only)")
    ap.add_argument("--kernels", default="core,formation,formation-wide")
    ap.add_argument("--reps", type=int, default=1, help="cold measurements per side (the least is kept)")
    args = ap.parse_args()
    sides = {"this": ROOT}
    if args.baseline != "none":
        sides[args.baseline] = extract(args.baseline)
    print(f"cold = import simt_fast.sim + first simulate, empty numba cache; warm = the same on the cache it "
          f"left (process CPU seconds)")
    head = f"{'kernel':16}" + "".join(f"{s + ' cold':>14}{s + ' warm':>14}" for s in sides)
    print(head + (f"{'cold this/base':>16}" if len(sides) == 2 else ""))
    for kernel in args.kernels.split(","):
        cold = {s: float("inf") for s in sides}
        warm = {}
        for _ in range(args.reps):
            for side, root in sides.items():
                with tempfile.TemporaryDirectory(prefix="numba-cold-") as cache:
                    first = measure(root, kernel, cache)
                    again = measure(root, kernel, cache)
                cold[side] = min(cold[side], first["cpu"])
                warm[side] = again["cpu"]
        row = f"{kernel:16}" + "".join(f"{cold[s]:14.1f}{warm[s]:14.2f}" for s in sides)
        if len(sides) == 2:
            row += f"{cold['this'] / cold[args.baseline]:16.2f}"
        print(row, flush=True)


if __name__ == "__main__":
    main()
