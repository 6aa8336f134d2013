"""Accel-Sim import throughput: `accelsim.convert` against reading and splitting the same file.

    python bench/bench_accelsim.py [--ctas 300] [--repeat 2]

Writes a synthetic kernel trace (CTAs of 8 warps running a loop of a global load, an FMA, a shared
store, a compare and a back branch, 1..40 iterations per thread) as `.traceg` and `.traceg.xz`,
checks that the import's thread_insts equal what the generator wrote, then times, side by side:
reading + decompressing + splitting every line (the least any text reader does) and the full
import to HDF5 (parse, path recovery, CFG, /mem, write). The ratio is the number to compare.
"""

from __future__ import annotations

import argparse
import lzma
import random
import tempfile
import time
from pathlib import Path

from simt_fast.trace import accelsim

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


def write_trace(directory: Path, n_ctas: int) -> tuple:
    rng = random.Random(1)
    parts = [HEADER.format(n=n_ctas, shmem=SHMEM_BASE)]
    thread_insts = 0
    for cta in range(n_ctas):
        parts.append(f"#BEGIN_TB\n\nthread block = {cta},0,0\n")
        for w in range(8):
            lines, insts = warp_lines([rng.randint(1, 40) for _ in range(32)], cta, w)
            thread_insts += insts
            parts.append(f"\nwarp = {w}\ninsts = {len(lines)}\n" + "\n".join(lines) + "\n")
        parts.append("\n#END_TB\n\n")
    text = "".join(parts)
    plain = directory / "kernel-1.traceg"
    plain.write_text(text)
    packed = directory / "kernel-1.traceg.xz"
    packed.write_bytes(lzma.compress(text.encode(), preset=1))
    return plain, packed, thread_insts


def read_and_split(path: Path) -> int:
    n = 0
    with open(path, "rb") as raw:
        stream = lzma.LZMAFile(raw) if path.name.endswith(".xz") else raw
        for data in stream:
            n += len(data.decode().split())
    return n


def best_of(fn, repeat):
    best, out = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ctas", type=int, default=300)
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        plain, packed, thread_insts = write_trace(Path(tmp), args.ctas)
        for path in (plain, packed):
            t_read, _ = best_of(lambda: read_and_split(path), args.repeat)
            t_import, summary = best_of(lambda: accelsim.convert(path, Path(tmp) / "out.h5"), args.repeat)
            assert summary.thread_insts == summary.mask_thread_insts + summary.predicated_off
            # every thread's last BRA is predicated off: the generator counted it among the 5 per iteration
            assert summary.thread_insts == thread_insts, (summary.thread_insts, thread_insts)
            print(f"{path.name:<20} {summary.warp_lines} lines: read+split {summary.warp_lines / t_read / 1e6:.2f} M "
                  f"lines/s, import {summary.warp_lines / t_import / 1e6:.3f} M lines/s "
                  f"(import = {t_import / t_read:.1f}x read+split)")


if __name__ == "__main__":
    main()
