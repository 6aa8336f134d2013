"""A memory-bound Accel-Sim trace of the replicated-CTA kind: every CTA is a copy of one CTA.

    python bench/replicated_trace.py OUT_DIR [--ctas 200] [--tiles 4] [--inner 32]

NVBit traces of large launches are often recorded for a few CTAs and replicated: every CTA then
loads the same lines, so the L2 slices and the interconnect that hold those lines are the machine's
bottleneck, not DRAM. This writes such a trace in Accel-Sim's format (``OUT_DIR/kernelslist.g`` and
``kernel-1.traceg``; binary version 70): a tiled matrix multiply in the shape of CUDA's
``matrixMul`` sample, CTAs of 32 x 32 threads. Per tile each warp loads one row of the A tile and
one row of the B tile (two coalesced 128-byte global loads), stores both into shared memory,
waits at a barrier, runs ``inner`` steps of (shared load of an A element, broadcast; shared load of
a B element; FMA) and waits at a second barrier; at the end each warp stores its row of C. Every CTA
has the same addresses, as a replicated trace does. The same directory feeds
``simt-fast import-accelsim`` and Accel-Sim (``run_trace.sh OUT_DIR SM7_QV100 RUN_DIR``).
"""

from __future__ import annotations

import argparse
from pathlib import Path

A_BASE = 0x7F00_0000_0000
B_BASE = 0x7F00_0100_0000
C_BASE = 0x7F00_0200_0000
SHMEM_BASE = 0x7F10_0000_0000
HEADER = """-kernel name = _Z9matrixMulPfS_S_ii
-kernel id = 1
-grid dim = ({n},1,1)
-block dim = (32,32,1)
-shmem = 8192
-nregs = 32
-binary version = 70
-cuda stream id = 0
-shmem base_addr = {shmem:#018x}
-local mem base_addr = 0x00007f2000000000
-nvbit version = 1.5.5
-accelsim tracer version = 5
-enable lineinfo = 0

#traces format = [line_num] PC mask dest_num [reg_dests] opcode src_num [reg_srcs] mem_width [adrrescompress?] [mem_addresses]

"""
FULL = "ffffffff"


def _mem(base: int, stride: int) -> str:
    """Addresses of 32 lanes, ``base + lane * stride``, in the tracer's base-stride compression (mode 1)."""
    return f"4 1 {base:#x} {stride}"


def warp_lines(warp: int, tiles: int, inner: int) -> list:
    """The trace lines of warp ``warp`` (row ``warp`` of the 32 x 32 tile)."""
    width = tiles * 32  # A is 32 x width, B width x 32: floats
    pc = 0
    out = []

    def line(text):
        nonlocal pc
        out.append(f"{pc:04x} {text} 0")  # (tracer version 5: an immediate ends the line)
        pc += 0x10

    line(f"{FULL} 1 R0 S2R 0 0")
    line(f"{FULL} 1 R1 S2R 0 0")
    line(f"{FULL} 1 R2 IMAD 2 R0 R1 0")
    loop = pc
    for t in range(tiles):
        pc = loop
        a = A_BASE + (warp * width + t * 32) * 4
        b = B_BASE + ((t * 32 + warp) * 32) * 4
        line(f"{FULL} 1 R4 LDG.E 1 R2 {_mem(a, 4)}")
        line(f"{FULL} 1 R5 LDG.E 1 R2 {_mem(b, 4)}")
        line(f"{FULL} 0 STS 2 R3 R4 {_mem(SHMEM_BASE + warp * 128, 4)}")
        line(f"{FULL} 0 STS 2 R3 R5 {_mem(SHMEM_BASE + 4096 + warp * 128, 4)}")
        line(f"{FULL} 0 BAR.SYNC 0 0")
        for k in range(inner):
            line(f"{FULL} 1 R6 LDS 1 R3 {_mem(SHMEM_BASE + (warp * 32 + k % 32) * 4, 0)}")
            line(f"{FULL} 1 R7 LDS 1 R3 {_mem(SHMEM_BASE + 4096 + (k % 32) * 128, 4)}")
            line(f"{FULL} 1 R8 FFMA 3 R6 R7 R8 0")
        line(f"{FULL} 0 BAR.SYNC 0 0")
        line(f"{FULL} 1 R9 IADD3 1 R9 0")
        line(f"{FULL} 0 ISETP.GE.AND 1 R9 0")
        again = FULL if t + 1 < tiles else "00000000"
        line(f"{again} 0 BRA 0 0")
    line(f"{FULL} 0 STG.E 2 R2 R8 {_mem(C_BASE + warp * 32 * 4, 4)}")
    line(f"{FULL} 0 EXIT 0 0")
    return out


def write(directory: Path, n_ctas: int = 200, tiles: int = 4, inner: int = 32) -> Path:
    """Write the trace directory; returns its ``kernelslist.g``."""
    directory.mkdir(parents=True, exist_ok=True)
    warps = [warp_lines(w, tiles, inner) for w in range(32)]
    body = "".join(f"\nwarp = {w}\ninsts = {len(lines)}\n" + "\n".join(lines) + "\n" for w, lines in enumerate(warps))
    with open(directory / "kernel-1.traceg", "w") as f:
        f.write(HEADER.format(n=n_ctas, shmem=SHMEM_BASE))
        for cta in range(n_ctas):
            f.write(f"#BEGIN_TB\n\nthread block = {cta},0,0\n{body}\n#END_TB\n\n")
    listing = directory / "kernelslist.g"
    listing.write_text("kernel-1.traceg\n")
    return listing


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--ctas", type=int, default=200)
    ap.add_argument("--tiles", type=int, default=4)
    ap.add_argument("--inner", type=int, default=32)
    args = ap.parse_args()
    print(write(args.out, args.ctas, args.tiles, args.inner))


if __name__ == "__main__":
    main()
