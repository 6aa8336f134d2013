#!/usr/bin/env python
"""Re-make the published-vs-measured tables of docs/fidelity.md from a results file of the main job.

    simt-fast sweep data/sweeps/default.toml -o results.h5
    python scripts/fidelity_table.py results.h5 [--no-write]

The tables (one per paper: every claim of data/published/ whose study is in the results, the
paper's value, the measured one, their ratio) replace the block between ``<!-- fidelity:begin -->``
and ``<!-- fidelity:end -->`` in docs/fidelity.md; the per-workload numbers behind the compiler
claims (every analysis metric a claim names, for every workload a claim names) replace the block
between ``<!-- per-workload:begin -->`` and ``<!-- per-workload:end -->``; the prose around them is
kept. The claim tables are the report's own table (simt_fast.report.claims) and the per-workload
numbers come from the report's code (simt_fast.report.published), so the doc and `simt-fast report`
agree.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "fidelity.md"
BEGIN, END = "<!-- fidelity:begin -->", "<!-- fidelity:end -->"
WL_BEGIN, WL_END = "<!-- per-workload:begin -->", "<!-- per-workload:end -->"


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


def _label(metric: str) -> str:
    return metric.split(".", 1)[1].replace("_saving_pct", "").replace("_pct", "")


def workload_tables(results_path: Path) -> str:
    """Per paper: the analysis metrics its claims name, for every workload its claims name (and, for
    a claim over the whole study with a ``nonzero`` filter, the workloads that pass it)."""
    from simt_fast import results
    from simt_fast.report import published

    pub = published.load_published()
    studies = {s["name"]: s for s in results.studies(results_path)}
    analyses = results.analyses(results_path)
    out = []
    for paper in pub.papers:
        claims = [c.selection for c in pub.claims
                  if c.paper.id == paper.id and c.selection.kind == "analysis" and c.selection.study in studies]
        if not claims:
            continue
        metrics = list(dict.fromkeys(c.metric for c in claims))
        study = studies[claims[0].study]

        def value(workload: str, metric: str) -> float:
            analysis, field = metric.split(".", 1)
            trace = next((t for t in study["traces"] if published.workload_of(t) == workload), None)
            if trace is None or study["traces"][trace] not in analyses:
                return float("nan")  # not in this results file
            return float(analyses[study["traces"][trace]]["results"][analysis][field])

        names: list = []
        for c in claims:
            if c.workloads == "study":
                if c.nonzero:
                    names += [published.workload_of(t) for t in study["traces"] if value(published.workload_of(t), c.nonzero) > 0]
            else:
                names += list(c.workloads)
        names = sorted(set(names))
        table = {n: [value(n, m) for m in metrics] for n in names}
        out += [f"#### {paper.title}", "", "| workload | " + " | ".join(_label(m) for m in metrics) + " |",
                "|---|" + "---:|" * len(metrics)]
        cell = lambda v: str(int(v)) if float(v).is_integer() else fmt(v)  # noqa: E731 (counts print as counts)
        out += [f"| {n} | " + " | ".join(cell(v) for v in row) + " |" for n, row in table.items()]
        out += ["| mean | " + " | ".join(fmt(float(np.mean(col))) for col in zip(*table.values())) + " |", ""]
    return "\n".join(out)


def _replace(text: str, begin: str, end: str, md: str) -> str:
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    return f"{head}{begin}\n{md}\n{end}{tail}"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results", type=Path)
    ap.add_argument("--no-write", action="store_true", help="print the Markdown instead of updating the doc")
    a = ap.parse_args(argv)
    md, per_workload = tables(a.results), workload_tables(a.results)
    if a.no_write:
        print(md)
        print(per_workload)
        return 0
    DOC.write_text(_replace(_replace(DOC.read_text(), BEGIN, END, md), WL_BEGIN, WL_END, per_workload))
    print(f"wrote {DOC.relative_to(ROOT)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
