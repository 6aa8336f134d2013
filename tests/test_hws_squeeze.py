"""HWS squeeze and warp scaling (Jin 2012, §4.1-4.2, Appendix A and C): goldens, properties, numba == reference."""

from __future__ import annotations

import numba
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from hws_strategies import HOLE, to_mask, warp_of, warps
from hypothesis_budget import examples
from simt_fast.sim import hws
from simt_fast.sim.reference import hws as ref

PROPS = examples(150)


# ---------------------------------------------------------------------------------------------
# goldens from the figures of Jin 2012
# ---------------------------------------------------------------------------------------------
def test_figure_4_1_warps_b_and_c_scale_to_8_and_24_threads():
    """Figure 4.1: one 32-thread warp diverges into warp B and warp C (SIMD width 8, rows = lanes).

    How the figure is read: the text says threads 12-15 are squeezed into the first
    quarter-warp and B then has 8 threads. 12-15 sit in lanes 4-7 of quarter 1, so lanes 4-7 of
    quarter 0 are B's holes and lanes 0-3 of quarter 0 must already hold B's other four threads
    (0-3): B = {0-3, 12-15}. C is the other path of the same warp, {4-11, 16-31}, and must end
    with 24 threads. Conventional issue takes 4 + 4 cycles, HWS 1 + 3: "four execution cycles
    are saved".
    """
    b = warp_of([0, 1, 2, 3, 12, 13, 14, 15])
    c = warp_of(list(range(4, 12)) + list(range(16, 32)))
    b_sq, b_moves = hws.squeeze_count_moves(b, 8)
    c_sq, c_moves = hws.squeeze_count_moves(c, 8)
    assert b_sq.tolist()[:8] == [0, 1, 2, 3, 12, 13, 14, 15] and (b_sq[8:] == HOLE).all()
    assert b_moves == 4
    # C: quarters 2 and 3 are full and rank first; quarter 0 (4-7 in lanes 4-7) is the recipient
    # of 8-11 from quarter 1, the emptiest quarter that ranks last in the exchange sort
    assert c_sq.tolist() == [8, 9, 10, 11, 4, 5, 6, 7] + [HOLE] * 8 + list(range(16, 32))
    assert c_moves == 4
    assert hws.warp_size_after_scaling(b, 8) == 16  # before squeezing: two quarters
    assert hws.warp_size_after_scaling(b_sq, 8) == 8
    assert hws.warp_size_after_scaling(c_sq, 8) == 24
    conventional = 2 * (32 // 8)
    hybrid = hws.active_quarters(b_sq, 8) + hws.active_quarters(c_sq, 8)
    assert conventional - hybrid == 4


FIG_4_3_THREADS = [8, 9, 10, 11, 12, 13,  # quarter 1: 6 threads, holes in lanes 6, 7 -> rank #0
                   0, 1, 2, 6, 7,  # quarter 0: 5 threads, holes in lanes 3, 4, 5 -> rank #1
                   27, 28, 30,  # quarter 3: 3 threads -> rank #2
                   21, 23]  # quarter 2: 2 threads -> rank #3
FIG_4_3_SQUEEZED = [0, 1, 2, 27, 28, 21, 6, 7, 8, 9, 10, 11, 12, 13, 30, 23] + [HOLE] * 16


def test_figure_4_3_squeeze_reaches_quarter_mask_0011_and_warp_size_16():
    """Figure 4.3: a 32-thread warp, SIMD width 8, all four quarters active.

    How the figure is read: the text gives its outcome (all threads end in quarters #0 and #1,
    mask 0011, warp size 16, reached "after the second cycle", i.e. after recipient #0 and then
    recipient #1 are filled) and says the sort relabels quarters, but the slot contents are in
    the image only. This warp is reconstructed to have exactly those properties: distinct
    quarter counts 5, 6, 2, 3 whose ranking (#0 = q1, #1 = q0, #2 = q3, #3 = q2) differs from
    the physical order, at most two threads per lane (so two quarters suffice), and holes in
    both #0 and #1 so both squeeze cycles are needed. The physical mask of the result is 0011
    because #0 and #1 are physical quarters 1 and 0.
    """
    warp = warp_of(FIG_4_3_THREADS)
    assert ref.quarter_counts(warp, 8) == [5, 6, 2, 3]
    assert ref.quarter_rank_order([5, 6, 2, 3]) == [1, 0, 3, 2]
    assert hws.active_quarters(warp, 8) == 4
    squeezed, moves = hws.squeeze_count_moves(warp, 8)
    # cycle 1: #0 (q1) takes lane 7 from #3 (q2, thread 23) and lane 6 from #2 (q3, thread 30);
    # cycle 2: #1 (q0) takes lanes 3, 4 from #2 (27, 28) and lane 5 from #3 (21)
    assert squeezed.tolist() == FIG_4_3_SQUEEZED
    assert moves == 5
    assert hws.quarter_mask(to_mask(squeezed), 32, 8) == 0b0011
    assert hws.warp_size_after_scaling(squeezed, 8) == 16
    assert hws.squeezed_quarter_count(to_mask(warp), 32, 8) == 2
    assert hws.squeeze_mask(to_mask(warp), 32, 8) == to_mask(FIG_4_3_SQUEEZED)


def test_exchange_sort_tie_break_matches_appendix_a():
    """Appendix A's exchange sort is not stable: counts [1, 1, 2] rank quarters as [2, 1, 0]."""
    assert ref.quarter_rank_order([1, 1, 2]) == [2, 1, 0]
    counts = np.array([1, 1, 2], np.int64)
    order = np.empty(3, np.int64)
    hws._rank_quarters(counts, order, 3)
    assert order.tolist() == [2, 1, 0] and counts.tolist() == [2, 1, 1]
    # the tie decides where threads go: q1 (rank 1) receives lane 0 from q0 (rank 2), not vice versa
    warp = [0, HOLE, HOLE, 3, 4, 5]  # simd 2: q0 = {0}, q1 = {3}, q2 = {4, 5}
    assert hws.squeeze(warp, 2).tolist() == [HOLE, HOLE, 0, 3, 4, 5]


def test_squeeze_of_full_and_empty_warps_moves_nothing():
    full = list(range(32))
    out, moves = hws.squeeze_count_moves(full, 8)
    assert out.tolist() == full and moves == 0
    empty = [HOLE] * 32
    out, moves = hws.squeeze_count_moves(empty, 8)
    assert moves == 0 and (out == HOLE).all() and hws.active_quarters(out, 8) == 0


# ---------------------------------------------------------------------------------------------
# input validation: one sentence naming the fault
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("slots, simd, match", [
    ([0, 1, 2], 2, "not a positive multiple of simd_width 2"),
    ([0.0, 1.0], 2, "integer thread ids"),
    ([[0, 1]], 2, "1-D array"),
    ([0, -2], 2, r"slots\[1\] = -2"),
    ([1, HOLE], 2, r"slots\[0\] holds thread 1, whose lane is 1"),
    ([0, 1, 0, HOLE], 2, r"thread 0 appears twice in slots \(at slots\[0\] and slots\[2\]\)"),
    ([0, 1], 0, "simd_width must be a positive integer"),
])
def test_bad_slots_are_named(slots, simd, match):
    with pytest.raises(ValueError, match=match):
        hws.squeeze(slots, simd)


def test_bad_batch_names_row_and_slot():
    with pytest.raises(ValueError, match=r"slots\[1, 0\] holds thread 3"):
        hws.squeeze_batch([[0, 1], [3, HOLE]], 2)


def test_mask_forms_reject_impossible_shapes():
    with pytest.raises(ValueError, match="warp_size"):
        hws.quarter_mask(1, 65, 8)
    with pytest.raises(ValueError, match="divide"):
        hws.squeeze_mask(1, 12, 8)


# ---------------------------------------------------------------------------------------------
# properties
# ---------------------------------------------------------------------------------------------
@PROPS
@given(warps())
def test_squeeze_numba_matches_reference(warp):
    slots, simd = warp
    out, moves = hws.squeeze_count_moves(slots, simd)
    ref_out, ref_moves = ref.squeeze_with_moves(slots, simd)
    assert out.tolist() == ref_out and moves == ref_moves


@PROPS
@given(warps())
def test_squeeze_keeps_lanes_and_threads_and_never_adds_quarters(warp):
    slots, simd = warp
    out = hws.squeeze(slots, simd)
    lanes = np.arange(len(slots)) % simd
    before = {t: s % simd for s, t in enumerate(slots) if t != HOLE}
    after = {int(t): int(lanes[s]) for s, t in enumerate(out) if t != HOLE}
    assert after == before  # same threads, each still in its lane (no register-bank conflict)
    assert hws.active_quarters(out, simd) <= hws.active_quarters(slots, simd)
    # only active quarters receive threads: a quarter empty before stays empty
    before_q = ref.quarter_mask(slots, simd)
    assert int(hws.quarter_mask(to_mask(out.tolist()), len(slots), simd)) & ~before_q == 0


@PROPS
@given(warps())
def test_squeeze_is_idempotent_and_optimal(warp):
    slots, simd = warp
    once, _ = hws.squeeze_count_moves(slots, simd)
    twice, moves = hws.squeeze_count_moves(once, simd)
    assert twice.tolist() == once.tolist() and moves == 0
    # the densest lane-preserving layout needs as many quarters as the fullest lane has threads
    per_lane = np.bincount(np.flatnonzero(np.array(slots) != HOLE) % simd, minlength=simd)
    assert hws.active_quarters(once, simd) == per_lane.max()


@PROPS
@given(warps())
def test_squeeze_moves_only_threads_from_lower_ranked_quarters(warp):
    """Every move goes from a quarter ranked below the recipient (emptiest -> fullest)."""
    slots, simd = warp
    out = hws.squeeze(slots, simd)
    order = ref.quarter_rank_order(ref.quarter_counts(slots, simd))
    rank = {q: r for r, q in enumerate(order)}
    where_before = {t: s for s, t in enumerate(slots) if t != HOLE}
    for s, t in enumerate(out.tolist()):
        if t != HOLE and where_before[t] != s:
            assert slots[s] == HOLE
            assert rank[s // simd] < rank[where_before[t] // simd]


@PROPS
@given(warps())
def test_squeeze_moves_exactly_the_threads_outside_their_lanes_top_quarters(warp):
    """Objective 3: a lane with m threads ends in the m top-ranked quarters, and a thread moves
    iff its quarter ranks m or below; so each lane moves the fewest threads that layout needs."""
    slots, simd = warp
    out, moves = hws.squeeze_count_moves(slots, simd)
    order = ref.quarter_rank_order(ref.quarter_counts(slots, simd))
    rank = {q: r for r, q in enumerate(order)}
    lane_pop = np.bincount(np.flatnonzero(np.array(slots) != HOLE) % simd, minlength=simd)
    must_move = {t for s, t in enumerate(slots) if t != HOLE and rank[s // simd] >= lane_pop[s % simd]}
    moved = {t for s, t in enumerate(slots) if t != HOLE and out[s] != t}
    assert moved == must_move and moves == len(moved)
    for s, t in enumerate(out.tolist()):
        assert (t != HOLE) == (rank[s // simd] < lane_pop[s % simd])


@PROPS
@given(warps())
def test_mask_forms_agree_with_slot_form_and_numpy(warp):
    slots, simd = warp
    warp_size = len(slots)
    mask = to_mask(slots)
    squeezed = hws.squeeze(slots, simd)
    assert hws.squeeze_mask(mask, warp_size, simd) == to_mask(squeezed.tolist())
    assert hws.squeezed_quarter_count(mask, warp_size, simd) == hws.active_quarters(squeezed, simd)
    by_quarter = (np.array(slots) != HOLE).reshape(-1, simd).any(axis=1)
    assert hws.quarter_mask(mask, warp_size, simd) == sum(1 << q for q in np.flatnonzero(by_quarter))
    assert hws.active_quarters(slots, simd) == by_quarter.sum() == ref.active_quarters(slots, simd)


@examples(100)
@given(st.integers(0, 2**64 - 1), st.integers(1, 64), st.integers(1, 64))
def test_quarter_mask_handles_any_shape_including_partial_quarters(mask, warp_size, simd):
    bits = [(mask >> s) & 1 for s in range(warp_size)]
    n_quarters = -(-warp_size // simd)
    expect = sum(1 << q for q in range(n_quarters) if any(bits[q * simd:(q + 1) * simd]))
    assert hws.quarter_mask(mask, warp_size, simd) == expect


@examples(50)
@given(st.lists(warps(max_warp_size=32), min_size=1, max_size=6), st.sampled_from([1, 2, 4, 8]))
def test_batch_equals_one_by_one(warp_list, simd):
    rows = [ref.mask_to_slots(to_mask(s), 32) for s, _ in warp_list]
    out, moves = hws.squeeze_batch(rows, simd)
    for row, got, m in zip(rows, out, moves):
        exp, exp_moves = ref.squeeze_with_moves(row, simd)
        assert got.tolist() == exp and m == exp_moves
    assert hws.active_quarters_batch(out, simd).tolist() == [ref.active_quarters(r, simd) for r in out.tolist()]


def test_kernels_are_callable_from_numba_code():
    """The timing core will call these from its own @jit loops: plain arrays/ints in and out."""
    from simt_fast.sim.warp_merge import _merge_into, lanes_fit

    @numba.njit
    def core_like(slots, simd_width, out, female):
        moves = hws._squeeze_into(slots, out, simd_width)
        mask = np.uint64(0)
        for s in range(out.shape[0]):
            if out[s] >= 0:
                mask |= np.uint64(1) << np.uint64(s)
        merged = np.empty_like(out)
        ok, conflicts, moved = _merge_into(out, female, merged, simd_width, True)
        return (moves, hws.quarter_mask(mask, out.shape[0], simd_width),
                hws.squeezed_quarter_count(mask, out.shape[0], simd_width),
                hws.squeeze_mask(mask, out.shape[0], simd_width), hws._active_quarters(out, simd_width),
                lanes_fit(np.int64(mask), np.int64(0), out.shape[0], simd_width, True), ok, conflicts)

    warp = np.array(warp_of(FIG_4_3_THREADS), np.int64)
    out = np.empty_like(warp)
    female = np.full(32, HOLE, np.int64)
    moves, qmask, qcount, smask, active, mergeable, ok, conflicts = core_like(warp, 8, out, female)
    assert (moves, qmask, qcount, active, mergeable, ok, conflicts) == (5, 0b0011, 2, 2, True, True, 0)
    assert smask == to_mask(FIG_4_3_SQUEEZED)


def test_format_slots_draws_lanes_as_rows_and_quarters_as_columns():
    text = hws.format_slots([0, HOLE, 2, 3], 2, "w")
    assert text.splitlines() == ["w", "lane | q0 q1", "   0 |  0  2", "   1 |  .  3"]


def test_mask_kernels_accept_the_cores_int64_masks():
    """The timing core keeps masks as int64 words; -1 (all 64 slots) must read as a full warp."""

    @numba.njit
    def from_int64(mask, warp_size, simd_width):
        return (hws.quarter_mask(mask, warp_size, simd_width),
                hws.squeezed_quarter_count(mask, warp_size, simd_width),
                hws.squeeze_mask(mask, warp_size, simd_width))

    assert from_int64(np.int64(-1), 64, 16) == (0b1111, 4, 2**64 - 1)
    # slots 0 and 15 (lane 7 of quarter 1): the tie ranks q0 first, so 15 moves to slot 7
    assert from_int64(np.int64(1 | 1 << 15), 32, 8) == (0b11, 1, 1 | 1 << 7)
