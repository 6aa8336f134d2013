"""Published claims: the shipped claim files validate, measured values are computed from results
(ratio and note logic on a synthetic results file), and a broken claim file gets one sentence."""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pytest

from simt_fast import results, workloads
from simt_fast.report import published, write_report
from simt_fast.report.published import PublishedError, load_published, parse_published
from simt_fast.results import ResultsWriter
from simt_fast.sim.config import SimConfig
from simt_fast.sim.stats import Stats
from simt_fast.sweep import load_sweeps

ROOT = Path(__file__).resolve().parents[1]


# --- the shipped claim files ----------------------------------------------------------------------

def test_shipped_claims_load_and_refer_to_shipped_studies_workloads_and_analyses():
    pub = load_published()
    assert {p.id for p in pub.papers} == {"hws", "multipath", "unstructured", "scalarization"}
    studies = {s.name: s for s in load_sweeps(ROOT / "data" / "sweeps" / "default.toml")}
    names = set(workloads.names())
    for paper in pub.papers:
        assert all(w == "" or w in names for w in paper.benchmarks.values()), paper.id
        assert "seed" not in paper.title.lower() and paper.authors
    for item in [c.selection for c in pub.claims] + [sel for f in pub.figures for _, sel in f.series]:
        spec = studies[item.study]
        if item.workloads != "study":
            assert set(item.workloads) <= {t.workload for t in spec.traces}, item
        if item.kind == "analysis":
            assert item.metric.split(".")[0] in spec.analyses, item
        for fields in (item.measured, item.baseline):
            for k, v in fields:
                assert v in spec.grid.get(k, [getattr(spec.configs[0], k)]), (item, k, v)


def test_headline_numbers_of_the_multipath_and_thesis_papers_are_claims():
    pub = load_published()
    values = {c.key: c.value for c in pub.claims}
    assert values["hws/pdom-hws"] == 1.20 and values["hws/pdom-hws-nn"] == 2.85
    assert values["hws/en-dwf-hws-over-dwf"] == 1.27 and values["hws/en-dwf-over-dwf"] == 1.088
    by_key = {c.key: c for c in pub.claims}
    # the thesis' 1.27 is en-DWF&HWS over DWF, not over PDOM
    assert dict(by_key["hws/en-dwf-hws-over-dwf"].selection.baseline) == {"mechanism": "dwf", "hws": False}
    assert values["multipath/mp-oer-over-sps"] == 1.32 and values["multipath/mp-oer-over-mp"] == 1.186
    assert values["multipath/mp-oer-over-dps"] == 1.125
    assert values["multipath/oer-simd-util-average"] == 1.48 and values["multipath/oer-simd-util-max"] == 2.82
    assert by_key["multipath/mp-oer-over-sps"].aggregate == "hmean"  # the slides say harmonic mean


# --- measuring claims from results ----------------------------------------------------------------

CLAIMS = """\
[paper]
id = "toy"
title = "A Toy Paper"
authors = "A. Author"
venue = "Nowhere 2024"
[paper.benchmarks]
A = "a"
B = "b"

[[claim]]
id = "mp-hm"
where = "Fig. 1"
what = "harmonic-mean speedup of mp over sps"
kind = "speedup"
study = "s"
measured = {mechanism = "mp"}
baseline = {mechanism = "sps"}
aggregate = "hmean"
value = 1.2
note = "the toy workloads are too small"

[[claim]]
id = "mp-on-a"
where = "Fig. 1"
what = "speedup of mp on A"
kind = "speedup"
study = "s"
measured = {mechanism = "mp"}
baseline = {mechanism = "sps"}
workloads = ["a"]
value = 2.1
note = "never shown: within 10%"

[[claim]]
id = "util"
where = "Fig. 2"
what = "lowest SIMD utilisation of mp"
kind = "stat"
study = "s"
metric = "simd_util"
measured = {mechanism = "mp"}
aggregate = "min"
value = 0.5

[[claim]]
id = "exp"
where = "Table 1"
what = "mean static expansion"
kind = "analysis"
study = "s"
metric = "structurize.static_expansion_pct"
value = 10.0
note = "analysis note"

[[claim]]
id = "absent"
where = "Fig. 3"
what = "a claim of a study that is not in the results"
kind = "speedup"
study = "other"
measured = {mechanism = "mp"}
baseline = {mechanism = "sps"}
value = 1.0

[[claim]]
id = "wrong-mech"
where = "Fig. 4"
what = "a mechanism the study did not run"
kind = "speedup"
study = "s"
measured = {mechanism = "dps"}
baseline = {mechanism = "sps"}
value = 1.0

[[figure]]
id = "f1"
where = "Fig. 1"
title = "Speedup"
study = "s"
aggregate = "hmean"
series = [{label = "MP", metric = "speedup", measured = {mechanism = "mp"}, baseline = {mechanism = "sps"}}]
"""

