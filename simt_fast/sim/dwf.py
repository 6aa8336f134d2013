"""Lane-aware warp merging for dynamic warp formation: DWF and en-DWF (Jin 2012, §3.6, §4.4, App. B).

The *male* warp is the incoming warp looking for a partner; the *female* warp is the forming
warp from the warp pool that offers to take it (the thesis' names). Both are slot arrays as in
:mod:`simt_fast.sim.hws` (slot ``s`` in lane ``s % simd_width``, quarter ``s // simd_width``,
``-1`` = hole).

* DWF (Fung et al. 2007, lane-aware): every male thread joins at its own slot; a *lane
  conflict* (both warps hold a thread in that slot, i.e. the same register bank at the same
  offset) refuses the merge.
* en-DWF (Jin 2012): a conflicting male thread may move to another quarter of the same lane
  where neither warp has a thread; the merge fails only when some conflict finds no free
  position, i.e. when some lane holds more than ``warp_size / simd_width`` threads in total.

Kernels callable from other numba code: ``_merge_into(male, female, out, simd_width,
enhanced) -> (ok, n_conflicts, n_moved)`` and ``can_merge(male_mask, female_mask, warp_size,
simd_width, enhanced)`` on bit-packed masks. Reference model: :mod:`simt_fast.sim.reference.dwf`.
"""

from __future__ import annotations

import numpy as np

from simt_fast._jit import jit
from simt_fast.sim.hws import (_check_mask_shape, _low_bits, _popcount64, _squeeze_scratch, check_simd_width,
                               check_slots)

HOLE = -1


@jit
def _merge_into(male, female, out, simd_width, enhanced):
    """Merge ``male`` into ``female`` writing ``out``; returns ``(ok, n_conflicts, n_moved)``.

    ``out`` first holds the male warp as en-DWF rearranges it (Appendix B moves male threads
    only), then the female threads are laid over it. Lanes are scanned in order and, within a
    lane, quarters in order; a conflict takes the first other quarter of its lane that is a
    hole in both warps (Appendix B step 2) and swaps into it (step 3). When ``ok`` is False
    the contents of ``out`` are unspecified. ``out`` must not alias ``male`` or ``female``.
    """
    warp_size = male.shape[0]
    n_quarters = warp_size // simd_width
    for s in range(warp_size):
        out[s] = male[s]
    n_conflicts = 0
    n_moved = 0
    n_unresolved = 0
    for lane in range(simd_width):
        for quarter in range(n_quarters):
            slot = quarter * simd_width + lane
            if female[slot] < 0 or out[slot] < 0:
                continue
            n_conflicts += 1
            resolved = False
            if enhanced:
                for other in range(n_quarters):
                    free = other * simd_width + lane
                    if other != quarter and female[free] < 0 and out[free] < 0:
                        out[free] = out[slot]
                        out[slot] = HOLE
                        n_moved += 1
                        resolved = True
                        break
            if not resolved:
                n_unresolved += 1
    if n_unresolved:
        return False, n_conflicts, n_moved
    for s in range(warp_size):
        if female[s] >= 0:
            out[s] = female[s]
    return True, n_conflicts, n_moved


@jit
def _squeeze_merge_into(male, female, squeezed, out, simd_width, enhanced, counts, order):
    """(en-)DWF&HWS, Jin 2012, §4.4 steps 1-3: squeeze the male warp, then merge it.

    ``squeezed`` receives the squeezed male (the male enters the pool like this if the merge
    is refused); ``counts``/``order`` are int64 scratch of n_quarters. Returns
    ``(ok, n_conflicts, n_moved)`` of the merge; step 4, downscaling, is
    ``_active_quarters(out, simd_width)``.
    """
    _squeeze_scratch(male, squeezed, simd_width, counts, order)
    return _merge_into(squeezed, female, out, simd_width, enhanced)


@jit
def _merge_batch(males, females, out, simd_width, enhanced, ok, conflicts, moved):
    """``_merge_into`` row by row; a refused row of ``out`` is left all holes."""
    for w in range(males.shape[0]):
        success, n_conflicts, n_moved = _merge_into(males[w], females[w], out[w], simd_width, enhanced)
        ok[w] = success
        conflicts[w] = n_conflicts
        moved[w] = n_moved
        if not success:
            for s in range(out.shape[1]):
                out[w, s] = HOLE


