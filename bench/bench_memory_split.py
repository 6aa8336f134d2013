"""Where a memory-bound run's time goes: the cycle loop under the loaded machine's timing, and the
memory model itself.

    python bench/bench_memory_split.py [--config modern] [--workloads mcreject,spmv,...]
                                       [--replicated-ctas N] [--repeat 3] [--rounds 3]

`bench_sim_memory.py` measures ``full/off``: a run with the whole memory system against the same
run without addresses. This bench splits the full run (sps) into what it is made of:

* ``off``, ``perfect``, ``full``: as in `bench_sim_memory.py` (``off`` runs SM-major);
* ``off, cycle-major``: the run without addresses in the visit order a full run must take (its SMs
  share the L2 and the interconnect, so requests reach them in the machine's cycle order);
* ``loop``: the full run again, with every memory instruction's ready cycle read from a recording of
  the full run instead of computed: no address gathered, no memory model, the same cycles (checked).
  What the cycle loop costs under the loaded machine's timing (more cycles, other visits);
* ``model``: the memory model alone, the recorded stream of accesses (every one the full run made,
  with its lanes, in issue order) through ``memory.replay``: the same ready cycles (checked);
* ``bound off/loop``: the best ``full/off`` could be if the memory model and the address gather cost
  nothing; ``bound perf/loop`` the same for ``full/perfect``.

Recording the stream and reading the ready cycles back need two small changes to the kernels that
the product does not carry (a branch in the hot path): the bench makes them in two patched copies of
the package in a temporary directory, run in subprocesses. Their kernels compile once into numba's
cache (about a minute each). Times are process CPU seconds: the least of ``--repeat`` runs after a
warm-up in each worker, and the least over ``--rounds`` rounds of the workers taken in turn (single
runs on a shared host move by up to 1.5x).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if "SPLIT_WORKER" not in os.environ:  # a worker imports the package its PYTHONPATH names
    sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

# ---- the two patched copies: (file, text, replacement), each applied exactly once ---------------
RECORD_PATCH = [
    ("sim/memory/__init__.py", "def allocate(",
     "RECORD = np.zeros((int(__import__('os').environ.get('SPLIT_ROWS', '1')), 8 + 2 * MAX_LANES), np.int64)\n\n\n"
     "def allocate("),
    ("sim/memory/__init__.py", "        np.zeros((n_sms, config.l1_mshrs + 1), np.int64),  # (`mshr`: the busy cycles, then their count)\n    )",
     "        np.zeros((n_sms, config.l1_mshrs + 1), np.int64),  # (`mshr`: the busy cycles, then their count)\n"
     "        RECORD,\n    )\n    RECORD[0, 0] = 0"),
    ("sim/memory/hierarchy.py",
     "    sm_state, l1, l1_clock, l2, l2_clock, dram, warp_wait, scratch, slices, mshr = state\n",
     "    sm_state, l1, l1_clock, l2, l2_clock, dram, warp_wait, scratch, slices, mshr = state[:10]\n"
     "    rec = state[10]\n"
     "    ri = rec[0, 0] + 1\n"
     "    rec[0, 0] = ri\n"
     "    if ri < rec.shape[0]:\n"
     "        rec[ri, 0] = sm\n"
     "        rec[ri, 1] = warp\n"
     "        rec[ri, 2] = now\n"
     "        rec[ri, 3] = space\n"
     "        rec[ri, 4] = kind\n"
     "        rec[ri, 5] = nbytes\n"
     "        rec[ri, 6] = 1 if writes_reg else 0\n"
     "        rec[ri, 7] = n_lanes\n"
     "        for lane in range(n_lanes):\n"
     "            rec[ri, 8 + lane] = addrs[lane]\n"
     "            rec[ri, 8 + 64 + lane] = resident[lane]\n"),
]
LOOKUP_PATCH = [
    ("sim/memory/__init__.py", "def allocate(",
     "READY = np.concatenate([[0], np.load(__import__('os').environ['SPLIT_READY'])]).astype(np.int64)\n\n\n"
     "def allocate("),
    ("sim/memory/__init__.py", "        np.zeros((n_sms, config.l1_mshrs + 1), np.int64),  # (`mshr`: the busy cycles, then their count)\n    )",
     "        np.zeros((n_sms, config.l1_mshrs + 1), np.int64),  # (`mshr`: the busy cycles, then their count)\n"
     "        READY,\n    )\n    READY[0] = 0"),
    ("sim/memory/issue.py", "    addr = mr.lane_addr\n    resident = mr.lane_resident\n    cursor = mr.cursor\n    rows = mp.rows\n",
     "    ready = mr.state[10]\n    ready[0] += 1\n    return ready[ready[0]], -1\n"
     "    addr = mr.lane_addr\n    resident = mr.lane_resident\n    cursor = mr.cursor\n    rows = mp.rows\n"),
]


def patch_problems(package: Path, patch: list) -> list:
    """The files of ``package`` (a simt_fast source tree) where ``patch`` would not apply: each text it
    replaces must occur exactly once (tests/test_sim_memory.py keeps the bench in step)."""
    return [rel for rel, old, _ in patch if (package / rel).read_text().count(old) != 1]


def patched_copy(where: Path, patch: list) -> Path:
    import simt_fast

    dest = where / "simt_fast"
    shutil.copytree(Path(simt_fast.__file__).parent, dest, ignore=shutil.ignore_patterns("__pycache__"))
    stale = patch_problems(dest, patch)
    if stale:
        raise SystemExit(f"error: simt_fast/{stale[0]} changed: the bench's patch no longer applies")
    for rel, old, new in patch:
        f = dest / rel
        f.write_text(f.read_text().replace(old, new))
    (where / "data").symlink_to(Path(simt_fast.__file__).resolve().parents[1] / "data")  # presets, workloads
    return where


def load_trace(name: str):
    from simt_fast.trace.model import Trace

    if name.endswith(".h5"):
        return Trace.load(name)
    from simt_fast.sweep.spec import TraceSource
    from simt_fast.sweep.traces import resolve_traces

    return Trace.load(resolve_traces([TraceSource(name=name, workload=name, size="default")])[name][0])


def best(fn, repeat: int):
    fn()
    out = np.inf
    for _ in range(repeat):
        t0 = time.process_time()
        res = fn()
        out = min(out, time.process_time() - t0)
    return out, res


def worker(a) -> None:
    """One measurement in this process; prints a JSON line."""
    import dataclasses

    from simt_fast.sim import memory, simulate
    from simt_fast.sim.config import load_config

    cfg = load_config(a.config)
    out = {}
    if a.worker == "model":  # the main package: the recorded stream through memory.replay
        z = np.load(a.data)
        rec, shape = z["rec"], tuple(int(x) for x in z["alloc"])
        n = rec.shape[0]
        col = lambda i: np.ascontiguousarray(rec[:, i])  # noqa: E731
        args = (col(0), col(1), col(2), col(3), col(4), col(5), col(6).astype(np.bool_),
                np.ascontiguousarray(rec[:, 8:72]), np.ascontiguousarray(rec[:, 72:136]), col(7))
        ready = np.zeros(n, np.int64)

        def replay():
            state, params = memory.allocate(cfg, *shape)
            counters = np.zeros(memory.C_N, np.int64)
            memory.replay(state, params, *args[:9], args[9], counters, ready)
            return memory.stats_from_counters(counters)["mem_sectors"]

        out["model"], sectors = best(replay, a.repeat)
        np.save(a.out, ready)
        out["sectors"] = int(sectors)
    else:
        trace = load_trace(a.trace)
        if a.worker == "base":
            off = dataclasses.replace(trace, mem_ptr=None, mem_addr=None, mem_format="")
            perfect = load_config(a.config, {"perfect_memory": True})
            out["off"], _ = best(lambda: simulate(off, cfg), a.repeat)
            out["off_cycle_major"], _ = best(lambda: simulate(off, cfg, sm_major=False), a.repeat)
            out["perfect"], _ = best(lambda: simulate(trace, perfect), a.repeat)
            out["full"], s = best(lambda: simulate(trace, cfg), a.repeat)
            out["cycles"], out["sectors"], out["warp_insts"] = s.cycles, s.mem_sectors, s.warp_insts
        elif a.worker == "record":  # the record copy: every access of one full run
            shape = {}
            allocate = memory.allocate

            def spy(config, *args):
                shape["a"] = args
                return allocate(config, *args)

            memory.allocate = spy
            s = simulate(trace, cfg)
            n = int(memory.RECORD[0, 0])
            if n >= memory.RECORD.shape[0]:
                out["rows"] = n + 1  # too few rows: the caller runs it again with this many
            else:
                np.savez(a.out, rec=memory.RECORD[1:n + 1], alloc=np.array(shape["a"]))
                out["accesses"], out["cycles"] = n, s.cycles
        elif a.worker == "loop":  # the lookup copy: the recorded ready cycles, nothing else
            out["loop"], s = best(lambda: simulate(trace, cfg), a.repeat)
            out["cycles"] = s.cycles
    print(json.dumps(out))


def run_worker(kind: str, pythonpath: str, extra_env: dict, **args) -> dict:
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", kind]
    for k, v in args.items():
        cmd += [f"--{k.replace('_', '-')}", str(v)]
    env = dict(os.environ, SPLIT_WORKER="1", PYTHONPATH=pythonpath, **extra_env)
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=tempfile.gettempdir())
    if done.returncode != 0:
        raise SystemExit(f"error: the {kind} worker failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def split(name: str, trace_arg: str, a, tmp: Path, rec_pkg: Path, look_pkg: Path) -> dict:
    common = dict(config=a.config, repeat=a.repeat)
    data = tmp / f"{name}.npz"
    rec = run_worker("record", str(rec_pkg), {"SPLIT_ROWS": "2"}, trace=trace_arg, out=data, **common)
    if "rows" in rec:
        rec = run_worker("record", str(rec_pkg), {"SPLIT_ROWS": str(rec["rows"])}, trace=trace_arg, out=data, **common)
    ready = tmp / f"{name}.ready.npy"
    out = {}
    for _ in range(a.rounds):  # the workers in turn, each time's least over the rounds (the host's load moves)
        r = run_worker("base", str(ROOT), {}, trace=trace_arg, **common)
        m = run_worker("model", str(ROOT), {}, data=data, out=ready, **common)
        lp = run_worker("loop", str(look_pkg), {"SPLIT_READY": str(ready)}, trace=trace_arg, **common)
        if lp["cycles"] != r["cycles"] or m["sectors"] != r["sectors"]:
            raise SystemExit(f"error: {name}: the split runs disagree with the full run (cycles {lp['cycles']} vs "
                             f"{r['cycles']}, sectors {m['sectors']} vs {r['sectors']})")
        for k, v in {**r, "model": m["model"], "loop": lp["loop"]}.items():
            out[k] = min(out.get(k, v), v)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--config", default="modern")
    ap.add_argument("--workloads", default="mcreject,spmv,hashprobe,mummer,lbm")
    ap.add_argument("--replicated-ctas", type=int, default=200, help="0: no replicated-CTA trace")
    ap.add_argument("--repeat", type=int, default=3, help="runs of each measurement in one worker (the least counts)")
    ap.add_argument("--rounds", type=int, default=3, help="rounds of the workers in turn (the least counts)")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--trace", help=argparse.SUPPRESS)
    ap.add_argument("--data", help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.worker:
        return worker(a)
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        rec_pkg = patched_copy(tmp / "record", RECORD_PATCH)
        look_pkg = patched_copy(tmp / "lookup", LOOKUP_PATCH)
        traces = [(w, w) for w in a.workloads.split(",") if w]
        if a.replicated_ctas:
            sys.path.insert(0, str(Path(__file__).resolve().parent))
            from bench_sim_memory import replicated_trace

            path = tmp / "replicated.h5"
            replicated_trace(a.replicated_ctas).save(path)
            traces.append((f"replicated-{a.replicated_ctas}", str(path)))
        print(f"sps on {a.config}: CPU seconds per simulate (least of {a.rounds} rounds of {a.repeat} runs); the "
              f"patched kernels compile on first use")
        print(f"{'trace':<16} {'cycles':>8} {'sectors':>9} {'off':>6} {'off cm':>6} {'perf':>6} {'full':>6} "
              f"{'loop':>6} {'model':>6} {'ns/sec':>6} {'full/off':>8} {'bound':>6} {'full/perf':>9} {'bound':>6}")
        for name, arg in traces:
            r = split(name, arg, a, tmp, rec_pkg, look_pkg)
            print(f"{name:<16} {r['cycles']:>8} {r['sectors']:>9} {r['off']:>6.3f} {r['off_cycle_major']:>6.3f} "
                  f"{r['perfect']:>6.3f} {r['full']:>6.3f} {r['loop']:>6.3f} {r['model']:>6.3f} "
                  f"{r['model'] / max(r['sectors'], 1) * 1e9:>6.0f} {r['off'] / r['full']:>8.2f} "
                  f"{r['off'] / r['loop']:>6.2f} {r['perfect'] / r['full']:>9.2f} {r['perfect'] / r['loop']:>6.2f}",
                  flush=True)


if __name__ == "__main__":
    main()
