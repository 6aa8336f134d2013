#!/usr/bin/env python
"""Re-make the published-vs-measured tables of docs/fidelity.md from a results file of the main job.

    simt-fast sweep data/sweeps/default.toml -o results.h5
    python scripts/fidelity_table.py results.h5 [--no-write]

The tables (one per paper: every claim of data/published/ whose study is in the results, the
paper's value, the measured one, their ratio) replace the block between ``<!-- fidelity:begin -->``
and ``<!-- fidelity:end -->`` in docs/fidelity.md; the prose around it is kept. The numbers are
the report's own table (simt_fast.report.claims), so the doc and `simt-fast report` agree.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "fidelity.md"
BEGIN, END = "<!-- fidelity:begin -->", "<!-- fidelity:end -->"


def fmt(v: float) -> str:
    import math

    if not math.isfinite(v):
        return "–"
    return f"{v:.0f}" if abs(v) >= 100 else f"{v:.1f}" if abs(v) >= 10 else f"{v:.3f}"


def tables(results_path: Path) -> str:
    import math

    from simt_fast.report import claims, published

    table = claims(results_path)  # the report's own table (simt_fast.report.claims)
    out = []
    for paper in published.load_published().papers:
        mine = table[table["paper"] == paper.id]
        if mine.empty:
            continue
        out += [f"### {paper.title}", "", f"{paper.authors}, {paper.venue}. {paper.benchmark_map}", "",
                "| id | where | claim | published | simt-fast | ratio | |", "|---|---|---|---:|---:|---:|---|"]
        for r in mine.itertuples():
            flag = "not measured" if not math.isfinite(r.measured) else \
                ("**> 10% apart**" if published.differs(r.measured, r.published) else "")
            out.append(f"| `{r.claim}` | {r.where} | {r.what} | {fmt(r.published)} | {fmt(r.measured)} | "
                       f"{fmt(r.ratio)} | {flag} |")
        out.append("")
    return "\n".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results", type=Path)
    ap.add_argument("--no-write", action="store_true", help="print the Markdown instead of updating the doc")
    a = ap.parse_args(argv)
    md = tables(a.results)
    if a.no_write:
        print(md)
        return 0
    text = DOC.read_text()
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    DOC.write_text(f"{head}{BEGIN}\n{md}\n{END}{tail}")
    print(f"wrote {DOC.relative_to(ROOT)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