# cycles per (trace, mechanism); mp speedups: a 2.0, b 1.25
CYCLES = {("a", "sps"): 1000, ("a", "mp"): 500, ("b", "sps"): 1000, ("b", "mp"): 800}
UTIL = {("a", "sps"): 0.5, ("a", "mp"): 0.6, ("b", "sps"): 0.9, ("b", "mp"): 0.45}


def _results(tmp_path) -> Path:
    path = tmp_path / "r.h5"
    study = {"name": "s", "description": "toy study", "baseline": {"mechanism": "sps"}, "analyses": ["structurize"],
             "points": [], "traces": {"a": "digest-a", "b/default/s1": "digest-b"}}
    rows = []
    for (trace, mech), cycles in CYCLES.items():
        pid = f"{trace}-{mech}"
        study["points"].append(pid)
        name = "a" if trace == "a" else "b/default/s1"
        st = Stats(cycles=cycles, warp_insts=10, thread_insts=int(UTIL[trace, mech] * 320))
        rows.append((pid, f"digest-{trace}", name, SimConfig(mechanism=mech).to_dict(), st.finalize(32)))
    analyses = {"digest-a": {"trace": "a", "results": {"structurize": {"static_expansion_pct": 20.0}}},
                "digest-b": {"trace": "b", "results": {"structurize": {"static_expansion_pct": 40.0}}}}
    with ResultsWriter(path, baseline={"mechanism": "sps"}, studies=[study], analyses=analyses) as w:
        for row in rows:
            w.append(*row)
    return path


def _rows(tmp_path):
    path = _results(tmp_path)
    pub = parse_published(CLAIMS, "toy.toml")
    df = results.load(path, hist=True)
    studies = {s["name"]: s for s in results.studies(path)}
    return {r.claim.id: r for r in published.table(pub, df, studies, results.analyses(path))}, pub, df, studies, path


def test_measured_values_ratios_and_notes(tmp_path):
    rows, *_ = _rows(tmp_path)
    assert "absent" not in rows  # claims of studies that are not in the file are left out
    hm = rows["mp-hm"]
    assert hm.measured == pytest.approx(2 / (1 / 2.0 + 1 / 1.25))  # "b/default/s1" counts as workload b
    assert hm.measurement.per_workload == pytest.approx({"a": 2.0, "b": 1.25})
    assert hm.ratio == pytest.approx(hm.measured / 1.2)
    assert hm.differs and hm.comment == "the toy workloads are too small"  # 1.54 vs 1.2: 28% apart
    one = rows["mp-on-a"]
    assert one.measured == pytest.approx(2.0) and not one.differs and one.comment == ""  # 2.0/2.1: within 10%
    util = rows["util"]
    assert util.measured == pytest.approx(0.45, abs=0.01) and not util.differs
    exp = rows["exp"]
    assert exp.measured == pytest.approx(30.0) and exp.ratio == pytest.approx(3.0) and exp.comment == "analysis note"
    wrong = rows["wrong-mech"]
    assert np.isnan(wrong.measured) and wrong.comment.startswith("not measured: no points of the study match")


