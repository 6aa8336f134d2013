"""Running sweeps end to end with the real simulator: engines agree, resume after kill, shards merge."""

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sweep_helpers import make_sweep
from typer.testing import CliRunner

from simt_fast import results
from simt_fast.cli import app
from simt_fast.sim import simulate
from simt_fast.sim.config import from_dict
from simt_fast.sweep import load_sweep, plan, run_points, run_sweep, worker
from simt_fast.trace import Trace

HERE = Path(__file__).resolve().parent


@pytest.fixture(scope="module")
def sweep_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("sweep")
    make_sweep(d)
    return d


@pytest.fixture(scope="module")
def reference(sweep_dir):
    """The uninterrupted, in-process run every other engine must reproduce."""
    out = sweep_dir / "reference.h5"
    outcome = run_sweep(sweep_dir / "sweep.toml", out, jobs=1, cache_dir=sweep_dir / "cache")
    assert outcome.ran == 10 and not outcome.failed and not outcome.interrupted
    return out


def same_contents(a, b):
    pd.testing.assert_frame_equal(results.contents(a), results.contents(b))


def test_stored_stats_equal_direct_simulation(sweep_dir, reference):
    df = results.load(reference, hist=True)
    assert len(df) == 10
    config_cols = list(from_dict({}).to_dict())
    traces = {p.stem: Trace.load(p) for p in (sweep_dir / "traces").glob("*.h5")}
    for _, row in df.iterrows():
        cfg = from_dict({k: (row[k].item() if hasattr(row[k], "item") else row[k]) for k in config_cols})
        st = simulate(traces[row["trace"]], cfg)
        assert row["cycles"] == st.cycles and row["warp_insts"] == st.warp_insts
        assert row["simd_util"] == pytest.approx(st.simd_util)
        np.testing.assert_array_equal(row["occupancy_hist"], st.occupancy_hist)
        assert row["trace_id"] == traces[row["trace"]].digest()
    # speedup over sps, recomputed with numpy from the stored cycles
    for (trace, sw), g in df.groupby(["trace", "simd_width"]):
        base = g.loc[g.mechanism == "sps", "cycles"].item()
        np.testing.assert_allclose(g["speedup"], base / g["cycles"].to_numpy(np.float64))


def test_process_pool_equals_in_process_run_and_rerun_skips(sweep_dir, reference, tmp_path):
    out = tmp_path / "pool.h5"
    outcome = run_sweep(sweep_dir / "sweep.toml", out, jobs=2, cache_dir=sweep_dir / "cache")
    assert outcome.ran == 10 and not outcome.failed
    same_contents(out, reference)
    again = run_sweep(sweep_dir / "sweep.toml", out, jobs=2, cache_dir=sweep_dir / "cache")
    assert again.ran == 0 and again.skipped == 10


def test_shards_merged_equal_a_single_run(sweep_dir, reference, tmp_path):
    shards = []
    for i in range(3):
        out = tmp_path / f"shard{i}.h5"
        run_sweep(sweep_dir / "sweep.toml", out, jobs=1, shard=f"{i}/3", cache_dir=sweep_dir / "cache")
        shards.append(out)
    sizes = [len(results.load(s)) for s in shards]
    assert sum(sizes) == 10
    result = CliRunner().invoke(app, ["merge", str(tmp_path / "merged.h5"), *map(str, shards), str(shards[0])])
    assert result.exit_code == 0, result.output
    assert "duplicates skipped" in result.output
    same_contents(tmp_path / "merged.h5", reference)


def test_dask_local_cluster_equals_pool_run(sweep_dir, reference, tmp_path):
    out = tmp_path / "dask.h5"
    outcome = run_sweep(sweep_dir / "sweep.toml", out, dask="local:2", dask_processes=False,
                        cache_dir=sweep_dir / "cache")
    assert outcome.ran == 10 and not outcome.failed
    same_contents(out, reference)


def test_workers_load_each_trace_once(sweep_dir):
    path = str(sweep_dir / "traces" / "syn0.h5")
    worker._cache.clear()
    before = worker.trace_loads
    for mech in ("sps", "mp", "sps"):
        stats, seconds, host = worker.run_point(path, {"mechanism": mech})
        assert stats["cycles"] > 0 and seconds >= 0 and host
    assert worker.trace_loads == before + 1


def test_failed_points_are_reported_and_the_rest_stored(sweep_dir, tmp_path):
    spec = load_sweep(sweep_dir / "sweep.toml")
    points = plan(spec, sweep_dir / "cache")
    out = tmp_path / "f.h5"
    outcome = run_points(points, out, jobs=2, simulate="sweep_helpers:failing_simulate")
    assert len(outcome.failed) == 4 and outcome.ran == 6
    assert all(m == "RuntimeError: injected failure" for _, m in outcome.failed)
    assert set(results.load(out)["mechanism"]) == {"sps", "mimd"}


