#!/usr/bin/env python3
"""Regenerate the committed PTX from the project's CUDA sources (needs nvcc; users never run it).

    python scripts/build_ptx.py            # everything
    python scripts/build_ptx.py bfs aes    # only sources whose stem matches

* Workloads: ``simt_fast/workloads/<name>/kernel.cu`` -> ``data/ptx/workloads/<name>.ptx`` (-O3, what
  the emulator runs) and ``data/ptx/workloads-O0/<name>.ptx`` (unoptimised, no if-conversion: what
  ``scripts/if_conversion.py`` compares the structurizer's transformations with).
* Parser corpus: ``data/cuda/corpus/<name>.cu`` -> ``data/ptx/corpus/<name>.O0.ptx`` and ``.O3.ptx``.
* Examples: ``data/cuda/examples/<name>.cu`` -> ``data/ptx/examples/<name>.ptx`` (-O3), the kernels
  the README's walk-through compiles itself.

"O0" is the unoptimised front end and back end (``-Xcicc -O0 -Xptxas -O0``): it keeps call
sequences, generic addressing and naive control flow, which is what a parser must survive.
The virtual architecture is the oldest CUDA 13 accepts, so the PTX stays widely loadable.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ARCH = "compute_75"
LEVELS = {"O3": ["-O3"], "O0": ["-Xcicc", "-O0", "-Xptxas", "-O0"]}


def nvcc(src: Path, out: Path, flags: list[str]) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    cmd = ["nvcc", "-ptx", f"-arch={ARCH}", *flags, "-I", str(src.parent), str(src), "-o", str(out)]
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode != 0:
        sys.exit(f"nvcc failed on {src.relative_to(ROOT)}:\n{res.stderr}")
    print(f"  {src.relative_to(ROOT)} -> {out.relative_to(ROOT)}")


def main(argv: list[str]) -> int:
    if shutil.which("nvcc") is None:
        sys.exit("nvcc was not found on PATH; this script needs the CUDA toolkit (the PTX it makes is committed)")
    wanted = set(argv)

    def selected(stem: str) -> bool:
        return not wanted or stem in wanted

    for src in sorted((ROOT / "simt_fast" / "workloads").glob("*/kernel.cu")):
        name = src.parent.name
        if selected(name):
            nvcc(src, ROOT / "data" / "ptx" / "workloads" / f"{name}.ptx", LEVELS["O3"])
            nvcc(src, ROOT / "data" / "ptx" / "workloads-O0" / f"{name}.ptx", LEVELS["O0"])
    for src in sorted((ROOT / "data" / "cuda" / "corpus").glob("*.cu")):
        if selected(src.stem):
            for level, flags in LEVELS.items():
                nvcc(src, ROOT / "data" / "ptx" / "corpus" / f"{src.stem}.{level}.ptx", flags)
    for src in sorted((ROOT / "data" / "cuda" / "examples").glob("*.cu")):
        if selected(src.stem):
            nvcc(src, ROOT / "data" / "ptx" / "examples" / f"{src.stem}.ptx", LEVELS["O3"])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
