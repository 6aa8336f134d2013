"""DWF / en-DWF lane-aware merge (Jin 2012, §3.6, §4.4, Appendix B): goldens, properties, numba == reference."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given

from hws_strategies import HOLE, to_mask, warp_of, warp_pairs
from hypothesis_budget import examples
from simt_fast.sim import hws
from simt_fast.sim import warp_merge  # the merge rules the formation kernel runs, and their public API
from simt_fast.sim.reference import dwf as ref


PROPS = examples(150)


# Figure 4.5, as read from the text (warp size 32, SIMD width 8, rows = lanes).
FIG_4_5_FEMALE = warp_of([0, 1, 2] + list(range(8, 16)) + [20, 21, 22, 23, 27])  # warp 0
FIG_4_5_MALE = warp_of([36, 37, 38, 39, 52, 53, 54, 55, 56, 57, 58, 59])  # warp 1


def test_figure_4_5_dwf_fails_en_dwf_merges():
    """Figure 4.5: female warp 0 (forming, from the pool) and male warp 1 (incoming).

    How the figure is read: the text fixes the conflicts (threads 20-23 against 52-55, i.e.
    quarter 2 lanes 4-7, and thread 27 against 59, quarter 3 lane 3), that lanes 0-2 have no
    conflict, and that the first free position of lane 3 is quarter 0 (where 59 goes). The
    rest of the contents are chosen to be consistent: warp 0 = {0-2, 8-15, 20-23, 27}, warp 1 =
    {36-39, 52-59}; lane 3's quarter 0 is a hole in both warps, and in lanes 4-7 quarters 0 and
    1 are taken (by 36-39 and 12-15), so 52-55 go to quarter 3, the only free one. ("Threads
    20-23 can be assigned to other quarter-warps" in the text: Appendix B moves male threads
    only, so it is 52-55 that move.)
    """
    assert warp_merge.merge(FIG_4_5_MALE, FIG_4_5_FEMALE, 8, enhanced=False) is None
    merged, conflicts, moved = warp_merge.merge_count_conflicts(FIG_4_5_MALE, FIG_4_5_FEMALE, 8, enhanced=True)
    assert conflicts == 5 and moved == 5
    assert merged.tolist() == ([0, 1, 2, 59, 36, 37, 38, 39]
                               + list(range(8, 16))
                               + [HOLE, HOLE, HOLE, HOLE, 20, 21, 22, 23]
                               + [56, 57, 58, 27, 52, 53, 54, 55])
    assert merged[3] == 59  # "thread 59 is moved to the first quarter"
    # DWF reports the same conflicts, and refuses
    assert warp_merge.merge_count_conflicts(FIG_4_5_MALE, FIG_4_5_FEMALE, 8, enhanced=False)[1:] == (5, 0)
    assert warp_merge.can_merge(to_mask(FIG_4_5_MALE), to_mask(FIG_4_5_FEMALE), 32, 8, True)
    assert not warp_merge.can_merge(to_mask(FIG_4_5_MALE), to_mask(FIG_4_5_FEMALE), 32, 8, False)


def test_figure_4_6_en_dwf_and_hws_squeeze_merge_downscale():
    """Figure 4.6: en-DWF&HWS = squeeze the male warp, en-DWF merge, then downscale.

    How the figure is read: the male is the warp of Figure 4.3 ("the same warp … is used", see
    tests/test_hws_squeeze.py), squeezed to quarters 0-1. The female's contents are in the image
    only; this one (threads 32-35 in quarter 0 lanes 0-3 and 52-55 in quarter 2 lanes 4-7, from
    warp 1) conflicts with the squeezed male in lanes 0-3 of quarter 0, so DWF refuses, while
    en-DWF moves male threads 0, 1, 2, 27 to quarter 2, the first free quarter of their lanes.
    The merged warp fills quarters 0-2 and downscales to 24 threads (3 issue cycles instead of
    4 + 2 for the two warps issued separately under HWS).
    """
    from test_hws_squeeze import FIG_4_3_SQUEEZED, FIG_4_3_THREADS

    male = hws.squeeze(warp_of(FIG_4_3_THREADS), 8)  # step 1
    assert male.tolist() == FIG_4_3_SQUEEZED
    female = warp_of([32, 33, 34, 35, 52, 53, 54, 55])
    assert warp_merge.merge(male, female, 8, enhanced=False) is None
    merged, conflicts, moved = warp_merge.merge_count_conflicts(male, female, 8, enhanced=True)  # steps 2-3
    assert (conflicts, moved) == (4, 4)
    assert merged.tolist() == ([32, 33, 34, 35, 28, 21, 6, 7]
                               + [8, 9, 10, 11, 12, 13, 30, 23]
                               + [0, 1, 2, 27, 52, 53, 54, 55]
                               + [HOLE] * 8)
    assert hws.quarter_mask(to_mask(merged.tolist()), 32, 8) == 0b0111  # step 4
    assert hws.warp_size_after_scaling(merged, 8) == 24
    combined, squeezed, *counts = warp_merge.squeeze_and_merge(warp_of(FIG_4_3_THREADS), female, 8, enhanced=True)
    assert combined.tolist() == merged.tolist() and squeezed.tolist() == FIG_4_3_SQUEEZED and counts == [4, 4]
    # without the squeeze the merge still succeeds but the merged warp keeps all four quarters
    unsqueezed = warp_merge.merge(warp_of(FIG_4_3_THREADS), female, 8, enhanced=True)
    assert unsqueezed is not None and hws.active_quarters(unsqueezed, 8) == 4


def test_merge_of_two_complementary_halves_forms_a_full_warp():
    """§3.6 / Figure 3.8: W0:A-B and W1:A-B use complementary lanes, so DWF forms one full warp."""
    w0_b = warp_of([t for t in range(32) if t % 8 < 4])
    w1_b = warp_of([32 + t for t in range(32) if t % 8 >= 4])
    merged, conflicts, moved = warp_merge.merge_count_conflicts(w1_b, w0_b, 8, enhanced=False)
    assert (conflicts, moved) == (0, 0) and (merged >= 0).all()
    assert warp_merge.merge(w1_b, w0_b, 8, enhanced=True).tolist() == merged.tolist()


def test_en_dwf_fails_when_a_lane_overflows():
    """Lane 0 holds 3 female + 2 male threads > 4 quarters: no free position, merge refused."""
    female = warp_of([0, 8, 16])
    male = warp_of([32, 56])  # slots 0 and 24: slot 0 conflicts, lane 0 has no free quarter
    merged, conflicts, moved = warp_merge.merge_count_conflicts(male, female, 8, enhanced=True)
    assert merged is None and conflicts == 1 and moved == 0
    assert not warp_merge.can_merge(to_mask(male), to_mask(female), 32, 8, True)


@pytest.mark.parametrize("male, female, match", [
    (warp_of([0]), warp_of([0]), "thread 0 is in both the male and the female warp"),
    ([HOLE] * 16, [HOLE] * 32, "male_slots has shape"),
    ([1] + [HOLE] * 31, [HOLE] * 32, r"male_slots\[0\] holds thread 1"),
    ([HOLE] * 32, [0, 0] + [HOLE] * 30, "female_slots"),
])
def test_bad_pairs_are_named(male, female, match):
    with pytest.raises(ValueError, match=match):
        warp_merge.merge(male, female, 8, enhanced=True)


# ---------------------------------------------------------------------------------------------
# properties
# ---------------------------------------------------------------------------------------------
@PROPS
@given(warp_pairs())
# two conflicts in one lane (lane 0, quarters 0 and 1), two holes for them (quarters 2 and 3)
@example((warp_of([32, 40]), warp_of([0, 8]), 8))
def test_merge_numba_matches_reference(pair):
    """The merge the formation kernel runs (`warp_merge.merge_into`, here through the public function)
    gives the reference's merged warp and counts, or refuses exactly when it does."""
    male, female, simd = pair
    for enhanced in (False, True):
        got, conflicts, moved = warp_merge.merge_count_conflicts(male, female, simd, enhanced)
        exp, exp_conflicts, exp_moved = ref.merge_count_conflicts(male, female, simd, enhanced)
        assert (None if got is None else got.tolist()) == exp
        assert (conflicts, moved) == (exp_conflicts, exp_moved)


