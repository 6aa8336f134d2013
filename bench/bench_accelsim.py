"""Accel-Sim traces: import speed, simulate speed, and simt-fast side by side with Accel-Sim.

    python bench/bench_accelsim.py [--ctas 300] [--repeat 3] [--trace FILE ...] [--mechanisms sps,mp-oer,dwf]
                                   [--config modern] [--reference-ctas 10] [--big-gb 2]
    python bench/bench_accelsim.py --accelsim PATH [--size tiny] [--workloads a,b] [--mechanisms sps,mp-oer,dwf]
                                   [TRACE.h5|TRACE_DIR ...]
    python bench/bench_accelsim.py --accelsim PATH --accelsim-results EARLIER.json ...  # Accel-Sim not re-run

The second form (below, *Side by side with Accel-Sim*) needs Accel-Sim built from source
(../shared/tools/build_accelsim.sh); without ``--accelsim`` the script says how to build it and
exits 2 after the import benchmark. Both print the speed table (``print_speed_table``): per trace,
the import seconds, the simulate seconds of each mechanism and, with ``--accelsim``, Accel-Sim's
wall seconds with the ratios. The first form:

The synthetic kernel trace: CTAs of 8 warps running a loop of a global load, an FMA, a shared store, a
compare and a back branch, 1..40 iterations per thread (the import's thread_insts are checked against
the generator). ``--trace`` adds real trace files. Per trace, side by side in one run:

* reading the text: every byte read (and decompressed), newlines counted — what ``wc -l`` does, the
  least any importer does; the import (``accelsim.convert``: scan, path recovery, CFG, /mem, HDF5
  write) as MB of text per second and as a multiple of that (CPU seconds of this process, least of
  ``--repeat``: on a shared machine they move far less than wall seconds);
* the simulate seconds of each mechanism on the imported trace (warm: best of ``--repeat``), and the
  import as a multiple of each;
* on a smaller trace (``--reference-ctas``), the plain-Python reference importer
  (``accelsim_reference.load``) against the compiled one (``accelsim.load``).

``--big-gb G`` writes a synthetic trace of at least G GB of text as ``.traceg.xz`` under /tmp
(thread blocks repeating a few variants, as replicated NVBit traces do), imports it in a fresh
process, prints its time, its peak RSS next to the text's size and to a process that only loads
the importer, and deletes the files. ``--big-gb 0`` skips it.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import lzma
import random
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from simt_fast.trace import accelsim, accelsim_reference

SHMEM_BASE = 0x7F00_0000_0000
HEADER = """-kernel name = _Z5benchPfS_
-kernel id = 1
-grid dim = ({n},1,1)
-block dim = (256,1,1)
-shmem = 4096
-nregs = 16
-binary version = 70
-cuda stream id = 0
-shmem base_addr = {shmem:#018x}
-local mem base_addr = 0x00007f0100000000
-nvbit version = 1.5.5
-accelsim tracer version = 5
-enable lineinfo = 0

"""


def warp_lines(trips, cta, warp) -> tuple:
    full = (1 << 32) - 1
    out = [f"0000 {full:08x} 1 R0 S2R 0 0 0", f"0010 {full:08x} 0 BAR.SYNC 0 0 0"]
    insts = 3 * 32
    for k in range(max(trips)):
        alive = sum(1 << i for i, c in enumerate(trips) if c > k)
        again = sum(1 << i for i, c in enumerate(trips) if c > k + 1)
        lanes = [i for i in range(32) if alive >> i & 1]
        base = 0x7F5C_1B00_0000 + (cta * 256 + warp * 32 + lanes[0]) * 4 + k * 0x10000
        deltas = " ".join(str(4 * (b - a)) for a, b in zip(lanes, lanes[1:]))
        out += [f"0020 {alive:08x} 1 R1 LDG.E 1 R2 4 2 {base:#x} {deltas} 0",
                f"0030 {alive:08x} 1 R3 FFMA 3 R1 R3 R4 0 0",
                f"0040 {alive:08x} 0 STS 2 R5 R3 4 1 {SHMEM_BASE + warp * 128:#x} 4 0",
                f"0050 {alive:08x} 0 ISETP.GE.AND 1 R1 0 0",
                f"0060 {again:08x} 0 BRA 0 0 0"]
        insts += 5 * len(lanes)
    return out + [f"0070 {full:08x} 0 EXIT 0 0 0"], insts


def cta_body(cta: int, rng: random.Random) -> tuple:
    """One thread block's warps (without its '#BEGIN_TB' / 'thread block =' lines) and its thread_insts."""
    parts, thread_insts = [], 0
    for w in range(8):
        lines, insts = warp_lines([rng.randint(1, 40) for _ in range(32)], cta, w)
        thread_insts += insts
        parts.append(f"\nwarp = {w}\ninsts = {len(lines)}\n" + "\n".join(lines) + "\n")
    return "".join(parts) + "\n#END_TB\n\n", thread_insts


def cta_head(cta: int) -> str:
    return f"#BEGIN_TB\n\nthread block = {cta},0,0\n"


def write_trace(directory: Path, n_ctas: int) -> tuple:
    rng = random.Random(1)
    parts = [HEADER.format(n=n_ctas, shmem=SHMEM_BASE)]
    thread_insts = 0
    for cta in range(n_ctas):
        body, insts = cta_body(cta, rng)
        parts += [cta_head(cta), body]
        thread_insts += insts
    text = "".join(parts)
    plain = directory / "kernel-1.traceg"
    plain.write_text(text)
    packed = directory / "kernel-1.traceg.xz"
    packed.write_bytes(lzma.compress(text.encode(), preset=1))
    return plain, packed, thread_insts


def read_text(path: Path) -> tuple:
    """(bytes of text, lines): every byte read, decompressed for .xz, newlines counted (``wc -l``)."""
    size = lines = 0
    with open(path, "rb") as raw:
        stream = lzma.LZMAFile(raw) if path.name.endswith(".xz") else raw
        while chunk := stream.read(1 << 22):
            size += len(chunk)
            lines += chunk.count(b"\n")
    return size, lines


def best_of(fn, repeat, clock=time.process_time):
    """(least seconds over ``repeat`` calls, the last result). CPU seconds of this process by default:
    on a shared machine the CPU time a step takes moves far less than its wall time."""
    best, out = float("inf"), None
    for _ in range(repeat):
        t0 = clock()
        out = fn()
        best = min(best, clock() - t0)
    return best, out


# ---------------------------------------------------------------------------------------------
# Per trace: import against reading the text, simulate per mechanism
# ---------------------------------------------------------------------------------------------


def time_import(path: Path, out: Path, repeat: int) -> dict:
    t_read, (size, _) = best_of(lambda: read_text(path), repeat)
    t_import, summary = best_of(lambda: accelsim.convert(path, out), repeat)
    return {"name": path.name, "text_mb": size / 1e6, "lines": summary.warp_lines, "read_s": t_read,
            "import_s": t_import, "summary": summary}


def time_simulations(trace_file: Path, mechanisms: list, config, repeat: int, clock=time.process_time) -> dict:
    """Warm simulate seconds per mechanism on ``config`` (a SimConfig; the first run may compile)."""
    from simt_fast.sim import simulate
    from simt_fast.trace import Trace

    trace = Trace.load(trace_file)
    simulate(trace, config.replace(mechanism=mechanisms[0]))  # loads (or compiles) the kernel: not timed
    return {m: best_of(lambda: simulate(trace, config.replace(mechanism=m)), repeat, clock)[0] for m in mechanisms}


def print_speed_table(rows: list, mechanisms: list, seconds: str) -> None:
    """The speed table: per trace, the import (MB/s and x reading the text, where timed), the simulate
    seconds of each mechanism and, where a row has Accel-Sim's wall seconds, the first answer
    (import + ``simt-fast run``, each a fresh process) and every mechanism as fractions of it."""
    def cell(r, key, fmt):
        return format(r[key], fmt) if r.get(key) is not None else "-"

    columns = [  # (title, cell, shown when some row has this key)
        ("trace", lambda r: r["name"], "name"),
        ("text MB", lambda r: cell(r, "text_mb", ".1f"), "text_mb"),
        ("lines", lambda r: cell(r, "lines", ","), "lines"),
        ("read s", lambda r: cell(r, "read_s", ".3f"), "read_s"),
        ("import s", lambda r: cell(r, "import_s", ".3f"), "import_s"),
        ("MB/s", lambda r: f"{r['text_mb'] / r['import_s']:.1f}" if r.get("text_mb") and r.get("import_s") else "-",
         "text_mb"),
        ("x read", lambda r: f"{r['import_s'] / r['read_s']:.1f}" if r.get("read_s") else "-", "read_s"),
        ("run s", lambda r: cell(r, "run_s", ".2f"), "run_s"),
        ("Accel-Sim s", lambda r: cell(r, "accelsim_s", ".1f"), "accelsim_s"),
        ("Accel-Sim / (import + run)",
         lambda r: f"{r['accelsim_s'] / ((r.get('import_s') or 0) + r['run_s']):,.0f}x", "accelsim_s"),
        ("run kernelslist.g s", lambda r: cell(r, "direct_s", ".2f"), "direct_s"),
        ("Accel-Sim / it", lambda r: f"{r['accelsim_s'] / r['direct_s']:,.0f}x" if r.get("direct_s") else "-",
         "direct_s"),
    ]
    for m in mechanisms:
        columns.append((f"{m} s", lambda r, m=m: f"{r['sim'][m]:.3f}", "sim"))
        columns.append((f"Accel-Sim / {m}", lambda r, m=m: f"{r['accelsim_s'] / r['sim'][m]:,.0f}x", "accelsim_s"))
        columns.append((f"import / {m}", lambda r, m=m: f"{r['import_s'] / r['sim'][m]:.1f}" if r.get("import_s")
                        else "-", "read_s"))
    columns = [c for c in columns if any(r.get(c[2]) is not None for r in rows)]
    print(f"\n{seconds}")
    print("| " + " | ".join(title for title, _, _ in columns) + " |\n|" + "---|" * len(columns))
    for r in rows:
        print("| " + " | ".join(fn(r) for _, fn, _ in columns) + " |")


def compare_reference(directory: Path, n_ctas: int, repeat: int) -> None:
    """The compiled import against the plain-Python reference on one small trace (same Trace)."""
    plain, _, _ = write_trace(directory, n_ctas)
    t_ref, ref = best_of(lambda: accelsim_reference.load(plain), 1)
    t_fast, fast = best_of(lambda: accelsim.load(plain), repeat)
    assert ref.digest() == fast.digest()
    print(f"reference importer on {plain.stat().st_size / 1e6:.1f} MB ({n_ctas} CTAs): {t_ref:.2f} s, compiled "
          f"{t_fast:.3f} s ({t_ref / t_fast:.0f}x), the same trace")


# ---------------------------------------------------------------------------------------------
# A multi-GB .traceg.xz end to end
# ---------------------------------------------------------------------------------------------

# The child's peak RSS is VmHWM, its own address space's high-water mark (getrusage's ru_maxrss
# would include its parent's, which Linux carries across fork and exec).
_IMPORT_IN_CHILD = """
import sys, time
from simt_fast.trace import accelsim
def peak_rss():
    return next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM:"))
if sys.argv[1] == "-":  # only load the importer and its compiled kernels
    accelsim.load(sys.argv[3])
    print(0, 0, 0, 0, peak_rss())
else:
    t0, c0 = time.perf_counter(), time.process_time()
    s = accelsim.convert(sys.argv[1], sys.argv[2])
    print(time.perf_counter() - t0, time.process_time() - c0, s.warp_lines, s.thread_insts, peak_rss())
"""


def write_big_xz(path: Path, min_bytes: int, variants: int = 16) -> tuple:
    """A trace of at least ``min_bytes`` of text whose thread blocks repeat ``variants`` bodies."""
    rng = random.Random(2)
    bodies = [cta_body(v, rng) for v in range(variants)]
    per_cta = sum(len(b) for b, _ in bodies) / variants + 30
    n_ctas = int(min_bytes / per_cta) + 1
    encoded = [b.encode() for b, _ in bodies]
    with lzma.open(path, "wb", preset=0) as f:
        size = f.write(HEADER.format(n=n_ctas, shmem=SHMEM_BASE).encode())
        for cta in range(n_ctas):
            size += f.write(cta_head(cta).encode()) + f.write(encoded[cta % variants])
    return size, n_ctas, sum(bodies[c % variants][1] for c in range(n_ctas))


def big_import(gb: float) -> None:
    tmp = Path(tempfile.mkdtemp(prefix="simt-fast-bench-accelsim-", dir="/tmp"))
    try:
        path = tmp / "kernel-1.traceg.xz"
        t0 = time.perf_counter()
        size, n_ctas, thread_insts = write_big_xz(path, int(gb * 1e9))
        print(f"big trace: {size / 1e9:.2f} GB of text in {n_ctas} CTAs, {path.stat().st_size / 1e6:.0f} MB as "
              f".traceg.xz (written in {time.perf_counter() - t0:.0f} s)")
        t_read, _ = best_of(lambda: read_text(path), 1)
        (tmp / "small").mkdir()
        small, _, _ = write_trace(tmp / "small", 2)
        run = [sys.executable, "-c", _IMPORT_IN_CHILD]
        rss_idle = int(subprocess.run(run + ["-", "", str(small)], capture_output=True, text=True,
                                      check=True).stdout.split()[-1]) * 1024
        out = subprocess.run(run + [str(path), str(tmp / "big.h5")], capture_output=True, text=True, check=True)
        wall, seconds, lines, imported_insts, rss = out.stdout.split()
        assert int(imported_insts) == thread_insts, (imported_insts, thread_insts)
        seconds, rss = float(seconds), int(rss) * 1024  # VmHWM is in KiB
        print(f"  read + decompress {t_read:.1f} s of CPU ({size / t_read / 1e6:.0f} MB/s); import {seconds:.1f} s of "
              f"CPU ({size / seconds / 1e6:.0f} MB/s, {seconds / t_read:.1f}x reading; {float(wall):.0f} s wall), "
              f"{int(lines):,} lines, file {(tmp / 'big.h5').stat().st_size / 1e6:.0f} MB")
        print(f"  peak RSS {rss / 1e6:.0f} MB = {rss / size:.3f} of the text ({rss_idle / 1e6:.0f} MB for a process "
              f"that only loads the importer)")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    from simt_fast.sim.config import load_config

    ap = argparse.ArgumentParser()
    ap.add_argument("--ctas", type=int, default=300)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--trace", type=Path, action="append", default=[], help="a .traceg / .traceg.xz to time too")
    ap.add_argument("--mechanisms", default="sps,mp-oer,dwf")
    ap.add_argument("--config", default="modern")
    ap.add_argument("--reference-ctas", type=int, default=10)
    ap.add_argument("--big-gb", type=float, default=2.0)
    args = ap.parse_args()
    mechanisms = args.mechanisms.split(",")
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        plain, packed, thread_insts = write_trace(tmp, args.ctas)
        rows = []
        for path in [plain, packed, *args.trace]:
            out = tmp / (path.name + ".h5")
            row = time_import(path, out, args.repeat)
            if path in (plain, packed):  # every thread's last BRA is predicated off: counted among the 5 per loop
                assert row["summary"].thread_insts == thread_insts, (row["summary"].thread_insts, thread_insts)
            row["sim"] = time_simulations(out, mechanisms, load_config(args.config), args.repeat)
            rows.append(row)
        print_speed_table(rows, mechanisms, "CPU seconds of this process, least of --repeat (simulate: warm)")
        (tmp / "small").mkdir()
        compare_reference(tmp / "small", args.reference_ctas, args.repeat)
    if args.big_gb > 0:
        big_import(args.big_gb)
    print(f"(this process: peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3:.0f} MB)")


# ---------------------------------------------------------------------------------------------
# Side by side with Accel-Sim
#
# Every shipped workload (size `tiny` by default: Accel-Sim replays about 30 K warp instructions a
# second on an idle 2-core machine and 1-3 K under other jobs' load, so the 20 tiny launches, 1.5 M
# warp instructions, take 1-21 minutes; `--size default`, 55 M, takes hours) is traced by the emulator (the
# sweep's cache), exported with `accelsim.export`, run by Accel-Sim on its V100 config and by
# simt-fast on `modern` under `sps` with Accel-Sim's kernel launch latency, read from that config.
# Trace files (.h5) and Accel-Sim trace directories given on the command line join the table (a
# directory's kernels are imported for simt-fast, one row per kernel). After the cycles table, the
# speed table (`speed_rows_of`): a user's first answer and every --mechanisms against Accel-Sim's
# wall seconds of the same run.
# ---------------------------------------------------------------------------------------------

HOW_TO_BUILD = """side by side with Accel-Sim needs --accelsim PATH, the install directory of an Accel-Sim built from source:
    ../shared/tools/build_accelsim.sh          # about 4 minutes on 2 cores; installs into ../peers/accel-sim
    python bench/bench_accelsim.py --accelsim ../peers/accel-sim
(../shared/tools/README.md says what it needs; Accel-Sim is a development tool, never a dependency of simt-fast)"""

from simt_fast.trace.accelsim_export import SHMEM_BASE as WINDOW_SHARED  # noqa: E402  (the export's shared window)

ACCELSIM_CONFIG = "SM7_QV100"  # Accel-Sim's V100
SIMT_FAST_CONFIG = "modern"  # simt-fast's V100-class preset (data/configs/modern.toml cites SM7_QV100)
# Accel-Sim's statistics kept per run (the docs' causes come from them), by the line that prints them
ACCELSIM_STATS = {
    "gpu_sim_cycle": r"^gpu_sim_cycle = (\d+)", "gpu_sim_insn": r"^gpu_sim_insn = (\d+)",
    "l1d_miss_rate": r"L1D_total_cache_miss_rate = ([\d.]+)", "l2_miss_rate": r"L2_total_cache_miss_rate = ([\d.]+)",
    "l2_accesses": r"L2_total_cache_accesses = (\d+)", "avg_mem_latency": r"^averagemflatency = (\d+)",
    "dram_full_stalls": r"^gpu_stall_dramfull = (\d+)", "shd_mem_stalls": r"^gpgpu_n_stall_shd_mem = (\d+)",
    "idle_warp_cycles": r"W0_Idle:(\d+)", "scoreboard_warp_cycles": r"W0_Scoreboard:(\d+)",
    "bank_conflict_stalls": r"gpgpu_stall_shd_mem\[s_mem\]\[bk_conf\] = (\d+)",
    "ctas": r"^gpu_tot_issued_cta = (\d+)",
}


def accelsim_config_value(root: Path, option: str) -> int:
    """An integer option of Accel-Sim's tested config, read from its gpgpusim.config line."""
    cfg = root / "accel-sim-framework/gpu-simulator/gpgpu-sim/configs/tested-cfgs" / ACCELSIM_CONFIG / "gpgpusim.config"
    m = re.search(rf"^{re.escape(option)}\s+(\d+)", cfg.read_text(), re.M)
    if not m:
        raise SystemExit(f"error: {cfg} has no '{option}' line")
    return int(m.group(1))


def run_accelsim(root: Path, trace_dir: Path, run_dir: Path) -> tuple:
    """Accel-Sim on one trace directory: (per-kernel stats dicts, wall seconds, log path)."""
    log = run_dir.with_suffix(".log")
    t0 = time.perf_counter()
    with open(log, "w") as out:
        rc = subprocess.run([str(root / "bin/run_trace.sh"), str(trace_dir), ACCELSIM_CONFIG, str(run_dir)],
                            stdout=out, stderr=subprocess.STDOUT).returncode
    seconds = time.perf_counter() - t0
    text = log.read_text(errors="replace")
    if rc != 0 or "gpu_sim_cycle" not in text:
        tail = [ln for ln in text.splitlines() if "ERROR" in ln or "ssert" in ln][-1:] or text.splitlines()[-1:]
        raise SystemExit(f"error: Accel-Sim failed on {trace_dir} (exit {rc}): {tail[0] if tail else ''} (log {log})")
    kernels = []
    for block in text.split("kernel_launch_uid = ")[1:]:
        found = {}
        for name, pattern in ACCELSIM_STATS.items():
            m = re.search(pattern, block, re.M)
            found[name] = float(m.group(1)) if m and "." in m.group(1) else int(m.group(1)) if m else None
        kernels.append(found)
    return kernels, seconds, log


def trace_digest(trace_dir: Path) -> str:
    """sha256 of an Accel-Sim trace directory's ``kernelslist.g`` and kernel trace files (names and bytes)."""
    h = hashlib.sha256()
    for f in sorted(trace_dir.iterdir()):
        if f.name == "kernelslist.g" or f.name.endswith((".traceg", ".traceg.xz")):
            h.update(f.name.encode() + b"\0")
            with open(f, "rb") as data:
                for chunk in iter(lambda: data.read(1 << 20), b""):
                    h.update(chunk)
    return h.hexdigest()


def previous_accelsim(path: Path) -> dict:
    """Accel-Sim's statistics of an earlier run of this bench (its ``--json``), by row group: name ->
    (trace digest, per-kernel stats, wall seconds, log). Rows written before digests were recorded
    take the digest of the trace directory that run kept (``--keep``: beside its logs), read now,
    before this run exports anything."""
    groups = {}
    for row in json.loads(path.read_text()):
        groups.setdefault(row["name"].split("/")[0], []).append(row)
    out = {}
    for name, rows in groups.items():
        digest = rows[0].get("trace_digest")
        kept = Path(rows[0]["log"]).parent / name
        if digest is None and (kept / "kernelslist.g").is_file():
            digest = trace_digest(kept)
        if digest is not None:
            out[name] = (digest, [r["accelsim"] for r in rows], sum(r["accelsim_seconds"] for r in rows),
                         Path(rows[0]["log"]))
    return out


def simt_fast_run(trace_file: Path, config) -> tuple:
    """(stats, wall seconds) of loading the trace file and simulating it, with warm machine code."""
    from simt_fast.sim import simulate
    from simt_fast.trace import Trace

    simulate(Trace.load(trace_file), config)  # loads (or compiles) the kernel: not what is timed
    t0 = time.perf_counter()
    stats = simulate(Trace.load(trace_file), config)
    return stats, time.perf_counter() - t0


def _sources(args, work: Path) -> list:
    """(name, simt-fast trace files, Accel-Sim trace dir, export summary or None) per row group."""
    from simt_fast import workloads
    from simt_fast.sweep.spec import TraceSource
    from simt_fast.sweep.traces import resolve_traces
    from simt_fast.trace import accelsim

    names = args.workloads.split(",") if args.workloads else (workloads.names() if not args.inputs else [])
    items = [(n, resolve_traces([TraceSource(name=n, workload=n, size=args.size)])[n][0]) for n in names]
    items += [(Path(p).stem, Path(p)) for p in args.inputs if Path(p).suffix == ".h5"]
    out = []
    for name, path in items:
        summary = accelsim.export(path, work / name)
        out.append((name, [Path(path)], work / name, summary))
    for p in args.inputs:
        if Path(p).suffix == ".h5":
            continue
        listing = Path(p) / "kernelslist.g" if Path(p).is_dir() else Path(p)
        imported = work / f"{listing.parent.name}-imported"
        summaries = accelsim.import_directory(listing, imported)
        out.append((listing.parent.name, [Path(s.out) for s in summaries], listing.parent, None))
    return out


def compare(args) -> int:
    from simt_fast.sim.config import load_config

    root = Path(args.accelsim).resolve()
    if not (root / "bin/run_trace.sh").is_file():
        print(f"error: {root} holds no bin/run_trace.sh, so it is not an Accel-Sim install\n{HOW_TO_BUILD}",
              file=sys.stderr)
        return 2
    latency = accelsim_config_value(root, "-gpgpu_kernel_launch_latency")
    config = load_config(SIMT_FAST_CONFIG, {"mechanism": "sps", "kernel_launch_latency": latency})
    previous = previous_accelsim(Path(args.accelsim_results)) if args.accelsim_results else {}
    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="simt-fast-vs-accelsim-"))
    work.mkdir(parents=True, exist_ok=True)
    rows, speed_rows = [], []
    mechanisms = args.mechanisms.split(",")
    print(f"Accel-Sim {ACCELSIM_CONFIG} vs simt-fast {SIMT_FAST_CONFIG} (sps, kernel_launch_latency {latency}, "
          f"Accel-Sim's -gpgpu_kernel_launch_latency); workloads at size {args.size}; work dir {work}", flush=True)
    try:
        for name, trace_files, trace_dir, summary in _sources(args, work):
            digest = trace_digest(trace_dir)
            reused = name in previous and previous[name][0] == digest
            if reused:
                _, kernels, accel_seconds, log = previous[name]
                print(f"{name}: Accel-Sim's statistics and wall time from {args.accelsim_results} (trace sha256 "
                      f"{digest[:12]}, the same as that run's), not run again", flush=True)
            else:
                if args.accelsim_results:
                    print(f"{name}: not in {args.accelsim_results} or its trace differs: Accel-Sim runs", flush=True)
                kernels, accel_seconds, log = run_accelsim(root, trace_dir, work / f"{name}-run")
                # speed ratios only where Accel-Sim ran in this run, on this machine's load
                speed_rows += speed_rows_of(name, trace_files, trace_dir if summary is None else None,
                                            accel_seconds, mechanisms, config, args.repeat, work)
            for k, (trace_file, a) in enumerate(zip(trace_files, kernels)):
                stats, simt_seconds = simt_fast_run(trace_file, config)
                row = dict(name=name if len(trace_files) == 1 else f"{name}/{k + 1}",
                           accelsim_cycles=a["gpu_sim_cycle"], simt_fast_cycles=int(stats.cycles),
                           accelsim_seconds=accel_seconds / len(trace_files), simt_fast_seconds=simt_seconds,
                           gpu_sim_insn=a["gpu_sim_insn"], accelsim=a, simt_fast=stats.to_dict(), log=str(log),
                           trace_digest=digest, accelsim_from=args.accelsim_results if reused else "this run")
                if summary is not None:
                    row.update(mask_popcounts=summary.mask_thread_insts,
                               thread_insts_less_guard_false=summary.ipdom_thread_insts - summary.guard_false,
                               warp_lines=summary.warp_lines)
                rows.append(row)
                print(_row_text(row), flush=True)
    finally:
        if args.json:
            Path(args.json).write_text(json.dumps(rows, indent=1, default=str))
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    _print_table(rows, latency)
    print_speed_table(speed_rows, mechanisms, SPEED_SECONDS)
    bad = [r["name"] for r in rows if "mask_popcounts" in r and not
           r["gpu_sim_insn"] == r["mask_popcounts"] == r["thread_insts_less_guard_false"]]
    if bad:
        print(f"error: instruction counts disagree for {', '.join(bad)}", file=sys.stderr)
        return 1
    return 0


