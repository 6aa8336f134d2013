"""The results store: round trip, speedup, histograms, SWMR reading, crash recovery, clear errors."""

import json
import os
import subprocess
import sys
import textwrap

import h5py
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from simt_fast import results
from simt_fast.results import ResultsError, ResultsWriter
from simt_fast.sim.config import SimConfig
from simt_fast.sim.stats import SCALAR_STATS, Stats

from hypothesis_budget import examples


def _stats(rng, warp_size=32, n_quarters=4):
    occ = rng.integers(0, 50, warp_size + 1)
    occ[0] = 0
    q = rng.integers(0, 50, n_quarters + 1)
    q[0] = 0
    s = Stats(cycles=int(rng.integers(100, 10_000)), warp_insts=int(rng.integers(1, 500)),
              thread_insts=int(rng.integers(1, 5000)), idle_cycles=int(rng.integers(0, 50)),
              max_splits=int(rng.integers(0, 9)), occupancy_hist=occ, quarter_hist=q)
    return s.finalize(warp_size)


def _fill(path, rows=12, seed=0, baseline=None):
    """Rows for 2 traces x 3 mechanisms x 2 warp sizes; returns what was written."""
    rng = np.random.default_rng(seed)
    written = []
    with ResultsWriter(path, baseline=baseline) as w:
        for trace in ("t0", "t1"):
            for mech in ("sps", "mp", "mimd"):
                for ws in (16, 32):
                    if len(written) == rows:
                        return written
                    cfg = SimConfig(mechanism=mech, warp_size=ws, simd_width=8)
                    st = _stats(rng, ws, cfg.n_quarters)
                    pid = f"{trace}-{mech}-{ws}"
                    w.append(pid, f"digest-{trace}", trace, cfg.to_dict(), st, sim_seconds=0.5)
                    written.append((pid, trace, cfg, st))
    return written


def test_round_trip_every_column_and_histogram(tmp_path):
    path = tmp_path / "r.h5"
    written = _fill(path)
    df = results.load(path, hist=True)
    assert list(df["point_id"]) == sorted(p for p, *_ in written)
    by_id = df.set_index("point_id")
    for pid, trace, cfg, st in written:
        row = by_id.loc[pid]
        assert row["trace"] == trace and row["trace_id"] == f"digest-{trace}"
        for k, v in cfg.to_dict().items():
            assert row[k] == v, k
        for k in SCALAR_STATS:
            assert row[k] == pytest.approx(getattr(st, k)), k
        np.testing.assert_array_equal(row["occupancy_hist"], st.occupancy_hist)
        np.testing.assert_array_equal(row["quarter_hist"], st.quarter_hist)
    hist = results.load_hist(path, "occupancy_hist")
    np.testing.assert_array_equal(hist.loc["t0-sps-16"], written[0][3].occupancy_hist)
    assert len(hist["t0-sps-32"]) == 33
    with pytest.raises(ResultsError, match="no histogram 'nope'"):
        results.load_hist(path, "nope")
    f = h5py.File(path, "r", swmr=True)
    assert f.attrs["schema"] == "simt-fast/results/1" and "host" in f.attrs and "created" in f.attrs
    assert f["hist/occupancy_hist"].shape == (12, results.HIST_WIDTH)
    f.close()


def test_speedup_is_baseline_cycles_over_cycles_for_the_same_trace_and_machine(tmp_path):
    path = tmp_path / "r.h5"
    written = _fill(path, baseline={"mechanism": "sps"})
    df = results.load(path)
    cycles = {(t, c.mechanism, c.warp_size): s.cycles for _, t, c, s in written}
    for _, row in df.iterrows():
        expected = cycles[(row["trace"], "sps", row["warp_size"])] / cycles[(row["trace"], row["mechanism"],
                                                                              row["warp_size"])]
        assert row["speedup"] == pytest.approx(expected)
    # another baseline, given when loading; a missing baseline point gives NaN
    df_mp = results.load(path, baseline={"mechanism": "mp"})
    assert np.allclose(df_mp.loc[df_mp.mechanism == "mp", "speedup"], 1.0)
    partial = tmp_path / "p.h5"
    _fill(partial, rows=3, baseline={"mechanism": "mp"})  # t0: sps16, sps32, mp16 only
    d = results.load(partial).set_index("point_id")
    assert d.loc["t0-sps-16", "speedup"] == pytest.approx(d.loc["t0-mp-16", "cycles"] / d.loc["t0-sps-16", "cycles"])
    assert np.isnan(d.loc["t0-sps-32", "speedup"])