@PROPS
@given(warp_pairs())
def test_en_dwf_succeeds_whenever_dwf_does_and_agrees_with_it(pair):
    male, female, simd = pair
    plain = warp_merge.merge(male, female, simd, enhanced=False)
    enhanced = warp_merge.merge(male, female, simd, enhanced=True)
    if plain is not None:
        assert enhanced is not None and enhanced.tolist() == plain.tolist()  # no conflict, no move


@PROPS
@given(warp_pairs())
def test_merge_success_conditions(pair):
    """DWF merges iff no slot is taken twice; en-DWF iff no lane holds more than q threads."""
    male, female, simd = pair
    m, f = np.array(male) != HOLE, np.array(female) != HOLE
    n_quarters = len(male) // simd
    lane_load = (m.reshape(-1, simd).sum(0) + f.reshape(-1, simd).sum(0))
    assert (warp_merge.merge(male, female, simd, False) is not None) == (not (m & f).any())
    assert (warp_merge.merge(male, female, simd, True) is not None) == bool((lane_load <= n_quarters).all())
    for enhanced in (False, True):
        assert warp_merge.can_merge(to_mask(male), to_mask(female), len(male), simd, enhanced) == (
            warp_merge.merge(male, female, simd, enhanced) is not None)
    assert warp_merge.merge_count_conflicts(male, female, simd, True)[1] == int((m & f).sum())


