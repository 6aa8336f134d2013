"""Emulator throughput, JIT speedup and memory (printed, not asserted).

    /work/venv/bin/python bench/bench_emu.py            # 4 default-size workloads + JIT speedup + 1M-thread memory
    /work/venv/bin/python bench/bench_emu.py --all      # every workload at default size
    /work/venv/bin/python bench/bench_emu.py --quick    # tiny sizes only
    /work/venv/bin/python bench/bench_emu.py --baseline main [--reps 3] [--size tiny] [names...]
                                                        # paired A/B against another git revision

Reports, per workload: dynamic thread instructions, wall and CPU (process) time, and millions of
thread instructions per CPU-second (one core: the interpreter is single-threaded); outputs are
checked against the numpy reference in the same run. Then the speedup of the numba interpreter
over the same code run as plain Python (NUMBA_DISABLE_JIT=1, in a subprocess) on one tiny launch,
and the peak resident memory of a one-million-thread launch streamed to a trace file.

``--baseline REV`` compares this checkout with git revision REV in one process: REV's package is
extracted (``git archive``) into a temporary directory as ``simt_fast_base`` and both emulators
run the same workload launches alternately (REV with addresses off, this checkout with addresses
off and on); per side the best of ``--reps`` CPU times is kept and the ratios are printed.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

LOOP_PTX = """.version 7.0
.target sm_75
.address_size 64
.visible .entry loop(.param .u64 out, .param .u32 n)
{
 .reg .pred %p<2>;
 .reg .b32 %r<8>;
 .reg .b64 %rd<4>;
 ld.param.u64 %rd1, [out];
 ld.param.u32 %r1, [n];
 mov.u32 %r2, %tid.x;
 mov.u32 %r5, %ctaid.x;
 mov.u32 %r6, %ntid.x;
 mad.lo.s32 %r7, %r5, %r6, %r2;
 mov.u32 %r3, 0;
 mov.u32 %r4, 0;
 and.b32 %r5, %r2, 7;
L1:
 add.s32 %r3, %r3, %r2;
 xor.b32 %r3, %r3, %r4;
 add.s32 %r4, %r4, 1;
 setp.lt.u32 %p1, %r4, %r5;
 @%p1 bra L1;
 mul.wide.u32 %rd2, %r7, 4;
 add.s64 %rd3, %rd1, %rd2;
 st.global.u32 [%rd3], %r3;
 ret;
}
"""

CHILD = r"""
import json, resource, sys, time, numpy as np
sys.path.insert(0, %(root)r)
from simt_fast.emu import launch, load_kernel
mode = sys.argv[1]
src = open(sys.argv[2]).read()
if mode == "python":
    out = np.zeros(256, np.uint32)
    kern = load_kernel(src, "loop")
    t0 = time.process_time()
    r = launch(kern, None, 1, 256, [out, np.uint32(0)], trace=True)
    dt = time.process_time() - t0
    print(json.dumps({"insts": r.thread_insts, "cpu": dt, "sum": int(out.sum())}))
else:
    n_ctas = int(sys.argv[3])
    out = np.zeros(n_ctas * 1024, np.uint32)
    import tracemalloc
    launch(src, "loop", 1, 32, [out, np.uint32(0)])  # load the compiled code first
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    tracemalloc.start()
    t0 = time.process_time()
    r = launch(src, "loop", n_ctas, 1024, [out, np.uint32(0)], trace_path=sys.argv[4])
    dt = time.process_time() - t0
    traced = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"insts": r.thread_insts, "cpu": dt, "rss_before_kb": before, "rss_peak_kb": peak, "traced": traced,
                      "trace_bytes": __import__("os").path.getsize(sys.argv[4])}))
