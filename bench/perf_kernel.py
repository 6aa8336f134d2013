"""Where a simulation's time goes inside numba's machine code: perf samples mapped onto the kernel.

    perf record -o perf.data python bench/perf_kernel.py run TRACE.h5|WORKLOAD [--config modern] [--repeat 3]
    python bench/perf_kernel.py report perf.data [--top 12]

``perf`` cannot name numba's code (it has no symbols), and the cycle loop is one function with
every helper inlined, so a per-function profile says nothing anyway. ``run`` simulates the trace
once (loading the compiled kernel), copies the executable mapping that holds the kernel's entry
(``/proc/self/maps``) to ``perf_kernel.bin`` next to ``perf.data``'s default place (the current
directory), then simulates ``--repeat`` more times. ``report`` reads the samples (``perf script``),
keeps those inside that mapping, disassembles it (``objdump -D -b binary``) and prints the hottest
instructions with the few before each: a load's miss shows on the instruction after it. Which
source line an address is takes reading the instructions (a stride of 32 bytes from `sb`'s base is
a scoreboard entry, of 128 bytes a warp's info row, ...). Used for docs/memory.md, *What the
model costs*. Needs ``perf`` and ``objdump`` (Linux).
"""

from __future__ import annotations

import argparse
import collections
import ctypes
import json
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

CODE = Path("perf_kernel.bin")  # the kernel's mapping, copied by `run`
WHERE = Path("perf_kernel.json")  # its address, and the kernel's entry


def load_trace(name: str):
    from simt_fast.trace.model import Trace

    if Path(name).suffix == ".h5":
        return Trace.load(name)
    from simt_fast.sweep.spec import TraceSource
    from simt_fast.sweep.traces import resolve_traces

    return Trace.load(resolve_traces([TraceSource(name=name, workload=name, size="default")])[name][0])


def run(args) -> None:
    from simt_fast.sim import simulate
    from simt_fast.sim.config import load_config
    from simt_fast.sim.core import loop
    from simt_fast.sim.formation import loop as formation
    from simt_fast.sim.mechanisms import BY_NAME

    trace = load_trace(args.trace)
    config = load_config(args.config, {"mechanism": args.mechanism})
    simulate(trace, config)
    kernel = formation.run if BY_NAME[args.mechanism].family == "formation" else loop.run
    entries = [ov.library.get_pointer_to_function(ov.fndesc.llvm_func_name) for ov in kernel.overloads.values()]
    maps = [line.split()[0].split("-") for line in open("/proc/self/maps") if " r-xp " in line]
    spans = [(int(a, 16), int(b, 16)) for a, b in maps]
    # (one overload is loaded: the one this run used, with or without the memory model)
    held = [(a, b, e) for e in entries for a, b in spans if a <= e < b]
    if not held:
        raise SystemExit("error: the kernel's entry is in no executable mapping")
    start, end, entry = held[-1]
    CODE.write_bytes(ctypes.string_at(start, end - start))
    WHERE.write_text(json.dumps({"start": start, "end": end, "entry": entry}))
    t0 = time.process_time()
    for _ in range(args.repeat):
        stats = simulate(trace, config)
    print(f"{(time.process_time() - t0) / args.repeat:.3f} s of CPU per simulate ({stats.cycles:,} cycles); "
          f"kernel code {end - start:,} bytes at {start:#x} in {CODE}", file=sys.stderr)


def report(args) -> None:
    where = json.loads(WHERE.read_text())
    start, end = where["start"], where["end"]
    ips = subprocess.run(["perf", "script", "-i", args.data, "-F", "ip"], capture_output=True, text=True,
                         check=True).stdout.split()
    counts = collections.Counter(int(x, 16) - start for x in ips)
    inside = {off: n for off, n in counts.items() if 0 <= off < end - start}
    total = sum(inside.values())
    print(f"{len(ips):,} samples, {total:,} in the kernel")
    listing = subprocess.run(["objdump", "-D", "-b", "binary", "-mi386:x86-64", str(CODE)], capture_output=True,
                             text=True, check=True).stdout.splitlines()
    at = {}
    for i, line in enumerate(listing):
        head = line.strip().split(":")[0]
        try:
            at[int(head, 16)] = i
        except ValueError:
            pass
    for off, n in sorted(inside.items(), key=lambda kv: -kv[1])[:args.top]:
        print(f"\n{100 * n / total:5.1f} %  +{off:#x}")
        i = at.get(off)
        for line in listing[max(0, i - args.context):i + 1] if i is not None else []:
            print("   ", line[:100])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("trace", help="a trace file (.h5) or a shipped workload (default size)")
    r.add_argument("--config", default="modern")
    r.add_argument("--mechanism", default="sps")
    r.add_argument("--repeat", type=int, default=3)
    p = sub.add_parser("report")
    p.add_argument("data", help="perf.data of `perf record ... run`")
    p.add_argument("--top", type=int, default=12)
    p.add_argument("--context", type=int, default=4, help="instructions shown before each")
    args = ap.parse_args()
    run(args) if args.cmd == "run" else report(args)


if __name__ == "__main__":
    main()
