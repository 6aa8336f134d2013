"""Where does a simulation kernel spend its time? A perf profile of `_run`, line by line.

    sudo-less: perf must be allowed to sample your own processes (kernel.perf_event_paranoid <= 2)
    python scripts/profile_core.py TRACE.h5 [--mechanism sps] [--config gt200] [--seconds 8]
    python scripts/profile_core.py synthetic --mechanism dwf    # bench/bench_formation.py's trace and machine

dwf, en-dwf and tbc profile the formation kernel (`formation._run`), every other mechanism the
timing core (`core._run`). `--set key=value` overrides a config field (e.g. `--set hws=true`);
`--function _dwf_finish` maps the lines of another compiled (not inlined) function instead of `_run`.

numba's machine code has no symbols perf can read, so this script (1) compiles the kernel afresh
with line tables (a private NUMBA_CACHE_DIR and NUMBA_DEBUGINFO=1), (2) writes a perf map
(/tmp/perf-PID.map) naming every compiled function, (3) samples itself with `perf record` while it
replays the trace, and (4) maps each sampled address inside `_run` to a source line by aligning the
disassembled machine code with the assembly listing's `.loc` directives. Numbers are approximate:
optimised code moves instructions between lines (a load's cost often lands on the next line), so
read the hottest lines together with their neighbours, and the per-function table as exact.
"""

from __future__ import annotations

