"""Lane-aware warp merging for dynamic warp formation: DWF and en-DWF (Fung et al. 2007; Jin 2012,
§3.6, §4.4, Appendix B). The rules live here once, as the numba helpers the formation kernel's
dwf/en-dwf run (`formation/dwf.py`, its warp pool), and the public functions on slot arrays below
are built on the same helpers. Reference model: :mod:`simt_fast.sim.reference.dwf`.

The *male* warp is the incoming warp looking for a partner; the *female* warp is the forming warp
from the warp pool that offers to take it (the thesis' names). Both are slot arrays as in
:mod:`simt_fast.sim.hws` (slot ``s`` in lane ``s % simd_width``, quarter ``s // simd_width``,
``-1`` = hole); the helpers also take their occupied slots as int64 masks (bit s = slot s), so
warps are at most 64 slots wide, as the simulator's.

* DWF (Fung et al. 2007, lane-aware): every male thread joins at its own slot; a *lane
  conflict* (both warps hold a thread in that slot, i.e. the same register bank at the same
  offset) refuses the merge.
* en-DWF (Jin 2012, Appendix B): lanes in order and, within a lane, quarters in order, a
  conflicting male thread moves to the first other quarter of its lane where neither warp has a
  thread. The merge fails only when some conflict finds no such position, i.e. when some lane
  holds more than ``warp_size / simd_width`` threads of the two warps together.

Numba helpers (called from the formation kernel and from numba code): ``lanes_fit(male_mask,
female_mask, warp_size, simd_width, enhanced)``, ``merge_into``, ``conflict_counts``. Numba kernels
on slot arrays: ``_merge_into(male, female, out, simd_width, enhanced) -> (ok, n_conflicts,
n_moved)``, ``_squeeze_merge_into``, ``_merge_batch``. Python: ``merge``, ``merge_count_conflicts``,
``squeeze_and_merge``, ``merge_batch``, ``can_merge``. The module compiles nothing when imported
(the formation kernel imports it), so the public functions import ``sim.hws``, whose bit-mask
functions are typed eagerly, only when called.
"""

from __future__ import annotations

import numpy as np
from numba.cpython.unsafe.numbers import trailing_zeros

from .._jit import hot_helper, jit
from .mech._tables import popcount
from .squeeze import _squeeze_scratch

HOLE = -1


