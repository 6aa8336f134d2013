"""Studies: suite files, the study records and per-trace analyses a results file keeps, the shipped studies."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sweep_helpers import SWEEP, make_traces

from simt_fast import results
from simt_fast.sweep import SweepError, load_sweeps, plan_studies, run_analyses, run_points
from simt_fast.sweep.analyses import ANALYSES, FIELDS, run_analyses as analyse_trace

ROOT = Path(__file__).resolve().parents[1]
AVAILABLE = ["serial", "sps", "dps", "mp", "mp-oer", "frontier", "mimd"]

STUDY_B = """\
name = "second"
description = "the same traces, other mechanisms"
baseline = "sps"
traces = ["traces/*.h5"]
[grid]
mechanism = ["sps", "dps"]
simd_width = [8]
"""


def _suite(tmp_path: Path) -> Path:
    make_traces(tmp_path / "traces")
    (tmp_path / "first.toml").write_text('name = "first"\n' + SWEEP)
    (tmp_path / "second.toml").write_text(STUDY_B)
    suite = tmp_path / "suite.toml"
    suite.write_text('name = "both"\nstudies = ["first.toml", "second.toml"]\n')
    return suite


def test_suite_lists_studies_and_shared_points_run_once(tmp_path):
    specs = load_sweeps(_suite(tmp_path), mechanisms_available=AVAILABLE)
    assert [s.name for s in specs] == ["first", "second"]
    plan = plan_studies(specs, tmp_path / "cache")
    first, second = plan.studies
    assert len(first["points"]) == 10 and len(second["points"]) == 4
    # (sps, simd 8) is in both studies: one point, listed in both records
    shared = set(first["points"]) & set(second["points"])
    assert len(shared) == 2 and len(plan.points) == 12
    assert set(first["traces"]) == {"syn0", "syn1"} and plan.baseline == {"mechanism": "sps"}

    out = tmp_path / "r.h5"
    outcome = run_points(plan.points, out, jobs=1, baseline=plan.baseline, studies=plan.studies)
    assert outcome.ran == 12 and not outcome.failed
    stored = results.studies(out)
    assert [s["name"] for s in stored] == ["first", "second"]
    assert stored[1]["description"] == "the same traces, other mechanisms"
    assert set(stored[0]["points"]) | set(stored[1]["points"]) == set(results.load(out)["point_id"])


def test_load_gives_every_study_its_rows_with_numeric_speedups_over_its_baseline(tmp_path):
    """A suite's results file (two studies sharing two points): a row per point and study, a study
    column, and every speedup a number -- its study's baseline point's cycles over its cycles."""
    import numpy as np
    import pandas as pd

    plan = plan_studies(load_sweeps(_suite(tmp_path), mechanisms_available=AVAILABLE), tmp_path / "cache")
    out = tmp_path / "r.h5"
    run_points(plan.points, out, jobs=1, studies=plan.studies)  # no file-level baseline: only the studies'
    df = results.load(out)
    assert list(df.columns[:2]) == ["study", "point_id"] and list(dict.fromkeys(df["study"])) == ["first", "second"]
    assert len(df) == 14 and df["point_id"].nunique() == 12
    assert df["speedup"].dtype == np.float64 and np.isfinite(df["speedup"]).all()
    for record in results.studies(out):
        rows = df[df["study"] == record["name"]]
        assert sorted(rows["point_id"]) == sorted(record["points"])
        base = rows[rows["mechanism"] == "sps"].set_index(["trace", "simd_width"])["cycles"]
        expected = [base[(r.trace, r.simd_width)] / r.cycles for r in rows.itertuples()]
        np.testing.assert_allclose(rows["speedup"], expected, rtol=1e-12)
        assert (rows["speedup"] != 1.0).any()  # mp and dps are not the baseline's own rows
    second = results.load(out, study="second")
    pd.testing.assert_frame_equal(second, df[df["study"] == "second"].reset_index(drop=True), check_like=False)
    assert second.attrs["baseline"] == {"mechanism": "sps"}
    with pytest.raises(results.ResultsError, match=r"r\.h5 has no study 'third' \(its studies: first, second\)"):
        results.load(out, study="third")


def test_a_second_run_of_a_study_keeps_the_others_and_merges_its_points(tmp_path):
    old = [{"name": "a", "points": ["1", "2"], "traces": {"x": "d1"}}, {"name": "b", "points": ["3"]}]
    new = [{"name": "a", "description": "again", "points": ["2", "4"], "traces": {"y": "d2"}}]
    merged = {s["name"]: s for s in results.merge_studies(old, new)}
    assert merged["a"]["points"] == ["1", "2", "4"] and merged["a"]["traces"] == {"x": "d1", "y": "d2"}
    assert merged["a"]["description"] == "again" and merged["b"]["points"] == ["3"]


def test_merge_of_shards_keeps_study_records_and_analyses(tmp_path):
    specs = load_sweeps(_suite(tmp_path), mechanisms_available=AVAILABLE)
    shards = []
    for i in range(2):
        plan = plan_studies(specs, tmp_path / "cache", shard=(i, 2))
        p = tmp_path / f"s{i}.h5"
        run_points(plan.points, p, jobs=1, studies=plan.studies, analyses={f"t{i}": {"trace": f"x{i}"}})
        shards.append(p)
    results.merge(tmp_path / "m.h5", shards)
    assert [s["name"] for s in results.studies(tmp_path / "m.h5")] == ["first", "second"]
    assert set(results.analyses(tmp_path / "m.h5")) == {"t0", "t1"}
    merged = results.load(tmp_path / "m.h5")
    assert merged["point_id"].nunique() == 12 and len(merged) == 14  # the two shared points, once per study


@pytest.mark.parametrize("text, fragment", [
    ('studies = ["first.toml"]\n[grid]\nmechanism = ["sps"]\n', "key 'grid' does not belong in a suite file"),
    ('studies = []\n', "'studies' must be a non-empty list"),
    ('studies = ["nope.toml"]\n', "study file 'nope.toml' does not exist"),
    ('studies = ["first.toml", "first.toml"]\n', "have the same name 'first'"),
])
def test_bad_suite_files_get_one_sentence(tmp_path, text, fragment):
    _suite(tmp_path)
    bad = tmp_path / "bad.toml"
    bad.write_text(text)
    with pytest.raises(SweepError) as e:
        load_sweeps(bad, mechanisms_available=AVAILABLE)
    msg = str(e.value)
    assert fragment in msg and "\n" not in msg and msg.startswith(str(bad))


def test_unknown_analysis_is_refused_with_a_suggestion(tmp_path):
    make_traces(tmp_path / "traces")
    p = tmp_path / "a.toml"
    p.write_text(SWEEP.replace('baseline = "sps"', 'baseline = "sps"\nanalyses = ["scalarise"]'))
    with pytest.raises(SweepError, match=r"a.toml:3: analysis 'scalarise' does not exist; did you mean 'scalarize'"):
        load_sweeps(p, mechanisms_available=AVAILABLE)


def test_analyses_of_a_workload_trace_have_their_declared_fields(tmp_path):
    from simt_fast.sweep.traces import trace_workload

    path = trace_workload("shortcircuit", "tiny", 0, tmp_path / "sc.h5")
    out = analyse_trace(list(ANALYSES), path, "shortcircuit")
    for name, numbers in out.items():
        assert tuple(numbers) == FIELDS[name] or set(numbers) == set(FIELDS[name]), name
    s = out["structurize"]  # Wu et al. 2012 Fig. 3's short circuit needs Forward Copy
    assert s["forward_copies"] > 0 and s["unstructured"] == 1 and s["new_code_size"] > s["old_code_size"]
    c = out["convergence"]  # each refinement proves at least as much convergent
    assert 0 <= c["ca_pct"] <= c["ca_va_pct"] <= c["ca_va_exit_pct"] <= c["dynamic_pct"] <= 100
    assert 0 < out["expansion"]["upper_limit_pct"] <= 100
    skipped = analyse_trace(["scalarize"], path, "")
    assert "skipped" in skipped["scalarize"]


def test_run_analyses_skips_what_the_file_already_holds(tmp_path, monkeypatch):
    import simt_fast.sweep.analyses as mod

    make_traces(tmp_path / "traces")
    (tmp_path / "a.toml").write_text(SWEEP.replace('baseline = "sps"', 'baseline = "sps"\nanalyses = ["expansion"]'))
    plan = plan_studies(load_sweeps(tmp_path / "a.toml", mechanisms_available=AVAILABLE), tmp_path / "cache")
    calls = []
    monkeypatch.setitem(mod.ANALYSES, "expansion", lambda trace, wl: calls.append(1) or {"upper_limit_pct": 1.0})
    monkeypatch.setattr(mod, "_workload", lambda name: object())
    for source in (s for _, s, _, _ in plan.analyses):  # synthetic traces: pretend they are workloads
        object.__setattr__(source, "workload", source.name)
    first = run_analyses(plan, tmp_path / "r.h5")
    assert len(first) == 2 and len(calls) == 2
    run_points(plan.points, tmp_path / "r.h5", jobs=1, studies=plan.studies, analyses=first)
    assert run_analyses(plan, tmp_path / "r.h5") == {} and len(calls) == 2
    stored = results.analyses(tmp_path / "r.h5")
    assert {v["results"]["expansion"]["upper_limit_pct"] for v in stored.values()} == {1.0}


def test_shipped_studies_validate_and_cover_the_papers_experiments():
    from simt_fast import workloads

    specs = {s.name: s for s in load_sweeps(ROOT / "data" / "sweeps" / "default.toml")}
    assert list(specs) == ["thesis", "multipath", "unstructured", "scalarization"]
    thesis = specs["thesis"]
    assert thesis.base == "gt200" and sorted(t.workload for t in thesis.traces) == sorted(
        ["aes", "bfs", "blackscholes", "laplace3d", "libor", "mummer", "nn", "nqueens", "raytrace", "storegpu"])
    combos = {(c.mechanism, c.hws) for c in thesis.configs}
    assert combos == {(m, h) for m in ("sps", "dwf", "en-dwf") for h in (False, True)} | {("tbc", False)}
    assert all(c.simd_width == 8 and c.n_sms == 28 for c in thesis.configs)
    mp = specs["multipath"]
    assert mp.base == "fermi" and mp.grid["mechanism"] == ["sps", "dps", "mp", "mp-oer"]
    assert specs["unstructured"].analyses == ["structurize", "expansion"]
    assert specs["scalarization"].analyses == ["convergence", "scalarize"]
    for name in ("unstructured", "scalarization"):
        assert sorted(t.workload for t in specs[name].traces) == sorted(workloads.names())
    assert load_sweeps(ROOT / "data" / "sweeps" / "everything.toml")[0].name == "everything"


def test_results_attributes_are_json(tmp_path):
    make_traces(tmp_path / "traces")
    (tmp_path / "a.toml").write_text(SWEEP)
    plan = plan_studies(load_sweeps(tmp_path / "a.toml", mechanisms_available=AVAILABLE), tmp_path / "cache")
    big = {f"trace{i}": {"results": {"x": {"v": float(i)}}} for i in range(3000)}  # > 64 KB of attribute
    run_points(plan.points[:1], tmp_path / "r.h5", jobs=1, studies=plan.studies, analyses=big)
    assert results.analyses(tmp_path / "r.h5") == json.loads(json.dumps(big))
    assert results.studies(tmp_path / "r.h5")[0]["name"] == "a"