def test_differs_threshold_and_zero_published_values():
    assert not published.differs(1.09, 1.0) and published.differs(1.11, 1.0) and published.differs(0.89, 1.0)
    assert not published.differs(0.05, 0.0) and published.differs(1.0, 0.0)
    assert np.isnan(published.ratio(1.0, 0.0)) and not published.differs(float("nan"), 1.0)


def test_aggregates_match_numpy():
    v = [0.5, 2.0, 4.0, np.nan]
    w = np.array([0.5, 2.0, 4.0])
    assert published.aggregate(v, "hmean") == pytest.approx(3 / np.sum(1 / w))
    assert published.aggregate(v, "gmean") == pytest.approx(np.exp(np.mean(np.log(w))))
    assert published.aggregate(v, "mean") == pytest.approx(w.mean())
    assert published.aggregate(v, "min") == 0.5 and published.aggregate(v, "max") == 4.0
    pairs = [(1.0, 2.0), (2.0, 4.1), (3.0, 5.9), (4.0, 8.2)]
    assert published.aggregate(pairs, "pearson") == pytest.approx(np.corrcoef(*zip(*pairs))[0, 1])
    assert np.isnan(published.aggregate([(1.0, 1.0), (2.0, 2.0)], "pearson"))  # fewer than 3 workloads


def test_report_has_the_published_table_in_markdown_and_html(tmp_path):
    path = _results(tmp_path)
    claims = tmp_path / "claims"
    claims.mkdir()
    (claims / "toy.toml").write_text(CLAIMS)
    written = {p.name for p in write_report(path, tmp_path / "rep", published=claims)}
    assert {"paper_toy_f1.png", "speedup.png", "summary.md", "index.html"} <= written
    md = (tmp_path / "rep" / "summary.md").read_text()
    assert "## Published vs simt-fast" in md and "### A Toy Paper" in md and "A. Author" in md
    line = next(row for row in md.splitlines() if row.startswith("| Fig. 1: harmonic-mean speedup"))
    assert "| 1.200 | 1.538 | 1.282 | the toy workloads are too small |" in line
    assert "| Fig. 1: speedup of mp on A | a | 2.100 | 2.000 | 0.952 |  |" in md
    assert "| Table 1: mean static expansion | all of 's' (2), AM | 10.0 | 30.0 | 3.000 | analysis note |" in md
    page = (tmp_path / "rep" / "index.html").read_text()
    assert "Published vs simt-fast" in page and "the toy workloads are too small" in page


def test_claims_is_the_reports_table_row_for_row(tmp_path):
    """simt_fast.report.claims: the Published vs simt-fast table as numbers, the same rows the report prints."""
    from simt_fast.report import claims, claims_display

    path = _results(tmp_path)
    claim_dir = tmp_path / "claims"
    claim_dir.mkdir()
    (claim_dir / "toy.toml").write_text(CLAIMS)
    table = claims(path, published=claim_dir)
    assert list(table.columns) == list(published.CLAIM_COLUMNS)
    assert list(table["claim"]) == ["mp-hm", "mp-on-a", "util", "exp", "wrong-mech"]  # not "absent": no study
    hm = table.set_index("claim").loc["mp-hm"]
    assert hm["paper"] == "toy" and hm["workloads"] == "all of 's' (2), HM" and hm["published"] == 1.2
    assert hm["measured"] == pytest.approx(2 / (1 / 2.0 + 1 / 1.25)) and hm["ratio"] == pytest.approx(hm["measured"] / 1.2)
    assert hm["note"] == "the toy workloads are too small"
    assert np.isnan(table.set_index("claim").loc["wrong-mech", "measured"])
    write_report(path, tmp_path / "rep", published=claim_dir)
    md = (tmp_path / "rep" / "summary.md").read_text().splitlines()
    start = md.index("| claim | workloads | published | simt-fast | ratio | note |")
    printed = [[c.strip() for c in line.strip("|").split(" | ")] for line in md[start + 2:start + 2 + len(table)]]
    assert printed == [[c.strip() for c in row] for row in claims_display(table)]
    assert printed[0][:5] == ["Fig. 1: harmonic-mean speedup of mp over sps", "all of 's' (2), HM", "1.200", "1.538",
                              "1.282"]