import argparse
import collections
import ctypes
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    ap.add_argument("trace")
    ap.add_argument("--mechanism", default="sps")
    ap.add_argument("--config", default="gt200")
    ap.add_argument("--seconds", type=float, default=8.0)
    ap.add_argument("--top", type=int, default=30)
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    ap.add_argument("--function", default="_run", help="the compiled function whose lines to map (default _run)")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="simt-prof-"))
    os.environ["NUMBA_CACHE_DIR"] = str(work / "numba")  # compile afresh: the library keeps its IR
    os.environ["NUMBA_DEBUGINFO"] = "1"

    from simt_fast.sim import core, formation, simulate
    from simt_fast.sim.config import load_config

    if args.trace == "synthetic":  # the formation benchmark's stress trace and GT200-like machine
        sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
        from bench_formation import bench_config, bench_trace

        trace, cfg = bench_trace(), bench_config()
    else:
        from simt_fast.trace.model import Trace

        trace, cfg = Trace.load(args.trace), load_config(args.config)
    overrides = {"mechanism": args.mechanism, "issue_policy": "majority"} if args.mechanism in ("dwf", "en-dwf") \
        else {"mechanism": args.mechanism}
    for kv in args.set:
        key, _, value = kv.partition("=")
        overrides[key] = {"true": True, "false": False}.get(value, int(value) if value.isdigit() else value)
    cfg = cfg.replace(**overrides)
    kernel = formation if args.mechanism in ("dwf", "en-dwf", "tbc") else core
    simulate(trace, cfg)
    fns = [kernel._simulate, kernel._run] + [getattr(kernel, args.function)] * hasattr(kernel, args.function)
    libs = [cres.library for f in fns for cres in f.overloads.values()]
    syms = {}
    for lib in libs:
        for fn in lib._final_module.functions:
            if not fn.is_declaration:
                addr = lib.get_pointer_to_function(fn.name)
                if addr:
                    syms[addr] = fn.name
    syms = sorted(syms.items())
    with open(f"/tmp/perf-{os.getpid()}.map", "w") as fh:
        for k, (addr, name) in enumerate(syms):
            size = syms[k + 1][0] - addr if k + 1 < len(syms) else 1 << 16
            fh.write(f"{addr:x} {min(size, 1 << 20):x} {name}\n")
    mod = kernel.__name__.rsplit(".", 1)[1]  # mangled: _ZN<len>simt_fast3sim<len><module>4_run...
    fn = args.function
    run_addr, run_name = next((a, n) for a, n in syms if re.match(rf"_ZN\d+simt_fast3sim{len(mod)}{mod}{len(fn)}{fn}B", n))

    stop = time.time() + args.seconds + 2
    replay = threading.Thread(target=lambda: [simulate(trace, cfg) for _ in iter(lambda: time.time() < stop, False)])
    replay.start()
    data = work / "perf.data"
    subprocess.run(["perf", "record", "-q", "-F", "4000", "-p", str(os.getpid()), "-o", str(data), "--", "sleep",
                    str(args.seconds)], check=True)
    replay.join()
    ips = collections.Counter(int(line.split()[0], 16) for line in subprocess.run(
        ["perf", "script", "-i", str(data), "-F", "ip"], capture_output=True, text=True).stdout.split())
    report = subprocess.run(["perf", "report", "-i", str(data), "--no-children", "--sort", "symbol", "--stdio"],
                            capture_output=True, text=True).stdout
    print("per function:")
    for line in report.splitlines():
        if line.strip() and not line.startswith("#"):
            print("  " + line.strip()[:100])
            if line.count("%") and float(line.split("%")[0]) < 0.5:
                break

    # Source lines from the very object code the JIT loaded (numba keeps it for its cache; compiled with
    # NUMBA_DEBUGINFO its line table is exact). An assembly listing (`get_asm_str`) would not do: it is a
    # second code generation, and a third of its instructions differ from the code that runs. A callee
    # is linked into every caller's library, so the function exists in several copies: take the one
    # that got the samples.
    best = None
    for lib in libs:
        obj = getattr(lib, "_compiled_object", None)
        if not obj or run_name.encode() not in obj:
            continue
        (work / "kernel.o").write_bytes(obj)
        symtab = subprocess.run(["objdump", "-t", str(work / "kernel.o")], capture_output=True, text=True).stdout
        row = next((line.split() for line in symtab.splitlines() if line.endswith(" " + run_name)), None)
        if row is None or row[-3] == "*UND*":
            continue
        dis = subprocess.run(["objdump", "-d", "-l", "--insn-width=15", f"--disassemble={run_name}",
                              str(work / "kernel.o")], capture_output=True, text=True).stdout
        sym_value = int(row[0], 16)
        starts = {int(m.group(1), 16) - sym_value for m in re.finditer(r"^\s+([0-9a-f]+):\t", dis, re.M)}
        # (the JIT resolves the name to one copy, whichever library is asked: the right object is the
        # one whose instruction starts are where the samples are)
        addr = lib.get_pointer_to_function(run_name)
        fit = sum(n for ip, n in ips.items() if ip - addr in starts)
        if best is None or fit > best[0]:
            best = (fit, dis, addr, sym_value)
    if best is None:
        sys.exit(f"no object code of {run_name} (was it loaded from a cache?)")
    _, dis, run_addr, sym_value = best
    line_of, cur = {}, ("?", 0)  # instruction offset in the function -> (source file, line)
    for raw in dis.splitlines():
        m = re.match(r"^(/\S+):(\d+)", raw)
        if m:
            cur = (m.group(1), int(m.group(2)))
            continue
        m = re.match(r"^\s+([0-9a-f]+):\t", raw)
        if m:
            line_of[int(m.group(1), 16) - sym_value] = cur
    total = sum(ips.values())
    per_line = collections.Counter()
    for addr, n in ips.items():
        where = line_of.get(addr - run_addr)
        if where is not None:
            per_line[where] += n
    sources = {}
    print(f"\nhottest source lines inside {fn} ({total} samples in all):")
    for (path, ln), n in per_line.most_common(args.top):
        if path not in sources:
            try:
                sources[path] = Path(path).read_text().splitlines()
            except OSError:
                sources[path] = []
        text = sources[path][ln - 1].strip() if 0 < ln <= len(sources[path]) else ""
        print(f"{100 * n / total:5.1f}%  {Path(path).name}:{ln:<5} {text[:90]}")


if __name__ == "__main__":
    sys.exit(main())
