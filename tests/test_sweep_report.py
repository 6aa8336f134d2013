"""Report numbers (checked against numpy) and which figures a results file can support."""

import numpy as np
import pandas as pd
import pytest

from simt_fast.report import tables, write_report
from simt_fast.results import ResultsWriter
from simt_fast.sim.config import SimConfig
from simt_fast.sim.stats import Stats


def test_harmonic_mean_matches_numpy():
    v = np.array([0.5, 1.0, 2.0, 4.0])
    assert tables.harmonic_mean(v) == pytest.approx(len(v) / np.sum(1 / v))
    assert tables.harmonic_mean([2.0, np.nan]) == pytest.approx(2.0)  # missing points do not count
    assert np.isnan(tables.harmonic_mean([]))
    assert np.isnan(tables.harmonic_mean([1.0, 0.0]))


def _frame():
    rows = []
    rng = np.random.default_rng(3)
    for trace in ("a", "b", "c"):
        for mech in ("mp", "sps"):
            for sw in (8, 32):
                rows.append({**SimConfig(mechanism=mech, simd_width=sw).to_dict(), "trace": trace,
                             "trace_id": trace, "speedup": rng.uniform(0.5, 3), "simd_util": rng.uniform(0, 1),
                             "cycles": int(rng.integers(100, 200)), "idle_cycles": int(rng.integers(0, 50))})
    return pd.DataFrame(rows)


def test_pivot_per_panel_with_harmonic_and_arithmetic_means():
    df = _frame()
    assert tables.panel_fields(df) == ["simd_width"]
    panels = tables.panels(df)
    assert [t for t, _ in panels] == ["simd_width=8", "simd_width=32"]
    for title, sub in panels:
        sp = tables.pivot(sub, "speedup", "harmonic")
        assert list(sp.columns) == ["sps", "mp"]  # registry order, not alphabetical
        assert list(sp.index) == ["a", "b", "c", "HM"]
        for mech in ("sps", "mp"):
            vals = sub[sub.mechanism == mech].sort_values("trace")["speedup"].to_numpy()
            np.testing.assert_allclose(sp[mech].iloc[:3], vals)
            assert sp.loc["HM", mech] == pytest.approx(3 / np.sum(1 / vals))
        util = tables.pivot(sub, "simd_util", "arithmetic")
        assert util.loc["AM", "mp"] == pytest.approx(sub[sub.mechanism == "mp"]["simd_util"].mean())
    frac = tables.idle_fraction(df)
    np.testing.assert_allclose(frac, df["idle_cycles"] / (df["cycles"] * df["n_sms"]))


def test_occupancy_bins_and_quarter_fractions():
    hist = np.zeros(33, np.int64)
    hist[[1, 4, 5, 32]] = [2, 3, 5, 10]
    labels, frac = tables.occupancy_bins(hist)
    assert labels[0] == "1-4" and labels[-1] == "29-32" and len(labels) == 8
    np.testing.assert_allclose(frac, np.array([5, 5, 0, 0, 0, 0, 0, 10]) / 20)
    np.testing.assert_allclose(tables.quarter_fractions([0, 1, 1, 0, 2]), [0.25, 0.25, 0, 0.5])


def test_report_draws_only_what_the_results_support(tmp_path):
    path = tmp_path / "r.h5"
    with ResultsWriter(path) as w:  # no baseline, SIMD width = warp size: no speedup, no quarters
        for i, mech in enumerate(("sps", "mp")):
            occ = np.zeros(33, np.int64)
            occ[[8, 32]] = [3 + i, 5]
            st = Stats(cycles=100 - 10 * i, warp_insts=8 + i, thread_insts=184, occupancy_hist=occ,
                       quarter_hist=np.array([0, 8 + i]))
            w.append(f"p{i}", "d", "k", SimConfig(mechanism=mech).to_dict(), st.finalize(32))
    written = {p.name for p in write_report(path, tmp_path / "rep")}
    assert written == {"simd_util.png", "occupancy_w32.png", "summary.md", "index.html"}
    md = (tmp_path / "rep" / "summary.md").read_text()
    assert "| k | 0.719 | 0.639 |" in md  # 184/(8*32), 184/(9*32)
    written = {p.name for p in write_report(path, tmp_path / "rep2", baseline="sps")}
    assert "speedup.png" in written
    md = (tmp_path / "rep2" / "summary.md").read_text()
    assert "| **HM** | 1.000 | 1.111 |" in md  # 100/90


def test_hws_comparison_pairs_plain_and_hws_rows_and_applies_eq_6_1():
    from simt_fast.sim.hws import estimate_from_hist

    rows = []
    for trace, q, plain, squeezed in (("a", [0, 6, 2, 0, 2], 1000, 800), ("b", [0, 0, 0, 0, 5], 500, 500)):
        for hws, cycles in ((False, plain), (True, squeezed)):
            rows.append({**SimConfig(mechanism="sps", simd_width=8, hws=hws).to_dict(), "trace": trace,
                         "trace_id": trace, "cycles": cycles, "quarter_hist": np.array(q)})
    comp = tables.hws_comparison(pd.DataFrame(rows)).set_index("trace")
    assert comp.loc["a", "measured"] == pytest.approx(1000 / 800)
    assert comp.loc["a", "estimate"] == pytest.approx(estimate_from_hist([0, 6, 2, 0, 2]))
    # Eq. 6.1 by hand: 60% of warps need 1 of 4 quarters, 20% need 2 -> 1 / (0.2 + 0.6/4 + 0.2/2)
    assert comp.loc["a", "estimate"] == pytest.approx(1 / (0.2 + 0.6 / 4 + 0.2 / 2))
    assert comp.loc["b", "estimate"] == pytest.approx(1.0) and comp.loc["b", "measured"] == pytest.approx(1.0)
    np.testing.assert_allclose(comp.loc["a", "quarters"], [0.6, 0.2, 0.0, 0.2])


def test_sectors_per_request_table_only_for_runs_with_the_memory_model(tmp_path):
    df = pd.DataFrame({"mem_requests": [10, 0, 4], "mem_sectors": [45, 0, 128]})
    np.testing.assert_allclose(tables.sectors_per_request(df), [4.5, np.nan, 32.0])
    path = tmp_path / "r.h5"
    with ResultsWriter(path) as w:
        for i, mech in enumerate(("sps", "dwf")):
            st = Stats(cycles=100, warp_insts=8, thread_insts=184, mem_requests=4, mem_sectors=16 + 8 * i,
                       occupancy_hist=np.zeros(33, np.int64), quarter_hist=np.array([0, 8]))
            w.append(f"p{i}", "d", "k", SimConfig(mechanism=mech).to_dict(), st.finalize(32))
    write_report(path, tmp_path / "rep")
    md = (tmp_path / "rep" / "summary.md").read_text()
    assert "Sectors per memory request" in md and "| k | 4.00 | 6.00 |" in md
    no_model = tmp_path / "n.h5"
    with ResultsWriter(no_model) as w:
        w.append("p0", "d", "k", SimConfig().to_dict(), Stats(cycles=100, warp_insts=8, thread_insts=184,
                 occupancy_hist=np.zeros(33, np.int64), quarter_hist=np.array([0, 8])).finalize(32))
    write_report(no_model, tmp_path / "rep2")
    assert "Sectors per memory request" not in (tmp_path / "rep2" / "summary.md").read_text()