def test_reader_sees_rows_while_the_writer_is_open(tmp_path):
    path = tmp_path / "r.h5"
    rng = np.random.default_rng(1)
    with ResultsWriter(path) as w:
        for i in range(3):
            w.append(f"p{i}", "d", "t", SimConfig().to_dict(), _stats(rng))
        assert len(results.load(path)) == 3  # SWMR read while the file is open for writing
        w.append("p3", "d", "t", SimConfig().to_dict(), _stats(rng))
        assert list(results.load(path)["point_id"]) == ["p0", "p1", "p2", "p3"]
        with pytest.raises(ResultsError, match="another simt-fast process is writing"):
            ResultsWriter(path)
        assert w.append("p3", "d", "t", SimConfig().to_dict(), _stats(rng)) is False  # already stored
    with ResultsWriter(path) as w:  # reopening keeps the rows and knows their ids
        assert w.ids == {"p0", "p1", "p2", "p3"}


def test_writer_killed_without_closing_is_recovered(tmp_path):
    path = tmp_path / "r.h5"
    code = textwrap.dedent(f"""
        import os
        from simt_fast.results import ResultsWriter
        from simt_fast.sim.config import SimConfig
        from simt_fast.sim.stats import Stats
        w = ResultsWriter({str(path)!r})
        for i in range(5):
            w.append(f"p{{i}}", "d", "t", SimConfig().to_dict(), Stats(cycles=10 + i))
        os._exit(0)  # like kill -9: no close, the file stays flagged open-for-write
    """)
    subprocess.run([sys.executable, "-W", "ignore", "-c", code], check=True)
    with pytest.raises(OSError):
        h5py.File(path, "r+").close()
    assert list(results.load(path)["cycles"]) == [10, 11, 12, 13, 14]
    with ResultsWriter(path) as w:
        assert w.recovered and len(w.ids) == 5
        w.append("p5", "d", "t", SimConfig().to_dict(), Stats(cycles=15))
    assert list(results.load(path)["cycles"]) == [10, 11, 12, 13, 14, 15]