SPEED_SECONDS = ("wall seconds, measured in this run: import and run = `simt-fast import-accelsim` and `simt-fast run "
                 "-m sps` (each a fresh process, warm numba cache), run kernelslist.g = `simt-fast run` on the "
                 "Accel-Sim directory (one process: the import in memory, then sps; directories of one kernel), a "
                 "mechanism = simulate() on the loaded trace (warm, least of --repeat); Accel-Sim's wall spread "
                 "evenly over a directory's kernels")


def speed_rows_of(name: str, trace_files: list, accelsim_dir, accel_seconds: float, mechanisms: list, config,
                  repeat: int, work: Path) -> list:
    """Speed-table rows of one Accel-Sim run: a user's first answer (the directory's import, when
    ``accelsim_dir`` is an Accel-Sim trace directory, then ``simt-fast run``, each a fresh process) and
    the simulate seconds of every mechanism, next to Accel-Sim's wall seconds."""
    cli = str(Path(sys.executable).with_name("simt-fast"))
    import_seconds = None
    if accelsim_dir is not None:
        t0 = time.perf_counter()
        subprocess.run([cli, "import-accelsim", str(Path(accelsim_dir) / "kernelslist.g"), "-o",
                        str(work / f"{name}-first-import")], check=True, capture_output=True)
        import_seconds = (time.perf_counter() - t0) / len(trace_files)
    run_args = ["-m", "sps", "-c", SIMT_FAST_CONFIG, "--set", f"kernel_launch_latency={config.kernel_launch_latency}"]
    direct_seconds = None
    if accelsim_dir is not None and len(trace_files) == 1:  # `simt-fast run kernelslist.g`: one process
        t0 = time.perf_counter()
        subprocess.run([cli, "run", str(Path(accelsim_dir) / "kernelslist.g"), *run_args], check=True,
                       capture_output=True)
        direct_seconds = time.perf_counter() - t0
    rows = []
    for k, trace_file in enumerate(trace_files):
        t0 = time.perf_counter()
        subprocess.run([cli, "run", str(trace_file), *run_args], check=True, capture_output=True)
        rows.append(dict(name=name if len(trace_files) == 1 else f"{name}/{k + 1}", import_s=import_seconds,
                         run_s=time.perf_counter() - t0, direct_s=direct_seconds,
                         accelsim_s=accel_seconds / len(trace_files),
                         sim=time_simulations(trace_file, mechanisms, config, repeat, time.perf_counter)))
    return rows


