"""Start-up: how long `simt-fast run` takes besides simulating, next to what any numba program pays.

    python bench/bench_startup.py [--repeat 5] [--mechanism sps] [--config modern]

Fresh processes on a warm cache (the kernels compiled, Python's bytecode cached: children run
without PYTHONDONTWRITEBYTECODE), best of ``--repeat``, wall and CPU seconds of:

* ``python -c pass`` and ``python -c "import numpy, numba"`` — the interpreter and the floor of any
  numba program;
* ``simt-fast --help`` — the command line without the simulator;
* ``simt-fast run TRACE -m MECH`` on a small synthetic trace with addresses, through the console
  script's entry point, with the time spent in ``simulate()`` (which includes loading the compiled
  kernel) measured inside the process: the rest is the start-up the issue's target bounds
  (imports, option parsing, loading and checking the trace, printing the table, exiting).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_RUN_TIMED = """
import atexit, sys, time
import simt_fast.sim as sim
simulate = sim.simulate
spent = [0.0, 0.0]
def timed(*args, **kwargs):
    t, c = time.perf_counter(), time.process_time()
    try:
        return simulate(*args, **kwargs)
    finally:
        spent[0] += time.perf_counter() - t
        spent[1] += time.process_time() - c
sim.simulate = timed
atexit.register(lambda: print(spent[0], spent[1], file=sys.stderr))
from simt_fast.cli import main
sys.argv[0] = "simt-fast"
main()  # (the console script's entry: it ends the process)
"""


def _env() -> dict:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # users' interpreters cache bytecode
    return env


def timed_process(cmd: list, repeat: int) -> tuple:
    """Best (wall, CPU) seconds of a fresh process (CPU: the child's user + system time)."""
    best_wall = best_cpu = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        before = os.times()
        subprocess.run(cmd, env=_env(), check=True, capture_output=True)
        after = os.times()
        best_wall = min(best_wall, time.perf_counter() - t0)
        best_cpu = min(best_cpu, after.children_user - before.children_user + after.children_system
                       - before.children_system)
    return best_wall, best_cpu


def run_overhead(trace: Path, mechanism: str, config: str, repeat: int) -> tuple:
    """Best (wall, CPU) of a `simt-fast run` process minus its simulate() time."""
    best_wall = best_cpu = float("inf")
    for _ in range(repeat + 1):  # the first run may write bytecode and load what the cache lacks
        t0, before = time.perf_counter(), os.times()
        out = subprocess.run([sys.executable, "-c", _RUN_TIMED, "run", str(trace), "-m", mechanism, "-c", config],
                             env=_env(), check=True, capture_output=True, text=True)
        wall, after = time.perf_counter() - t0, os.times()
        cpu = after.children_user - before.children_user + after.children_system - before.children_system
        sim_wall, sim_cpu = map(float, out.stderr.split()[-2:])
        best_wall, best_cpu = min(best_wall, wall - sim_wall), min(best_cpu, cpu - sim_cpu)
    return best_wall, best_cpu


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--mechanism", default="sps")
    ap.add_argument("--config", default="modern")
    args = ap.parse_args()
    from simt_fast.trace.synth import synthetic

    with tempfile.TemporaryDirectory() as tmp:
        trace = Path(tmp) / "startup.h5"
        synthetic(16, 1024, seed=1, with_mem=True).save(trace)
        rows = [("python -c pass", timed_process([sys.executable, "-c", "pass"], args.repeat)),
                ("import numpy, numba", timed_process([sys.executable, "-c", "import numpy, numba"], args.repeat)),
                ("simt-fast --help", timed_process([sys.executable, "-m", "simt_fast.cli", "--help"], args.repeat)),
                (f"simt-fast run -m {args.mechanism} minus simulate()",
                 run_overhead(trace, args.mechanism, args.config, args.repeat))]
    floor = rows[1][1]
    print(f"{'':<40} {'wall s':>8} {'CPU s':>8} {'CPU / numba floor':>18}")
    for name, (wall, cpu) in rows:
        print(f"{name:<40} {wall:>8.3f} {cpu:>8.3f} {cpu / floor[1]:>18.2f}")


if __name__ == "__main__":
    main()