"""


def bench_workloads(names, size):
    from simt_fast import workloads
    from simt_fast.emu import launch, load_kernel

    warm = workloads.get(names[0]).launch_spec("tiny")  # load numba's cached machine code first
    launch(workloads.get(names[0]).ptx_path, workloads.get(names[0]).kernel, warm.grid, warm.block, warm.args, warm.shared_bytes)
    print(f"{'workload':<14} {'size':<8} {'threads':>9} {'thread insts':>14} {'wall s':>8} {'cpu s':>8} {'M inst/cpu-s':>13}  check")
    total_insts = 0
    total_cpu = 0.0
    for name in names:
        wl = workloads.get(name)
        spec = wl.launch_spec(size)
        kern = load_kernel(wl.ptx_path, wl.kernel)
        t0, c0 = time.perf_counter(), time.process_time()
        run = launch(kern, None, spec.grid, spec.block, spec.args, spec.shared_bytes, trace=True)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        try:
            wl.check(spec)
            ok = "ok"
        except AssertionError as e:
            ok = f"FAILED: {e}"
        total_insts += run.thread_insts
        total_cpu += cpu
        print(f"{name:<14} {size:<8} {spec.n_threads:>9} {run.thread_insts:>14} {wall:>8.2f} {cpu:>8.2f} "
              f"{run.thread_insts / max(cpu, 1e-9) / 1e6:>13.1f}  {ok}")
    print(f"{'all':<14} {size:<8} {'':>9} {total_insts:>14} {'':>8} {total_cpu:>8.2f} {total_insts / max(total_cpu, 1e-9) / 1e6:>13.1f}")


def bench_jit_speedup(ptx_file):
    from simt_fast.emu import launch, load_kernel

    out = np.zeros(256, np.uint32)
    kern = load_kernel(LOOP_PTX, "loop")
    launch(kern, None, 1, 256, [out, np.uint32(0)])  # load the compiled code from numba's cache
    c0 = time.process_time()
    reps = 50
    for _ in range(reps):
        r = launch(kern, None, 1, 256, [out, np.uint32(0)], trace=True)
    jit_cpu = (time.process_time() - c0) / reps
    env = dict(os.environ, NUMBA_DISABLE_JIT="1")
    res = subprocess.run([sys.executable, "-c", CHILD % {"root": str(ROOT)}, "python", ptx_file],
                         env=env, capture_output=True, text=True, check=True)
    py = json.loads(res.stdout.strip().splitlines()[-1])
    assert py["insts"] == r.thread_insts and py["sum"] == int(out.sum()), "JIT and plain-Python runs differ"
    print(f"\nJIT speedup on a tiny launch (1 CTA x 256 threads, {r.thread_insts} thread insts, same outputs): "
          f"numba {jit_cpu * 1e3:.2f} ms/launch (with trace, excl. decode), plain Python {py['cpu'] * 1e3:.0f} ms "
          f"-> {py['cpu'] / jit_cpu:.0f}x")


def bench_million(ptx_file):
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "million.h5")
        res = subprocess.run([sys.executable, "-c", CHILD % {"root": str(ROOT)}, "million", ptx_file, "1024", path],
                             capture_output=True, text=True, check=True)
    m = json.loads(res.stdout.strip().splitlines()[-1])
    print(f"\n1M-thread launch (1024 CTAs x 1024 threads, {m['insts']} thread insts, trace streamed to HDF5): "
          f"peak Python/numpy allocations during the launch {m['traced'] / 2**20:.1f} MiB (the 4 MiB output buffer "
          f"included); process peak RSS {m['rss_peak_kb'] / 1024:.0f} MiB vs {m['rss_before_kb'] / 1024:.0f} MiB before the launch, "
          f"cpu {m['cpu']:.1f} s, {m['insts'] / m['cpu'] / 1e6:.1f} M inst/cpu-s, trace file {m['trace_bytes'] / 1e6:.1f} MB")


def _import_baseline(rev: str):
    """REV's ``simt_fast`` package, importable as ``simt_fast_base``.

    Extracted once per commit under the user cache directory and reused, so numba's cache (keyed on
    the source files' paths and times) keeps REV's compiled emulator between runs."""
    import importlib
    import io
    import tarfile

    sha = subprocess.run(["git", "-C", str(ROOT), "rev-parse", rev], capture_output=True, text=True, check=True).stdout.strip()
    xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    where = os.path.join(xdg, "simt-fast", "bench-baseline", sha[:12])
    if not os.path.isdir(os.path.join(where, "simt_fast_base")):
        blob = subprocess.run(["git", "-C", str(ROOT), "archive", sha, "simt_fast"], capture_output=True, check=True).stdout
        tmp = tempfile.mkdtemp(dir=os.path.dirname(where) if os.path.isdir(os.path.dirname(where)) else None)
        with tarfile.open(fileobj=io.BytesIO(blob)) as tar:
            tar.extractall(tmp)
        os.makedirs(where, exist_ok=True)
        os.rename(os.path.join(tmp, "simt_fast"), os.path.join(where, "simt_fast_base"))
        os.rmdir(tmp)
    sys.path.insert(0, where)
    return importlib.import_module("simt_fast_base.emu")


def bench_baseline(rev: str, names, size: str, reps: int):
    from simt_fast import workloads
    from simt_fast.emu import launch, load_kernel

    base = _import_baseline(rev)
    sides = {
        f"{rev} (no /mem)": (base.load_kernel, base.launch, {}),
        "this (no /mem)": (load_kernel, launch, {"record_mem": False}),
        "this (/mem)": (load_kernel, launch, {}),
    }
    best = {(n, s): float("inf") for n in names for s in sides}
    insts = {}
    for name in names:
        wl = workloads.get(name)
        kerns = {s: f[0](wl.ptx_path, wl.kernel) for s, f in sides.items()}
        for s, (_, run, kw) in sides.items():  # warm-up: load each side's cached machine code
            spec = wl.launch_spec("tiny")
            run(kerns[s], None, spec.grid, spec.block, spec.args, spec.shared_bytes, trace=True, **kw)
        for _ in range(reps):
            for s, (_, run, kw) in sides.items():
                spec = wl.launch_spec(size)
                c0 = time.process_time()
                r = run(kerns[s], None, spec.grid, spec.block, spec.args, spec.shared_bytes, trace=True, **kw)
                best[name, s] = min(best[name, s], time.process_time() - c0)
                wl.check(spec)
                insts[name] = r.thread_insts
    cols = list(sides)
    print(f"paired A/B, {size} size, best of {reps} CPU times per side, M thread insts per CPU-second "
          f"(ratio = this / {rev}):")
    print(f"{'workload':<14} " + " ".join(f"{c:>18}" for c in cols) + f" {'ratio no-mem':>13} {'ratio /mem':>11}")
    tot = {s: 0.0 for s in cols}
    for name in names:
        rate = [insts[name] / best[name, s] / 1e6 for s in cols]
        for s in cols:
            tot[s] += best[name, s]
        print(f"{name:<14} " + " ".join(f"{v:>18.1f}" for v in rate) +
              f" {rate[1] / rate[0]:>13.3f} {rate[2] / rate[0]:>11.3f}")
    all_insts = sum(insts.values())
    rate = [all_insts / tot[s] / 1e6 for s in cols]
    print(f"{'all':<14} " + " ".join(f"{v:>18.1f}" for v in rate) +
          f" {rate[1] / rate[0]:>13.3f} {rate[2] / rate[0]:>11.3f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--all", action="store_true", help="every workload at default size")
    ap.add_argument("--quick", action="store_true", help="tiny sizes only, skip the 1M-thread launch")
    ap.add_argument("--million-only", action="store_true", help="only the JIT speedup and the 1M-thread memory measurement")
    ap.add_argument("--baseline", metavar="REV", help="paired A/B against git revision REV (e.g. main)")
    ap.add_argument("--reps", type=int, default=3, help="repetitions per side with --baseline")
    ap.add_argument("--size", default="default", help="workload size with --baseline (tiny or default)")
    ap.add_argument("names", nargs="*", help="workloads with --baseline (default: every workload)")
    a = ap.parse_args()
    from simt_fast import workloads

    if a.baseline:
        bench_baseline(a.baseline, a.names or workloads.names(), a.size, a.reps)
        return

    names = workloads.names() if (a.all or a.quick) else ["bfs", "blackscholes", "shortcircuit", "storegpu"]
    if not a.million_only:
        bench_workloads(names, "tiny" if a.quick else "default")
    with tempfile.NamedTemporaryFile("w", suffix=".ptx", delete=False) as f:
        f.write(LOOP_PTX)
    try:
        bench_jit_speedup(f.name)
        if not a.quick:
            bench_million(f.name)
    finally:
        os.unlink(f.name)
    print(f"\nload average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores (wall times include waiting for the CPU)")


if __name__ == "__main__":
    main()
