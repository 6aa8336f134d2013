"""Hypothesis strategies for HWS / DWF slot arrays (shared by tests/test_hws_*.py and test_dwf_*.py).

A warp is drawn as (simd_width, n_quarters) and, per lane, which quarters hold a thread and
which thread of that lane sits where. Thread ids always belong to their slot's lane
(``tid % simd_width == slot % simd_width``) but need not sit in their home quarter, because
warps that were squeezed or re-formed by DWF carry threads away from home.
"""

from __future__ import annotations

from hypothesis import strategies as st

HOLE = -1

SIMD_WIDTHS = st.sampled_from([1, 2, 4, 8, 16])


@st.composite
def warp_shapes(draw, max_warp_size=64):
    simd_width = draw(SIMD_WIDTHS)
    n_quarters = draw(st.integers(1, max(1, min(8, max_warp_size // simd_width))))
    return simd_width, n_quarters


@st.composite
def warp_slots(draw, simd_width, n_quarters, warp_id=0, density=None):
    """One warp's slots; threads are ids of warp ``warp_id`` (``warp_id * warp_size + …``)."""
    warp_size = simd_width * n_quarters
    if density is None:
        density = draw(st.sampled_from([0.0, 0.2, 0.35, 0.5, 0.8, 1.0]))
    slots = [HOLE] * warp_size
    for lane in range(simd_width):
        # which thread of this lane (its home quarter) ends up in which quarter
        homes = draw(st.permutations(range(n_quarters)))
        for quarter in range(n_quarters):
            occupied = draw(st.floats(0, 1)) < density if 0 < density < 1 else density == 1.0
            if occupied:
                slots[quarter * simd_width + lane] = warp_id * warp_size + homes[quarter] * simd_width + lane
    return slots


@st.composite
def warps(draw, max_warp_size=64):
    simd_width, n_quarters = draw(warp_shapes(max_warp_size))
    return draw(warp_slots(simd_width, n_quarters)), simd_width


@st.composite
def warp_pairs(draw):
    """(male, female, simd_width): two warps of the same shape with disjoint thread ids."""
    simd_width, n_quarters = draw(warp_shapes())
    male = draw(warp_slots(simd_width, n_quarters, warp_id=1))
    female = draw(warp_slots(simd_width, n_quarters, warp_id=0))
    return male, female, simd_width


def warp_of(threads, warp_size=32):
    """Slots with each listed thread at its home slot (tid % warp_size), holes elsewhere."""
    slots = [HOLE] * warp_size
    for t in threads:
        slots[t % warp_size] = t
    return slots


def to_mask(slots):
    return sum(1 << s for s, t in enumerate(slots) if t != HOLE)