@PROPS
@given(warp_pairs())
def test_merged_warp_is_the_union_with_every_thread_in_its_lane(pair):
    male, female, simd = pair
    for enhanced in (False, True):
        merged = warp_merge.merge(male, female, simd, enhanced)
        if merged is None:
            continue
        threads = [t for t in merged.tolist() if t != HOLE]
        assert sorted(threads) == sorted(t for t in male + female if t != HOLE)
        assert all(t % simd == s % simd for s, t in enumerate(merged.tolist()) if t != HOLE)
        # the female warp is the one being formed: its threads never move
        assert all(merged[s] == t for s, t in enumerate(female) if t != HOLE)


@examples(50)
@given(warp_pairs())
def test_batch_equals_one_by_one(pair):
    male, female, simd = pair
    rows_m = [male, female, male]
    rows_f = [female, [HOLE] * len(male), [HOLE] * len(male)]
    for enhanced in (False, True):
        out, ok, conflicts, moved = warp_merge.merge_batch(rows_m, rows_f, simd, enhanced)
        for w in range(3):
            exp, exp_conflicts, exp_moved = ref.merge_count_conflicts(rows_m[w], rows_f[w], simd, enhanced)
            assert ok[w] == (exp is not None)
            assert out[w].tolist() == (exp if exp is not None else [HOLE] * len(male))
            assert (conflicts[w], moved[w]) == (exp_conflicts, exp_moved)


@PROPS
@given(warp_pairs())
def test_squeeze_and_merge_is_squeeze_then_merge(pair):
    male, female, simd = pair
    for enhanced in (False, True):
        merged, squeezed, conflicts, moved = warp_merge.squeeze_and_merge(male, female, simd, enhanced)
        exp_squeezed = hws.squeeze(male, simd)
        exp, exp_conflicts, exp_moved = ref.merge_count_conflicts(exp_squeezed.tolist(), female, simd, enhanced)
        assert squeezed.tolist() == exp_squeezed.tolist()
        assert (None if merged is None else merged.tolist()) == exp and (conflicts, moved) == (exp_conflicts, exp_moved)