@jit("boolean(uint64, uint64, int64, int64, boolean)")
def can_merge(male_mask, female_mask, warp_size, simd_width, enhanced):
    """Would the merge succeed? Bit-packed form (bit s = slot s occupied), numba-callable.

    DWF: the masks must be disjoint. en-DWF: every lane must hold at most
    ``warp_size / simd_width`` threads of the two warps together, which is exactly when each
    conflict finds a free position of its lane.
    """
    _check_mask_shape(warp_size, simd_width)
    if warp_size % simd_width:
        raise ValueError("simd_width must divide warp_size to merge warps lane-aware")
    valid = _low_bits(warp_size)
    male = np.uint64(male_mask) & valid
    female = np.uint64(female_mask) & valid
    if not enhanced:
        return (male & female) == np.uint64(0)
    n_quarters = warp_size // simd_width
    lane0 = np.uint64(0)
    for q in range(n_quarters):
        lane0 |= np.uint64(1) << np.uint64(q * simd_width)
    for lane in range(simd_width):
        lane_bits = lane0 << np.uint64(lane)
        if _popcount64(male & lane_bits) + _popcount64(female & lane_bits) > n_quarters:
            return False
    return True


def _check_pair(male, female, simd_width, batch=False):
    m = check_slots(male, simd_width, "male_slots", batch=batch)
    f = check_slots(female, simd_width, "female_slots", batch=batch)
    if m.shape != f.shape:
        raise ValueError(f"male_slots has shape {m.shape} but female_slots has shape {f.shape}: "
                         "both warps must have the same warp size")
    m_rows, f_rows = (m, f) if batch else (m[None], f[None])
    for w in range(m_rows.shape[0]):
        both = np.intersect1d(m_rows[w][m_rows[w] >= 0], f_rows[w][f_rows[w] >= 0])
        if both.size:
            row = f"row {w}: " if batch else ""
            raise ValueError(f"{row}thread {both[0]} is in both the male and the female warp; "
                             "a thread belongs to one warp")
    return m, f


def merge_count_conflicts(male_slots, female_slots, simd_width, enhanced: bool):
    """Merge and report: ``(merged slots or None, n_conflicts, n_moved)``.

    ``n_conflicts`` counts slots where both warps hold a thread (before en-DWF moves any);
    ``n_moved`` counts male threads en-DWF relocated. Both are reported for refused merges too.
    """
    m, f = _check_pair(male_slots, female_slots, simd_width)
    out = np.empty_like(m)
    ok, n_conflicts, n_moved = _merge_into(m, f, out, check_simd_width(simd_width), bool(enhanced))
    return (out if ok else None), int(n_conflicts), int(n_moved)


def merge(male_slots, female_slots, simd_width, enhanced: bool):
    """DWF (``enhanced=False``) or en-DWF (``enhanced=True``) merge of two warps at the same PC.

    Returns the merged slot array, or None when lane conflicts refuse the merge (the male warp
    then enters the warp pool as a new entry).
    """
    return merge_count_conflicts(male_slots, female_slots, simd_width, enhanced)[0]


def squeeze_and_merge(male_slots, female_slots, simd_width, enhanced: bool = True):
    """DWF&HWS / en-DWF&HWS (Jin 2012, §4.4, Fig. 4.6): squeeze the male warp, then merge it.

    Returns ``(merged or None, squeezed male, n_conflicts, n_moved)``; downscale the merged warp
    with :func:`simt_fast.sim.hws.active_quarters`. The thesis squeezes the male before the merge
    (its §7 notes squeezing the merged warp instead as an open alternative).
    """
    m, f = _check_pair(male_slots, female_slots, simd_width)
    simd_width = check_simd_width(simd_width)
    n_quarters = m.shape[0] // simd_width
    squeezed, out = np.empty_like(m), np.empty_like(m)
    ok, n_conflicts, n_moved = _squeeze_merge_into(m, f, squeezed, out, simd_width, bool(enhanced),
                                                   np.empty(n_quarters, np.int64), np.empty(n_quarters, np.int64))
    return (out if ok else None), squeezed, int(n_conflicts), int(n_moved)


def merge_batch(male_slots, female_slots, simd_width, enhanced: bool):
    """Merge row w of 2-D ``male_slots`` into row w of ``female_slots`` for every w.

    Returns ``(merged, ok, n_conflicts, n_moved)``; refused rows of ``merged`` are all holes.
    """
    m, f = _check_pair(male_slots, female_slots, simd_width, batch=True)
    n = m.shape[0]
    out = np.empty_like(m)
    ok = np.empty(n, np.bool_)
    conflicts = np.empty(n, np.int64)
    moved = np.empty(n, np.int64)
    _merge_batch(m, f, out, check_simd_width(simd_width), bool(enhanced), ok, conflicts, moved)
    return out, ok, conflicts, moved
