#!/usr/bin/env python
"""What nvcc's optimiser does to the structure of the workloads' control flow (Wu et al. 2012).

For each workload, the structurizer's statistics (Wu et al. 2012 Table 2: branches, Cut, Forward
Copy, Backward Copy, static expansion) of the committed PTX at -O3 (``data/ptx/workloads/``, what
the emulator runs) and unoptimised (``data/ptx/workloads-O0/``: no if-conversion, every source
``if`` a branch), with the instructions that replace branches at -O3: ``selp``, ``min``/``max`` and
predicated non-branch instructions.  Where the workload follows a program of Wu et al.'s Table 2,
the paper's row (the program's PTX from 2012's nvcc, through Ocelot) is printed beside it.

    python scripts/if_conversion.py [NAME ...]      # default: every workload; Markdown on stdout

Both PTX files are made by ``scripts/build_ptx.py`` from the same kernel.cu (needs nvcc); this
script only reads them.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# Wu et al. 2012 Table 2 rows of the programs a workload follows: branches, Cut, Forward Copy,
# Backward Copy, old and new code size, static expansion (%)
TABLE2 = {
    "hotspot": ("hotspot", 19, 1, 0, 0, 237, 242, 2.11),
    "pathfinder": ("PathFinder", 9, 1, 0, 0, 136, 141, 3.68),
    "srad": ("srad_v1", 34, 0, 1, 0, 572, 595, 4.02),
    "tpacf": ("tpacf", 37, 0, 1, 0, 476, 499, 4.83),
    "particlefilter": ("particlefilter_naive", 29, 3, 5, 0, 155, 203, 30.97),
    "mummer": ("mummergpu", 92, 2, 26, 0, 1112, 2117, 90.38),
}


def counts(path: Path) -> dict:
    from simt_fast.ir import parse_ptx
    from simt_fast.ir.structurize import structurize_module

    _, st = structurize_module(parse_ptx(path))
    text = path.read_text()
    return {
        "branches": st.branch_instructions,
        "conditional": len(re.findall(r"^\s*@!?%p\w*\s+bra", text, re.M)),
        "cuts": st.cuts, "fc": st.forward_copies, "bc": st.backward_copies,
        "size": st.old_code_size, "expansion": st.static_expansion_pct,
        "selp": len(re.findall(r"^\s*selp\.", text, re.M)),
        "minmax": len(re.findall(r"^\s*(?:min|max)\.", text, re.M)),
        "predicated": len(re.findall(r"^\s*@!?%p\w*\s+(?!bra\b)\w", text, re.M)),
    }


def main(argv: list) -> int:
    from simt_fast import workloads

    names = argv or workloads.names()
    print("| workload | level | branches (conditional) | Cut / Forward Copy / Backward Copy | static insts | static expansion "
          "| selp / min,max / predicated |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for name in names:
        for level, d in (("-O3", ROOT / "data" / "ptx" / "workloads"), ("-O0", ROOT / "data" / "ptx" / "workloads-O0")):
            c = counts(d / f"{name}.ptx")
            print(f"| {name if level == '-O3' else ''} | {level} | {c['branches']} ({c['conditional']}) "
                  f"| {c['cuts']} / {c['fc']} / {c['bc']} | {c['size']} | {c['expansion']:.2f}% "
                  f"| {c['selp']} / {c['minmax']} / {c['predicated']} |")
        if name in TABLE2:
            prog, br, cut, fc, bc, old, new, exp = TABLE2[name]
            print(f"| | Wu et al. 2012 ({prog}) | {br} | {cut} / {fc} / {bc} | {old} | {exp:.2f}% | |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