def test_the_html_claims_table_reads_as_text_with_ratios_coloured_by_distance(tmp_path):
    """One header row (no pandas index row), claims left-aligned as text, the ratio cell coloured by how
    far the measured value is from the paper's: within 10%, within 25%, beyond."""
    import re

    path = _results(tmp_path)
    claim_dir = tmp_path / "claims"
    claim_dir.mkdir()
    (claim_dir / "toy.toml").write_text(CLAIMS)
    write_report(path, tmp_path / "rep", published=claim_dir)
    page = (tmp_path / "rep" / "index.html").read_text()
    table = re.search(r'<table class="claims">.*?</table>', page).group(0)
    assert table.count("<tr>") == 1 + 5 and "dataframe" not in page and "<strong>" not in table
    head = re.search(r"<thead>(.*?)</thead>", table).group(1)
    assert re.findall(r"<th[^>]*>([^<]*)</th>", head) == ["claim", "workloads", "published", "simt-fast", "ratio", "note"]
    row = re.search(r"<tr><td[^>]*>Fig. 1: harmonic-mean speedup.*?</tr>", table).group(0)
    assert row.startswith('<tr><td class="text">Fig. 1: harmonic-mean speedup of mp over sps</td>')
    ratios = re.findall(r'<td class="num ratio (\w+)" title="([^"]+)">([^<]*)</td>', table)
    assert ratios[0] == ("far", "beyond 25%", "1.282") and ratios[1] == ("near", "within 10%", "0.952")
    assert ratios[-1] == ("none", "not measured", "–")
    assert "table.claims" in page and ".ratio.off" in page  # the colours are the page's own style
    assert published.band(1.2, 1.0) == "within 25%" and published.band(1.09, 1.0) == "within 10%"
    assert published.band(0.74, 1.0) == "beyond 25%" and published.band(float("nan"), 1.0) == "not measured"


# --- broken claim files ---------------------------------------------------------------------------

GOOD = CLAIMS.split("[[claim]]\nid = \"mp-on-a\"")[0]


@pytest.mark.parametrize("edit, line, fragment", [
    (("kind = \"speedup\"", "kind = \"speed\""), 14, "kind 'speed' is unknown; did you mean 'speedup'?"),
    (("value = 1.2\n", "valu = 1.2\n"), 19, "[[claim]] key 'valu' is unknown; did you mean 'value'?"),
    (("value = 1.2\n", "value = \"1.2\"\n"), 19, "needs 'value', the paper's number"),
    (("aggregate = \"hmean\"", "aggregate = \"median\""), 18, "aggregate 'median' is unknown"),
    (("measured = {mechanism = \"mp\"}", "measured = {mechanisms = \"mp\"}"), 16,
     "'measured' names 'mechanisms', which is not a config field; did you mean 'mechanism'?"),
    (("baseline = {mechanism = \"sps\"}\n", ""), 10, "metric 'speedup' compares with a baseline"),
    (("kind = \"speedup\"", "kind = \"stat\"\nmetric = \"simd_utl\""), 15, "metric 'simd_utl' is unknown; did you mean "
                                                                         "'simd_util'?"),
    (("authors = \"A. Author\"\n", ""), 1, "[paper] needs 'authors'"),
    (("study = \"s\"\n", ""), 10, "[[claim]] needs 'study'"),
])
def test_broken_claim_file_gets_one_sentence_naming_file_and_line(edit, line, fragment):
    text = GOOD.replace(*edit, 1)
    assert text != GOOD
    with pytest.raises(PublishedError) as e:
        parse_published(text, "claims.toml")
    msg = str(e.value)
    assert msg.startswith(f"claims.toml:{line}: ") and fragment in msg and "\n" not in msg, msg