@hot_helper
def lane0_bits(W, sw):
    """The slots of lane 0 (one per quarter) as an int64 mask; lane l is this shifted by l."""
    lane0 = np.int64(0)
    for q in range(W // sw):
        lane0 |= np.int64(1) << (q * sw)
    return lane0


@hot_helper
def lanes_fit(mmask, fmask, W, sw, enhanced):
    """Does the male (occupied slots ``mmask``) merge into the female (``fmask``)? DWF: no slot is
    taken twice. en-DWF: a lane of q positions holding m male and f female threads, c of them in the
    same slots, has q - (m + f - c) positions free in both warps for its c conflicts, so the merge
    succeeds exactly when m + f <= q in every lane (``sw`` must divide ``W``)."""
    if mmask & fmask == 0:
        return True
    if not enhanced:
        return False
    n_q = W // sw
    lane0 = lane0_bits(W, sw)
    for lane in range(sw):
        lb = lane0 << lane
        if popcount(mmask & lb) + popcount(fmask & lb) > n_q:
            return False
    return True


@hot_helper
def merge_into(male, mmask, dest, f, fmask, W, sw, enhanced):
    """Merge the male (slots ``male``, occupied ``mmask``) into the female held in row ``f`` of
    ``dest`` (occupied ``fmask``): the male threads are written into that row, the female's stay.
    Returns False, ``dest`` untouched, when the merge is refused (`lanes_fit`).

    en-DWF's moves: within a lane the conflicts, in quarter order, take the positions free in both
    warps, in quarter order — what Appendix B's scan (the first free other quarter for each
    conflict in turn) gives; lanes do not interact, so taking the conflicts in slot order does."""
    if not lanes_fit(mmask, fmask, W, sw, enhanced):
        return False
    lane0 = lane0_bits(W, sw)
    full = np.int64(-1) if W == 64 else (np.int64(1) << W) - 1
    holes = ~(mmask | fmask) & full
    conf = mmask & fmask  # (empty under DWF: lanes_fit refused any conflict)
    while conf != 0:
        s = trailing_zeros(conf)
        conf &= conf - 1
        h = trailing_zeros(holes & (lane0 << (s % sw)))
        holes &= ~(np.int64(1) << h)
        dest[f, h] = male[s]
    rest = mmask & ~fmask
    while rest != 0:
        s = trailing_zeros(rest)
        rest &= rest - 1
        dest[f, s] = male[s]
    return True


@hot_helper
def conflict_counts(mmask, fmask, W, sw, enhanced):
    """``(n_conflicts, n_moved)``: slots both warps hold, and the male threads en-DWF moves — also
    when the merge is refused (in each lane as many conflicts move as it has positions free in both
    warps). DWF moves none."""
    conf = mmask & fmask
    n_conflicts = popcount(conf)
    if not enhanced or conf == 0:
        return n_conflicts, 0
    n_q = W // sw
    lane0 = lane0_bits(W, sw)
    moved = 0
    for lane in range(sw):
        lb = lane0 << lane
        c = popcount(conf & lb)
        free = n_q - popcount((mmask | fmask) & lb)
        moved += c if c < free else free
    return n_conflicts, moved


@jit
def _occupied(slots):
    mask = np.int64(0)
    for s in range(slots.shape[0]):
        if slots[s] >= 0:
            mask |= np.int64(1) << s
    return mask


@jit
def _merge_into(male, female, out, simd_width, enhanced):
    """Merge ``male`` into ``female`` writing ``out`` (1-D, not aliasing either); returns
    ``(ok, n_conflicts, n_moved)``. When ``ok`` is False ``out`` holds the female."""
    W = male.shape[0]
    mmask = _occupied(male)
    fmask = _occupied(female)
    out[:] = female
    n_conflicts, n_moved = conflict_counts(mmask, fmask, W, simd_width, enhanced)
    ok = merge_into(male, mmask, out.reshape((1, W)), 0, fmask, W, simd_width, enhanced)
    return ok, n_conflicts, n_moved


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


@jit
def _lanes_fit(male_mask, female_mask, warp_size, simd_width, enhanced):
    return lanes_fit(male_mask, female_mask, warp_size, simd_width, enhanced)


def can_merge(male_mask: int, female_mask: int, warp_size: int, simd_width: int, enhanced: bool) -> bool:
    """Would the merge succeed? Bit-packed form (bit s = slot s occupied; numba code: `lanes_fit`)."""
    from .hws import check_simd_width

    simd_width = check_simd_width(simd_width)
    if not 1 <= warp_size <= 64 or warp_size % simd_width:
        raise ValueError(f"warp_size {warp_size} must be 1-64 slots and a multiple of simd_width {simd_width} "
                         "to merge warps lane-aware")
    valid = (1 << warp_size) - 1

    def word(mask):  # slot 63 is the int64 sign bit
        return np.array([int(mask) & valid], np.uint64).view(np.int64)[0]

    return bool(_lanes_fit(word(male_mask), word(female_mask), warp_size, simd_width, bool(enhanced)))


def _check_pair(male, female, simd_width, batch=False):
    from .hws import check_slots

    m = check_slots(male, simd_width, "male_slots", batch=batch)
    f = check_slots(female, simd_width, "female_slots", batch=batch)
    if m.shape != f.shape:
        raise ValueError(f"male_slots has shape {m.shape} but female_slots has shape {f.shape}: "
                         "both warps must have the same warp size")
    if m.shape[-1] > 64:
        raise ValueError(f"warps of {m.shape[-1]} slots: merging handles at most 64 (a warp is one 64-bit mask)")
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
    ok, n_conflicts, n_moved = _merge_into(m, f, out, int(simd_width), bool(enhanced))
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
    simd_width = int(simd_width)
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
    _merge_batch(m, f, out, int(simd_width), bool(enhanced), ok, conflicts, moved)
    return out, ok, conflicts, moved