def _hold_open_for_reading(path, seconds):
    """Another process that keeps ``path`` open for reading (HDF5's shared lock) for ``seconds``."""
    code = textwrap.dedent(f"""
        import sys, time, h5py
        f = h5py.File({str(path)!r}, "r")
        print("open", flush=True)
        time.sleep({seconds})
        f.close()
    """)
    proc = subprocess.Popen([sys.executable, "-W", "ignore", "-c", code], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "open"
    return proc


def test_writer_waits_while_a_reader_holds_the_file(tmp_path):
    # A sweep resuming into a file that `simt-fast report` (or anything else) is reading for a moment
    # waits for it instead of failing (found as a flaky resume test: the test's own polling reader).
    path = tmp_path / "r.h5"
    _fill(path, rows=3)
    reader = _hold_open_for_reading(path, 0.5)
    try:
        with ResultsWriter(path) as w:
            assert len(w.ids) == 3
            w.append("late", "d", "t", SimConfig().to_dict(), Stats(cycles=7))
    finally:
        reader.wait(10)
    assert len(results.load(path)) == 4


def test_writer_locked_out_too_long_gets_one_clear_sentence(tmp_path, monkeypatch):
    path = tmp_path / "r.h5"
    _fill(path, rows=2)
    monkeypatch.setattr(results, "LOCK_WAIT_SECONDS", 0.3)
    reader = _hold_open_for_reading(path, 3)
    try:
        with pytest.raises(ResultsError) as excinfo:
            ResultsWriter(path)
    finally:
        reader.kill()
        reader.wait(10)
    _one_sentence(excinfo, str(path), "locked by another process")


def _one_sentence(excinfo, *fragments):
    msg = str(excinfo.value)
    assert "\n" not in msg and "Traceback" not in msg
    for f in fragments:
        assert f in msg, msg


def test_corrupt_foreign_and_newer_files_get_one_clear_sentence(tmp_path):
    garbage = tmp_path / "garbage.h5"
    garbage.write_bytes(os.urandom(4096))
    with pytest.raises(ResultsError) as e:
        results.load(garbage)
    _one_sentence(e, "garbage.h5", "not an HDF5 file")

    good = tmp_path / "good.h5"
    _fill(good, rows=4)
    truncated = tmp_path / "truncated.h5"
    truncated.write_bytes(good.read_bytes()[:1500])
    with pytest.raises(ResultsError) as e:
        results.load(truncated)
    _one_sentence(e, "truncated.h5")

    foreign = tmp_path / "foreign.h5"
    with h5py.File(foreign, "w") as f:
        f["data"] = np.arange(3)
    with pytest.raises(ResultsError) as e:
        results.load(foreign)
    _one_sentence(e, "foreign.h5", "not a simt-fast results file")

    other = tmp_path / "other.h5"
    with h5py.File(other, "w") as f:
        f.attrs["schema"] = "someone-else/1"
    with pytest.raises(ResultsError) as e:
        results.load(other)
    _one_sentence(e, "not a simt-fast results schema")

    from simt_fast.trace import synthetic

    trace = tmp_path / "trace.h5"
    synthetic(6, 8, seed=0).save(trace)
    with pytest.raises(ResultsError) as e:
        results.load(trace)
    _one_sentence(e, "is a simt-fast trace file, not a results file")

    newer = tmp_path / "newer.h5"
    _fill(newer, rows=2)
    with h5py.File(newer, "r+") as f:
        f.attrs["schema"] = "simt-fast/results/7"
    with pytest.raises(ResultsError) as e:
        results.load(newer)
    _one_sentence(e, "version 7", "upgrade simt-fast")
    with pytest.raises(ResultsError, match="version 7"):
        ResultsWriter(newer)

    with pytest.raises(ResultsError, match="does not exist"):
        results.load(tmp_path / "missing.h5")


def test_merge_deduplicates_and_refuses_other_layouts(tmp_path):
    a, b, out = tmp_path / "a.h5", tmp_path / "b.h5", tmp_path / "out.h5"
    written = _fill(a, rows=8, baseline={"mechanism": "sps"})
    _fill(b, rows=12, baseline={"mechanism": "sps"})  # same seed: rows 0..7 are the same points
    counts = results.merge(out, [a, b])
    assert counts == {"inputs": 2, "rows_read": 20, "added": 12, "duplicates": 8, "total": 12}
    merged = results.contents(out)
    import pandas as pd

    pd.testing.assert_frame_equal(merged, results.contents(b))
    assert results.load(out).attrs["baseline"] == {"mechanism": "sps"}
    assert len(written) == 8

    odd = tmp_path / "odd.h5"
    with h5py.File(odd, "w", libver="latest") as f:
        f.attrs["schema"] = results.SCHEMA
        f.create_dataset("runs", data=np.zeros(2, [("point_id", "S32"), ("cycles", "i8")]))
    with pytest.raises(ResultsError, match="different results layout"):
        results.merge(tmp_path / "out2.h5", [a, odd])
    with pytest.raises(ResultsError, match="both the output and an input"):
        results.merge(a, [a, b])


_MECHS = ["serial", "sps", "mp", "mimd"]


def _brute_speedup(rows, baseline):
    """Speedup by the definition: scan every row for the baseline twin of each row."""
    out = []
    for r in rows:
        want = {**r["config"], **baseline}
        twin = [b for b in rows if b["trace_id"] == r["trace_id"] and b["config"] == want]
        out.append(twin[0]["cycles"] / r["cycles"] if twin else float("nan"))
    return out


@examples(25)
@given(st.lists(st.tuples(st.sampled_from(["t0", "t1"]), st.sampled_from(_MECHS), st.sampled_from([8, 16, 32]),
                          st.integers(1, 10**9), st.lists(st.integers(0, 10**6), min_size=0, max_size=65)),
                min_size=1, max_size=20, unique_by=lambda r: r[:3]),
       st.sampled_from(_MECHS))
def test_random_rows_round_trip_and_speedup_matches_brute_force(tmp_path_factory, rows, base_mech):
    path = tmp_path_factory.mktemp("prop") / "r.h5"
    written = []
    with ResultsWriter(path, baseline={"mechanism": base_mech}) as w:
        for i, (trace, mech, sw, cycles, hist) in enumerate(rows):
            cfg = SimConfig(mechanism=mech, simd_width=sw).to_dict()
            w.append(f"{i:08d}", trace, trace, cfg, Stats(cycles=cycles, occupancy_hist=np.array(hist, np.int64)))
            written.append({"trace_id": trace, "config": cfg, "cycles": cycles, "hist": hist})
    df = results.load(path, hist=True)
    assert list(df["cycles"]) == [r["cycles"] for r in written]  # ids were written in sorted order
    for got, r in zip(df["occupancy_hist"], written):
        assert got.tolist() == r["hist"]
    np.testing.assert_allclose(df["speedup"], _brute_speedup(written, {"mechanism": base_mech}))


def test_a_baseline_without_hws_implies_the_switches_only_hws_has():
    """hws_squeeze = false and hws_sync_sms = true need hws = true (check_config): the baseline point of
    PDOM&HWS without the squeeze, for a baseline of PDOM without HWS, is PDOM without HWS."""
    import pandas as pd

    assert results.implied_baseline({"mechanism": "sps", "hws": False}) == {
        "mechanism": "sps", "hws": False, "hws_sync_sms": False, "hws_squeeze": True}
    assert results.implied_baseline({"mechanism": "sps"}) == {"mechanism": "sps"}  # hws may be on: nothing implied
    assert results.implied_baseline({"mechanism": "mp"})["hws"] is False  # mp has no HWS
    df = pd.DataFrame({"trace_id": ["t"] * 4, "mechanism": ["sps"] * 4, "hws": [False, True, True, True],
                       "hws_sync_sms": [False, False, True, False], "hws_squeeze": [True, True, True, False],
                       "cycles": [100, 80, 90, 95]})
    np.testing.assert_allclose(results.speedup(df, {"mechanism": "sps", "hws": False}),
                               [1.0, 100 / 80, 100 / 90, 100 / 95])
    np.testing.assert_allclose(results.speedup(df, {"mechanism": "sps"}), [1.0, 1.0, 1.0, 1.0])  # each its own