def _row_text(r: dict) -> str:
    counts = ""
    if "mask_popcounts" in r:
        counts = (f"  insts: Accel-Sim {r['gpu_sim_insn']}, export popcounts {r['mask_popcounts']}, "
                  f"thread_insts - guard false {r['thread_insts_less_guard_false']}")
    return (f"{r['name']:<16} Accel-Sim {r['accelsim_cycles']:>9} cycles {r['accelsim_seconds']:7.1f} s | simt-fast "
            f"{r['simt_fast_cycles']:>9} cycles {r['simt_fast_seconds']:6.2f} s{counts}")


def _print_table(rows: list, latency: int) -> None:
    print(f"\n| workload | Accel-Sim cycles | simt-fast cycles | simt-fast / Accel-Sim | less the launch latency "
          f"| Accel-Sim s | simt-fast s | speed ratio |\n|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        ratio = r["simt_fast_cycles"] / r["accelsim_cycles"]
        own = (r["simt_fast_cycles"] - latency) / (r["accelsim_cycles"] - latency)
        print(f"| {r['name']} | {r['accelsim_cycles']:,} | {r['simt_fast_cycles']:,} | {ratio:.2f} | {own:.2f} | "
              f"{r['accelsim_seconds']:.1f} | {r['simt_fast_seconds']:.2f} | "
              + (f"{r['accelsim_seconds'] / r['simt_fast_seconds']:,.0f}x |"
                 if r.get("accelsim_from", "this run") == "this run" else "(Accel-Sim: earlier run) |"))
    if len(rows) < 2:
        return
    a = np.array([r["accelsim_cycles"] for r in rows], float)
    s = np.array([r["simt_fast_cycles"] for r in rows], float)
    for what, x, y in (("cycles (both with the launch latency)", a, s),
                       ("cycles less the launch latency", a - latency, s - latency)):
        err = np.abs(y / x - 1)
        worst = int(np.argmax(err))
        r = f"{np.corrcoef(x, y)[0, 1]:.3f}" if x.std() and y.std() else "undefined (no spread)"
        print(f"{what}: Pearson r = {r} over {len(rows)} kernels; "
              f"|simt-fast / Accel-Sim - 1|: median {np.median(err):.1%}, largest {err[worst]:.1%} "
              f"({rows[worst]['name']}); {int((err > 0.25).sum())} more than 25% apart")
    accel, simt = sum(r["accelsim_seconds"] for r in rows), sum(r["simt_fast_seconds"] for r in rows)
    earlier = sorted({r["accelsim_from"] for r in rows if r.get("accelsim_from", "this run") != "this run"})
    print(f"wall time: Accel-Sim {accel:.0f} s, simt-fast {simt:.1f} s: simt-fast {accel / simt:,.0f}x faster " +
          (f"(Accel-Sim's wall times of {sum(r.get('accelsim_from', 'this run') != 'this run' for r in rows)} "
           f"kernels from {', '.join(earlier)}: not side by side)" if earlier else "(measured side by side in this run)"))


# Basic latencies of both machines, measured on the same one-warp kernels: a chain of N instructions
# each reading the previous one's result (dependent latency), or N independent ones (issue rate).
# The difference of two chain lengths cancels the launch, the first fetch and the exit.
LATENCY_KERNELS = {  # name: (opcode, memory width or 0, address of line k (lane 0; lanes 4 bytes apart), dependent)
    "IADD3 (int), dependent": ("IADD3", 0, None, True),
    "IADD3 (int), independent": ("IADD3", 0, None, False),
    "FFMA (fp32), dependent": ("FFMA", 0, None, True),
    "DFMA (fp64), dependent": ("DFMA", 0, None, True),
    "DFMA (fp64), independent": ("DFMA", 0, None, False),
    "MUFU.RCP (sfu), dependent": ("MUFU.RCP", 0, None, True),
    "BRA, not taken, independent": ("BRA", 0, None, False),
    "LDS (shared), dependent": ("LDS", 4, lambda k: WINDOW_SHARED, True),
    "LDG, same line (L1 hit), dependent": ("LDG.E", 4, lambda k: 0x7F5C_1B00_0000, True),
    "LDG, new line each (cold: DRAM), dependent": ("LDG.E", 4, lambda k: 0x7F5C_1B00_0000 + 4096 * k, True),
}


def latency_trace(opcode: str, width: int, address, dependent: bool, n: int) -> str:
    """One CTA of one 32-thread warp: n instructions of ``opcode``, then EXIT (Accel-Sim text)."""
    full = (1 << 32) - 1
    lines = []
    for k in range(n):
        dst, src = ("R1", "R1") if dependent else (f"R{2 + k % 8}", "R0")
        mem = f"{width} 1 {address(k):#x} 4 " if width else "0 "
        if opcode == "BRA":  # a guard false in every lane: the warp goes on to the next instruction
            lines.append(f"{16 * k:04x} 00000000 0 BRA 0 0 0 ")
            continue
        lines.append(f"{16 * k:04x} {full:08x} 1 {dst} {opcode} 1 {src} {mem}0 ")
    lines.append(f"{16 * n:04x} {full:08x} 0 EXIT 0 0 0 ")
    head = ("-kernel name = latency\n-kernel id = 1\n-grid dim = (1,1,1)\n-block dim = (32,1,1)\n-shmem = 128\n"
            f"-nregs = 16\n-binary version = 70\n-cuda stream id = 0\n-shmem base_addr = {WINDOW_SHARED:#018x}\n"
            "-local mem base_addr = 0x00007f0100000000\n-accelsim tracer version = 4\n-enable lineinfo = 0\n\n")
    return (head + "#traces format = [line_num] PC mask dest_num [reg_dests] opcode src_num [reg_srcs] mem_width "
            "[adrrescompress?] [mem_addresses] immediate\n\n#BEGIN_TB\n\nthread block = 0,0,0\n\nwarp = 0\n"
            f"insts = {len(lines)}\n" + "\n".join(lines) + "\n\n#END_TB\n")


def latencies(root: Path, config, work: Path, n=(64, 320)) -> None:
    """Cycles per instruction of every LATENCY_KERNELS chain in Accel-Sim and simt-fast."""
    from simt_fast.sim import simulate
    from simt_fast.trace import accelsim

    print(f"\n| one warp, per instruction | Accel-Sim cycles | simt-fast cycles |\n|---|---:|---:|")
    for name, (opcode, width, address, dependent) in LATENCY_KERNELS.items():
        cycles = {}
        for count in n:
            d = work / f"lat-{opcode}-{width}-{dependent}-{count}-{abs(hash(name)) % 1000}"
            d.mkdir(parents=True, exist_ok=True)
            (d / "kernel-1.traceg").write_text(latency_trace(opcode, width, address, dependent, count))
            (d / "kernelslist.g").write_text("kernel-1.traceg\n")
            kernels, _, _ = run_accelsim(root, d, d.with_name(d.name + "-run"))
            cycles[count] = (kernels[0]["gpu_sim_cycle"], simulate(accelsim.load(d / "kernel-1.traceg"), config).cycles)
        (a0, s0), (a1, s1) = cycles[n[0]], cycles[n[1]]
        print(f"| {name} | {(a1 - a0) / (n[1] - n[0]):.1f} | {(s1 - s0) / (n[1] - n[0]):.1f} |", flush=True)


def compare_main() -> int:
    ap = argparse.ArgumentParser(description="simt-fast side by side with Accel-Sim (see the module doc)")
    ap.add_argument("--accelsim", required=True, help="Accel-Sim install directory (holds bin/run_trace.sh)")
    ap.add_argument("--size", default="tiny", choices=["tiny", "default"], help="workload size (default tiny)")
    ap.add_argument("--workloads", default="", help="comma-separated subset of the shipped workloads")
    ap.add_argument("--keep", default="", help="keep the exported traces and Accel-Sim logs in this directory")
    ap.add_argument("--json", default="", help="write every row, with both simulators' statistics, to this file")
    ap.add_argument("--accelsim-results", default="", metavar="FILE.json",
                    help="take Accel-Sim's statistics from an earlier run's --json wherever the trace directory "
                         "is byte for byte the same (sha256), and run only simt-fast there")
    ap.add_argument("--mechanisms", default="sps,mp-oer,dwf", help="mechanisms of the speed table")
    ap.add_argument("--repeat", type=int, default=2, help="simulate runs per mechanism in the speed table (least)")
    ap.add_argument("--latencies", action="store_true",
                    help="only measure both machines' basic latencies on one-warp chains (a minute)")
    ap.add_argument("inputs", nargs="*", help="more trace files (.h5) or Accel-Sim trace directories")
    args = ap.parse_args()
    if args.latencies:
        return latency_main(args)
    return compare(args)


def latency_main(args) -> int:
    from simt_fast.sim.config import load_config

    root = Path(args.accelsim).resolve()
    latency = accelsim_config_value(root, "-gpgpu_kernel_launch_latency")
    config = load_config(SIMT_FAST_CONFIG, {"mechanism": "sps", "kernel_launch_latency": latency})
    with tempfile.TemporaryDirectory(prefix="simt-fast-latencies-") as tmp:
        latencies(root, config, Path(args.keep) if args.keep else Path(tmp))
    return 0


if __name__ == "__main__":
    if any(a == "--accelsim" or a.startswith("--accelsim=") for a in sys.argv[1:]):
        sys.exit(compare_main())
    print(HOW_TO_BUILD, file=sys.stderr)
    print("(running the import benchmark only)", file=sys.stderr)
    main()
    sys.exit(2)
