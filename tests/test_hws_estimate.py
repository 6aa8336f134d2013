"""Eq. 6.1 HWS speedup estimate (Jin 2012, §6.1, Table 6.1): goldens, numpy and reference checks."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from simt_fast.sim import hws
from simt_fast.sim.reference import hws as ref
from simt_fast.sim.stats import Stats

from hypothesis_budget import examples


@pytest.mark.parametrize("fractions, printed", [
    ([0.062, 0.026, 0.006], 1.065),  # NQU, warp distribution for all stages
    ([0.058, 0.068, 0.067], 1.104),  # NQU, warp distribution at the last stage
])
def test_table_6_1_rows(fractions, printed):
    """Table 6.1: fractions of warps with 1, 2, 3 active quarters (the fourth column, 0.906 and
    0.807, is the unenhanced rest, 1 - sum); per-fraction speedups 4, 2, 1.33; printed speedup
    1.065 and 1.104. The exact 4/3 is used for three quarters; 1.33 would give the same
    rounding."""
    assert round(hws.estimate_speedup(fractions), 3) == printed
    assert hws.estimate_speedup(fractions) == pytest.approx(ref.estimate_speedup(fractions), rel=1e-15)


def test_table_6_1_from_a_quarter_histogram():
    """The same row fed through Stats.quarter_hist counts (per-mille of issued warp instructions)."""
    stats = Stats(quarter_hist=np.array([0, 62, 26, 6, 906], np.int64))
    assert round(hws.estimate_from_hist(stats.quarter_hist), 3) == 1.065


def test_estimate_limits():
    assert hws.estimate_speedup([0, 0, 0]) == 1.0  # every warp full: nothing to gain
    assert hws.estimate_speedup([1, 0, 0]) == 4.0  # every warp one quarter: 4 cycles -> 1
    assert hws.estimate_speedup([0, 0, 1]) == pytest.approx(4 / 3)
    assert hws.estimate_speedup([]) == 1.0  # warp_size == simd_width: a single quarter
    assert hws.estimate_speedup([0.5] + [0] * 6) == pytest.approx(1 / (0.5 + 0.5 / 8))  # 8 quarters


def test_estimate_from_occupancy_assumes_optimal_packing():
    """§6.1: only active-thread counts are known, so n threads are assumed to fill ceil(n/8) quarters."""
    occupancy = np.zeros(33, np.int64)
    occupancy[4] = 10  # 1 quarter
    occupancy[9] = 10  # 2 quarters
    occupancy[32] = 20  # 4 quarters
    expect = 1 / (0.5 + 0.25 / 4 + 0.25 / 2)
    assert hws.estimate_from_occupancy(occupancy, 8) == pytest.approx(expect)


@pytest.mark.parametrize("call, match", [
    (lambda: hws.estimate_speedup([0.5, 0.7]), "sum to 1.2"),
    (lambda: hws.estimate_speedup([-0.1]), r"fractions\[0\] = -0.1"),
    (lambda: hws.estimate_speedup([[0.1]]), "1-D"),
    (lambda: hws.estimate_speedup([float("nan")]), "finite"),
    (lambda: hws.estimate_from_hist([0, 0, 0]), "no warp instructions"),
    (lambda: hws.estimate_from_hist([3, 1, 1]), r"quarter_hist\[0\] = 3"),
    (lambda: hws.estimate_from_hist([0, -1, 2]), r"quarter_hist\[1\] is negative"),
    (lambda: hws.estimate_from_occupancy(np.ones(33), 5), "must divide the warp size 32"),
])
def test_bad_estimate_inputs_are_named(call, match):
    with pytest.raises(ValueError, match=match):
        call()


@examples(100)
@given(st.lists(st.integers(0, 1000), min_size=2, max_size=9).filter(lambda h: sum(h[1:]) > 0))
def test_estimate_from_hist_matches_numpy_amdahl(counts):
    hist = np.array([0] + counts[1:], np.int64)
    n_quarters = hist.size - 1
    share = hist[1:] / hist[1:].sum()
    # issue time relative to fixed-size warps: a k-quarter warp takes k/q of the time
    expect = 1.0 / np.sum(share * np.arange(1, n_quarters + 1) / n_quarters)
    assert hws.estimate_from_hist(hist) == pytest.approx(expect, rel=1e-12)
    assert hws.estimate_from_hist(hist) == pytest.approx(ref.estimate_speedup(list(share[:-1])), rel=1e-12)