def _start(sweep_dir, out):
    code = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(HERE)!r})
        from simt_fast.sweep import run_sweep
        o = run_sweep({str(sweep_dir / 'sweep.toml')!r}, {str(out)!r}, jobs=2,
                      cache_dir={str(sweep_dir / 'cache')!r}, simulate="sweep_helpers:slow_simulate")
        print("interrupted" if o.interrupted else "done", o.ran)
    """)
    return subprocess.Popen([sys.executable, "-W", "ignore", "-c", code], stdout=subprocess.PIPE, text=True,
                            start_new_session=True)


def _wait_for_rows(out, n, proc, timeout=60):
    t0 = time.time()
    while time.time() - t0 < timeout:
        if out.exists():
            try:
                k = len(results.point_ids(out))
            except results.ResultsError:
                k = 0
            if k >= n:
                return k
        assert proc.poll() is None, "the sweep finished before it could be interrupted"
        time.sleep(0.05)
    raise AssertionError(f"no {n} rows after {timeout} s")


def test_killed_sweep_resumes_to_the_same_contents(sweep_dir, reference, tmp_path):
    out = tmp_path / "killed.h5"
    proc = _start(sweep_dir, out)
    try:
        _wait_for_rows(out, 2, proc)
        proc.send_signal(signal.SIGKILL)  # the coordinator dies mid-sweep, file flagged open-for-write
        proc.wait(10)
    finally:
        time.sleep(0.5)
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # orphaned workers, if any are still around
        except ProcessLookupError:
            pass
    stored = len(results.point_ids(out))
    assert 2 <= stored < 10

    proc = _start(sweep_dir, out)  # resumed, then stopped politely by SIGTERM
    try:
        _wait_for_rows(out, stored + 2, proc)
        proc.send_signal(signal.SIGTERM)
        assert proc.communicate(timeout=30)[0].startswith("interrupted")
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    after_term = len(results.point_ids(out))
    assert after_term >= stored + 2

    outcome = run_sweep(sweep_dir / "sweep.toml", out, jobs=1, cache_dir=sweep_dir / "cache")
    assert outcome.skipped == after_term and outcome.ran == 10 - after_term
    same_contents(out, reference)


def test_cli_rejects_a_typo_before_any_work(sweep_dir, tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text((sweep_dir / "sweep.toml").read_text().replace("simd_width = [8, 32]", "simd_widht = [8, 32]")
                   .replace('"traces/*.h5"', f'"{sweep_dir}/traces/*.h5"'))
    out = tmp_path / "never.h5"
    result = CliRunner().invoke(app, ["sweep", str(bad), "-o", str(out), "--cache-dir", str(tmp_path / "c")])
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert lines == [f"error: {bad}:7: [grid] key 'simd_widht' is not a config field; did you mean 'simd_width'?"]
    assert not out.exists() and not (tmp_path / "c").exists()


def test_cli_sweep_dry_run_and_report(sweep_dir, reference, tmp_path):
    runner = CliRunner()
    dry = runner.invoke(app, ["sweep", str(sweep_dir / "sweep.toml"), "-o", str(tmp_path / "x.h5"), "--dry-run",
                              "--cache-dir", str(sweep_dir / "cache")])
    assert dry.exit_code == 0 and "10 points" in dry.output and not (tmp_path / "x.h5").exists()
    rep = runner.invoke(app, ["report", str(reference), "-o", str(tmp_path / "rep")])
    assert rep.exit_code == 0, rep.output
    for name in ("speedup.png", "simd_util.png", "summary.md", "index.html", "occupancy_w32.png"):
        assert (tmp_path / "rep" / name).stat().st_size > 0, name
    bad = runner.invoke(app, ["report", str(sweep_dir / "traces" / "syn0.h5"), "-o", str(tmp_path / "rep2")])
    assert bad.exit_code == 2 and "is a simt-fast trace file, not a results file" in bad.output


def test_workloads_are_traced_once_checked_and_cached(tmp_path):
    sweep = tmp_path / "w.toml"
    sweep.write_text('baseline = "sps"\nsize = "tiny"\nworkloads = ["shortcircuit", {name = "earlyexit", seed = 1}]\n'
                     '[grid]\nmechanism = ["sps", "mp"]\n')
    spec = load_sweep(sweep)
    assert [t.name for t in spec.traces] == ["shortcircuit", "earlyexit/tiny/s1"]
    events = []
    points = plan(spec, tmp_path / "cache", on_trace=lambda name, ev: events.append((name, ev)))
    assert events == [("shortcircuit", "tracing"), ("earlyexit/tiny/s1", "tracing")]
    cached = sorted((tmp_path / "cache" / "traces").glob("*.h5"))
    assert [p.name.split("-")[0] for p in cached] == ["earlyexit", "shortcircuit"]
    for p in points:  # the id's trace part is the cached trace's content digest
        assert p.trace_id == Trace.load(p.trace_path).digest()
    events.clear()
    again = plan(spec, tmp_path / "cache", on_trace=lambda name, ev: events.append((name, ev)))
    assert [e for _, e in events] == ["cached", "cached"]
    assert [p.point_id for p in again] == [p.point_id for p in points]
    outcome = run_points(points, tmp_path / "w.h5", jobs=1, baseline=spec.baseline)
    assert outcome.ran == 4 and not outcome.failed
    df = results.load(tmp_path / "w.h5")
    assert set(df["trace"]) == {"shortcircuit", "earlyexit/tiny/s1"} and df["speedup"].notna().all()