def test_bad_analysis_field_duplicate_ids_and_bad_toml(tmp_path):
    text = GOOD + textwrap.dedent("""\
        [[claim]]
        id = "x"
        where = "w"
        what = "w"
        kind = "analysis"
        study = "s"
        metric = "structurize.static_expansion"
        value = 1
        """)
    with pytest.raises(PublishedError, match=r"has no field 'static_expansion'; did you mean 'static_expansion_pct'"):
        parse_published(text, "c.toml")
    with pytest.raises(PublishedError, match=r"c.toml:\d+: claim id 'mp-hm' appears twice"):
        parse_published(GOOD + GOOD[GOOD.index("[[claim]]"):], "c.toml")
    with pytest.raises(PublishedError, match=r"^c.toml: not valid TOML"):
        parse_published(GOOD + "\n[[claim\n", "c.toml")
    with pytest.raises(PublishedError, match="does not exist"):
        load_published(tmp_path / "missing")


def test_every_shipped_claim_and_figure_measures_on_the_shipped_studies_grids(tmp_path):
    """Stand-in results with one point per (workload, config) of every shipped study and every
    analysis field: each claim and figure series must select exactly its points (no ambiguity
    such as two HWS variants matching one selection), whatever the numbers."""
    import pandas as pd

    from simt_fast.sweep.analyses import FIELDS
    from simt_fast.sweep.points import point_id

    rng = np.random.default_rng(0)
    rows, studies, analyses = [], {}, {}
    for spec in load_sweeps(ROOT / "data" / "sweeps" / "default.toml"):
        record = {"name": spec.name, "baseline": spec.baseline, "points": [], "traces": {}}
        for t in spec.traces:
            digest = f"digest-{t.name}"
            record["traces"][t.name] = digest
            entry = analyses.setdefault(digest, {"trace": t.name, "results": {}})
            entry["results"].update({a: {f: float(rng.uniform(1, 50)) for f in FIELDS[a]} for a in spec.analyses})
            for cfg in spec.configs_for(t.name):
                pid = point_id(digest, cfg)
                record["points"].append(pid)
                occ = np.zeros(cfg.warp_size + 1, np.int64)
                occ[rng.integers(1, cfg.warp_size + 1, 5)] += 3
                rows.append({**cfg.to_dict(), "point_id": pid, "trace_id": digest, "trace": t.name,
                             "cycles": int(rng.integers(1000, 2000)), "simd_util": rng.uniform(0.1, 1),
                             "warp_insts": int(rng.integers(100, 200)), "occupancy_hist": occ})
        studies[spec.name] = record
    df = pd.DataFrame(rows).drop_duplicates("point_id")  # a point two studies share is stored once
    pub = load_published()
    for row in published.table(pub, df, studies, analyses):
        assert not row.measurement.problem and np.isfinite(row.measured), (row.claim.key, row.measurement.problem)
    for fig in pub.figures:
        problems = []
        table = published.figure_table(fig, df, studies, analyses, problems)
        assert table is not None and not problems, (fig.id, problems)
        assert list(table.columns) == [label for label, _ in fig.series]


def test_cli_report_names_a_broken_claim_file_in_one_sentence(tmp_path):
    from typer.testing import CliRunner

    from simt_fast.cli import app

    path = _results(tmp_path)
    bad = tmp_path / "bad.toml"
    bad.write_text(GOOD.replace('kind = "speedup"', 'kind = "speed"', 1))
    result = CliRunner().invoke(app, ["report", str(path), "-o", str(tmp_path / "rep"), "--published", str(bad)])
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [
        f"error: {bad}:14: kind 'speed' is unknown; did you mean 'speedup'? (kinds: speedup, stat, analysis)"]
    ok = CliRunner().invoke(app, ["report", str(path), "-o", str(tmp_path / "rep")])
    assert ok.exit_code == 0 and f"report: {tmp_path / 'rep' / 'index.html'}" in ok.output
