"""Accel-Sim traces: import speed next to reading the same text, simulate seconds per mechanism, and a
multi-GB ``.traceg.xz`` imported end to end with its peak memory.

    python bench/bench_accelsim.py [--ctas 300] [--repeat 3] [--trace FILE ...] [--mechanisms sps,mp-oer,dwf]
                                   [--config modern] [--reference-ctas 10] [--big-gb 2]

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
import lzma
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

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


def best_of(fn, repeat):
    """(least CPU seconds of this process over ``repeat`` calls, the last result): on a shared machine
    the CPU time a step takes moves far less than its wall time."""
    best, out = float("inf"), None
    for _ in range(repeat):
        t0 = time.process_time()
        out = fn()
        best = min(best, time.process_time() - t0)
    return best, out


# ---------------------------------------------------------------------------------------------
# Per trace: import against reading the text, simulate per mechanism
# ---------------------------------------------------------------------------------------------


def time_import(path: Path, out: Path, repeat: int) -> dict:
    t_read, (size, _) = best_of(lambda: read_text(path), repeat)
    t_import, summary = best_of(lambda: accelsim.convert(path, out), repeat)
    return {"name": path.name, "text_mb": size / 1e6, "lines": summary.warp_lines, "read_s": t_read,
            "import_s": t_import, "summary": summary}


def time_simulations(trace_file: Path, mechanisms: list, config: str, repeat: int) -> dict:
    """Warm simulate seconds per mechanism (the first of ``repeat`` runs may compile)."""
    from simt_fast.sim import simulate
    from simt_fast.sim.config import load_config
    from simt_fast.trace import Trace

    trace = Trace.load(trace_file)
    base = load_config(config)
    return {m: best_of(lambda: simulate(trace, base.replace(mechanism=m)), max(repeat, 2))[0] for m in mechanisms}


def print_speed_table(rows: list, mechanisms: list) -> None:
    print("CPU seconds of this process, least of --repeat (simulate: warm)")
    print(f"{'trace':<22} {'text MB':>8} {'lines':>9} {'read s':>7} {'import s':>9} {'MB/s':>6} {'x read':>7}"
          + "".join(f" {m + ' s':>10} {'import/' + m:>12}" for m in mechanisms))
    for r in rows:
        print(f"{r['name']:<22} {r['text_mb']:>8.1f} {r['lines']:>9,} {r['read_s']:>7.3f} {r['import_s']:>9.3f} "
              f"{r['text_mb'] / r['import_s']:>6.1f} {r['import_s'] / r['read_s']:>7.1f}"
              + "".join(f" {r['sim'][m]:>10.3f} {r['import_s'] / r['sim'][m]:>12.1f}" for m in mechanisms))


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
            row["sim"] = time_simulations(out, mechanisms, args.config, args.repeat)
            rows.append(row)
        print_speed_table(rows, mechanisms)
        (tmp / "small").mkdir()
        compare_reference(tmp / "small", args.reference_ctas, args.repeat)
    if args.big_gb > 0:
        big_import(args.big_gb)
    print(f"(this process: peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3:.0f} MB)")


if __name__ == "__main__":
    main()
