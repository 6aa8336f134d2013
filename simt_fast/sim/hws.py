"""Hybrid warp size (HWS, Jin 2012): lane-aware squeeze, warp scaling, Eq. 6.1 estimate.

A warp has ``warp_size`` *slots*; slot ``s`` sits in SIMD lane ``s % simd_width`` and in quarter
(issue sub-group, the thesis' quarter-warp) ``s // simd_width``. Under HWS a warp issues one
cycle per quarter that holds at least one active thread, instead of ``warp_size / simd_width``
cycles, so packing threads into few quarters (the squeeze) shortens issue.

Public functions validate their inputs in Python and call private ``@jit`` kernels that take
flat arrays and scalars only, so the timing core can call the kernels from its own numba code:

=============================  ============================================================
``_squeeze_into(slots, out, simd_width) -> n_moves``      squeeze one warp's slot array
``_squeeze_mask(mask, warp_size, simd_width) -> mask``    the same squeeze on a bit-packed mask
``quarter_mask(mask, warp_size, simd_width) -> mask``     active quarters as bits (numba-callable)
``squeezed_quarter_count(mask, warp_size, simd_width)``   active quarters after a squeeze
``_active_quarters(slots, simd_width) -> int``            Appendix C's warp-size analyzer
``_estimate_speedup(fractions) -> float``                 Eq. 6.1
=============================  ============================================================

The plain-Python reference is :mod:`simt_fast.sim.reference.hws`; ``docs/hws.md`` draws the
thesis' figures as slot diagrams.
"""

from __future__ import annotations

import numpy as np

from .._jit import jit
from .squeeze import _ONE, _low_bits, _rank_quarters, _squeeze_scratch, max_lane_count  # noqa: F401  (public too)

HOLE = -1


# --------------------------------------------------------------------------------------------
# numba kernels (flat arrays and scalars in, arrays/ints out; callable from other @jit code)
# The public mask functions carry an explicit uint64 signature: a lazily typed dispatcher that
# first saw a small int (int64) would refuse a full 64-slot mask (>= 2**63) from Python.
# --------------------------------------------------------------------------------------------
@jit
def _squeeze_into(slots, out, simd_width):
    """Squeeze ``slots`` into ``out`` (same length); returns the number of threads moved."""
    n_quarters = slots.shape[0] // simd_width
    return _squeeze_scratch(slots, out, simd_width, np.empty(n_quarters, np.int64), np.empty(n_quarters, np.int64))


@jit
def _squeeze_batch(slots, out, simd_width, moves):
    """``_squeeze_into`` over the rows of 2-D ``slots`` (one warp per row)."""
    n_quarters = slots.shape[1] // simd_width
    counts = np.empty(n_quarters, np.int64)
    order = np.empty(n_quarters, np.int64)
    for w in range(slots.shape[0]):
        moves[w] = _squeeze_scratch(slots[w], out[w], simd_width, counts, order)


@jit
def _active_quarters(slots, simd_width):
    """Quarters holding at least one thread (Appendix C's warp-size analyzer, counted)."""
    n_quarters = slots.shape[0] // simd_width
    active = 0
    for q in range(n_quarters):
        for lane in range(simd_width):
            if slots[q * simd_width + lane] >= 0:
                active += 1
                break
    return active


@jit
def _active_quarters_batch(slots, simd_width, out):
    for w in range(slots.shape[0]):
        out[w] = _active_quarters(slots[w], simd_width)


@jit
def _popcount64(x):
    """Set bits of a uint64 (SWAR; numba has no popcount intrinsic for Python code paths)."""
    x = np.uint64(x)
    x = x - ((x >> np.uint64(1)) & np.uint64(0x5555555555555555))
    x = (x & np.uint64(0x3333333333333333)) + ((x >> np.uint64(2)) & np.uint64(0x3333333333333333))
    x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    # byte sums by shifts rather than a wrapping multiply (also clean under NUMBA_DISABLE_JIT)
    x = x + (x >> np.uint64(8))
    x = x + (x >> np.uint64(16))
    x = x + (x >> np.uint64(32))
    return np.int64(x & np.uint64(0x7F))


@jit
def _check_mask_shape(warp_size, simd_width):
    if warp_size < 1 or warp_size > 64:
        raise ValueError("warp_size must be between 1 and 64 for a bit-packed uint64 mask")
    if simd_width < 1:
        raise ValueError("simd_width must be at least 1")


@jit("uint64(uint64, int64, int64)")
def quarter_mask(active_mask, warp_size, simd_width):
    """Bit q set iff quarter q (slots ``q*simd_width`` onwards) has an active thread.

    The thesis' quarter-warp mask (§4.2 step 1; Fig. 4.3 reads 0011). ``active_mask`` is the
    bit-packed per-slot mask (bit s = slot s). A last, partial quarter (when ``simd_width`` does
    not divide ``warp_size``) is a quarter too. Callable from Python and from numba code.
    """
    _check_mask_shape(warp_size, simd_width)
    mask = np.uint64(active_mask) & _low_bits(warp_size)
    lane_bits = _low_bits(simd_width)
    n_quarters = (warp_size + simd_width - 1) // simd_width
    out = np.uint64(0)
    for q in range(n_quarters):
        if (mask >> np.uint64(q * simd_width)) & lane_bits:
            out |= _ONE << np.uint64(q)
    return out


@jit("int64(uint64, int64, int64)")
def squeezed_quarter_count(active_mask, warp_size, simd_width):
    """Active quarters after a lane-aware squeeze: the most threads any one lane holds.

    Threads cannot leave their lane, so a lane with k threads needs k quarters; the squeeze
    reaches that bound (every lane is filled from the top-ranked quarter down). This is the
    issue width PDOM&HWS gets for a warp, without building its slots. Numba-callable.
    """
    _check_mask_shape(warp_size, simd_width)
    if warp_size % simd_width:
        raise ValueError("simd_width must divide warp_size for the HWS squeeze")
    return max_lane_count(np.uint64(active_mask) & _low_bits(warp_size), warp_size // simd_width, simd_width)


@jit
def _squeeze_mask(active_mask, warp_size, simd_width):
    """The squeeze of ``_squeeze_into`` on a bit-packed mask (bit s = slot s); returns the mask: the
    slot squeeze (`squeeze._squeeze_scratch`, the one implementation) of slots holding their own index."""
    n_quarters = warp_size // simd_width
    mask = np.uint64(active_mask) & _low_bits(warp_size)
    slots = np.empty(warp_size, np.int64)
    for s in range(warp_size):
        slots[s] = s if (mask >> np.uint64(s)) & _ONE else HOLE
    out = np.empty(warp_size, np.int64)
    _squeeze_scratch(slots, out, simd_width, np.empty(n_quarters, np.int64), np.empty(n_quarters, np.int64))
    squeezed = np.uint64(0)
    for s in range(warp_size):
        if out[s] >= 0:
            squeezed |= _ONE << np.uint64(s)
    return squeezed


@jit("uint64(uint64, int64, int64)")
def squeeze_mask(active_mask, warp_size, simd_width):
    """Bit-packed form of :func:`squeeze`: the active mask after the squeeze. Numba-callable."""
    _check_mask_shape(warp_size, simd_width)
    if warp_size % simd_width:
        raise ValueError("simd_width must divide warp_size for the HWS squeeze")
    return _squeeze_mask(active_mask, warp_size, simd_width)


@jit
def _estimate_speedup(fractions):
    """Eq. 6.1: Amdahl's law where a warp with k of q quarters active is sped up by q/k."""
    n_quarters = fractions.shape[0] + 1
    time = 1.0
    for i in range(fractions.shape[0]):
        # the fraction runs in (i+1)/q of its full-width time instead of all of it
        time -= fractions[i]
        time += fractions[i] * (i + 1) / n_quarters
    return 1.0 / time


# --------------------------------------------------------------------------------------------
# validation (shared with simt_fast.sim.warp_merge)
# --------------------------------------------------------------------------------------------
def check_simd_width(simd_width) -> int:
    if isinstance(simd_width, bool) or not isinstance(simd_width, (int, np.integer)) or simd_width < 1:
        raise ValueError(f"simd_width must be a positive integer (got {simd_width!r})")
    return int(simd_width)


def check_slots(slots, simd_width, name: str = "slots", batch: bool = False) -> np.ndarray:
    """Return ``slots`` as a C-contiguous int64 array, or raise one sentence naming the fault.

    Checks: integer thread ids, ``-1`` for holes, a length that is a multiple of
    ``simd_width``, no thread twice, and every thread in its own lane (``tid % simd_width``),
    which is the invariant every HWS/DWF move preserves.
    """
    simd_width = check_simd_width(simd_width)
    arr = np.asarray(slots)
    want_ndim = 2 if batch else 1
    if arr.ndim != want_ndim:
        shape = "a 2-D array (one warp per row)" if batch else "a 1-D array of slots"
        raise ValueError(f"{name} must be {shape} (got shape {arr.shape})")
    if arr.size and not np.issubdtype(arr.dtype, np.integer):  # bool is not an integer dtype
        raise ValueError(f"{name} must hold integer thread ids with -1 for holes (got dtype {arr.dtype})")
    arr = np.ascontiguousarray(arr, dtype=np.int64)
    rows = arr if batch else arr[None, :]
    warp_size = rows.shape[1]
    where = (lambda w, s: f"{name}[{w}, {s}]") if batch else (lambda w, s: f"{name}[{s}]")
    if warp_size == 0 or warp_size % simd_width:
        raise ValueError(f"{name} has {warp_size} slots per warp, which is not a positive multiple of "
                         f"simd_width {simd_width} (a warp is whole quarters of simd_width lanes)")
    bad = np.argwhere(rows < HOLE)
    if bad.size:
        w, s = bad[0]
        raise ValueError(f"{where(w, s)} = {rows[w, s]}: thread ids are >= 0 and -1 marks a hole")
    lane = np.arange(warp_size) % simd_width
    bad = np.argwhere((rows >= 0) & (rows % simd_width != lane))
    if bad.size:
        w, s = bad[0]
        t = rows[w, s]
        raise ValueError(f"{where(w, s)} holds thread {t}, whose lane is {t % simd_width} ({t} % {simd_width}), "
                         f"but slot {s} is in lane {s % simd_width}: a thread may only sit in its own lane")
    srt = np.sort(rows, axis=1)
    dup = np.argwhere((srt[:, 1:] == srt[:, :-1]) & (srt[:, 1:] >= 0))
    if dup.size:
        w, i = dup[0]
        t = srt[w, i]
        first, second = np.flatnonzero(rows[w] == t)[:2]
        raise ValueError(f"thread {t} appears twice in {name} (at {where(w, first)} and {where(w, second)})")
    return arr


def _check_warp_shape(warp_size, simd_width):
    if isinstance(warp_size, bool) or not isinstance(warp_size, (int, np.integer)) or not 1 <= warp_size <= 64:
        raise ValueError(f"warp_size must be an integer between 1 and 64 for a bit-packed mask (got {warp_size!r})")
    simd_width = check_simd_width(simd_width)
    if warp_size % simd_width:
        raise ValueError(f"simd_width {simd_width} must divide warp_size {warp_size} for the HWS squeeze")


# --------------------------------------------------------------------------------------------
# public API
# --------------------------------------------------------------------------------------------
def squeeze(slots, simd_width) -> np.ndarray:
    """Lane-aware squeeze of one warp (Jin 2012, §4.1, Appendix A).

    ``slots[s]`` is the thread id in slot ``s`` (``-1`` = hole). Returns a new int64 array in
    which threads have moved, each within its own lane, from the emptiest quarters into the
    holes of the fullest ones; the warp then needs as few quarters as its fullest lane allows.
    """
    return squeeze_count_moves(slots, simd_width)[0]


def squeeze_count_moves(slots, simd_width) -> tuple[np.ndarray, int]:
    """:func:`squeeze` plus the number of threads it moved (the thesis' movement overhead)."""
    arr = check_slots(slots, simd_width)
    out = np.empty_like(arr)
    n_moves = _squeeze_into(arr, out, int(simd_width))
    return out, int(n_moves)


def squeeze_batch(slots, simd_width) -> tuple[np.ndarray, np.ndarray]:
    """Squeeze many warps at once: 2-D ``slots`` (one warp per row) -> (squeezed, moves per warp)."""
    arr = check_slots(slots, simd_width, batch=True)
    out = np.empty_like(arr)
    moves = np.empty(arr.shape[0], np.int64)
    _squeeze_batch(arr, out, int(simd_width), moves)
    return out, moves


def active_quarters(slots, simd_width) -> int:
    """Quarters with at least one thread: the cycles an HWS warp occupies the SIMD unit (§4.2)."""
    arr = check_slots(slots, simd_width)
    return int(_active_quarters(arr, int(simd_width)))


def active_quarters_batch(slots, simd_width) -> np.ndarray:
    """:func:`active_quarters` for each row of 2-D ``slots``."""
    arr = check_slots(slots, simd_width, batch=True)
    out = np.empty(arr.shape[0], np.int64)
    _active_quarters_batch(arr, int(simd_width), out)
    return out


def warp_size_after_scaling(slots, simd_width) -> int:
    """§4.2 warp scaling: the warp's new size, ``active_quarters * simd_width`` (Fig. 4.3: 16)."""
    return active_quarters(slots, simd_width) * int(simd_width)


def estimate_speedup(fractions) -> float:
    """Eq. 6.1: estimated HWS speedup from the fractions of warps with 1, 2, …, q-1 active quarters.

    ``fractions`` has ``q - 1`` entries (q = quarters per warp, 4 in the thesis); the rest of
    the warps, ``1 - sum(fractions)``, use all q quarters and gain nothing. A warp with k active
    quarters issues in k instead of q cycles (speedup q/k: 4, 2, 1.33 for q = 4). The model
    assumes threads are packed optimally, so it is an upper bound on what HWS measures.
    """
    arr = np.asarray(fractions, dtype=np.float64)
    if arr.ndim != 1:
        raise ValueError(f"fractions must be a 1-D sequence (one per active-quarter count 1..q-1), got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError("fractions must be finite numbers")
    bad = np.flatnonzero((arr < 0) | (arr > 1))
    if bad.size:
        i = bad[0]
        raise ValueError(f"fractions[{i}] = {arr[i]} is not a fraction between 0 and 1")
    if arr.sum() > 1 + 1e-9:
        raise ValueError(f"fractions sum to {arr.sum():.6g} > 1: they are shares of the same warps")
    return float(_estimate_speedup(np.ascontiguousarray(arr)))


def estimate_from_hist(quarter_hist) -> float:
    """Eq. 6.1 fed from ``Stats.quarter_hist`` (issued warp instructions by active quarters, 0..q).

    ``quarter_hist[k]`` counts warp instructions issued with k active quarters; q is
    ``len(quarter_hist) - 1``. Index 0 must be empty (no instruction issues with no thread).
    """
    hist = np.asarray(quarter_hist)
    if hist.ndim != 1 or hist.size < 2:
        raise ValueError(f"quarter_hist must be a 1-D histogram indexed by active quarters 0..q (got shape {hist.shape})")
    if np.any(hist < 0):
        raise ValueError(f"quarter_hist[{int(np.flatnonzero(hist < 0)[0])}] is negative; it must count warp instructions")
    if hist[0]:
        raise ValueError(f"quarter_hist[0] = {hist[0]}: a warp instruction with no active quarter cannot be issued")
    total = hist[1:].sum()
    if total == 0:
        raise ValueError("quarter_hist is empty (no warp instructions issued), so there is no speedup to estimate")
    return estimate_speedup(hist[1:-1].astype(np.float64) / total)


def estimate_from_occupancy(occupancy_hist, simd_width) -> float:
    """Eq. 6.1 from ``Stats.occupancy_hist`` (warp instructions by active threads 0..warp_size).

    This is how §6.1 applies the estimate: only the warp distribution by active-thread count is
    known, and threads are assumed packed optimally, so n active threads need
    ``ceil(n / simd_width)`` quarters.
    """
    hist = np.asarray(occupancy_hist)
    simd_width = check_simd_width(simd_width)
    if hist.ndim != 1 or hist.size < 2:
        raise ValueError(f"occupancy_hist must be a 1-D histogram indexed by active threads 0..warp_size (got shape {hist.shape})")
    warp_size = hist.size - 1
    if warp_size % simd_width:
        raise ValueError(f"simd_width {simd_width} must divide the warp size {warp_size} implied by occupancy_hist")
    quarters = -(-np.arange(warp_size + 1) // simd_width)
    return estimate_from_hist(np.bincount(quarters, weights=hist, minlength=warp_size // simd_width + 1))


def format_slots(slots, simd_width, title: str = "") -> str:
    """ASCII slot diagram in the thesis' orientation: one row per lane, one column per quarter.

    Holes print as ``.``; the header names the quarters (q0 is issued first). Used by
    ``docs/hws.md`` and handy when debugging a mechanism::

        lane | q0 q1 q2 q3
           0 |  0  .  .  .
    """
    arr = check_slots(slots, simd_width)
    simd_width = int(simd_width)
    grid = arr.reshape(-1, simd_width).T  # [lane, quarter]
    width = max(2, *(len(str(t)) for t in arr))
    lines = [title] if title else []
    lines.append("lane | " + " ".join(f"q{q}".rjust(width) for q in range(grid.shape[1])))
    for lane, row in enumerate(grid):
        cells = " ".join(("." if t < 0 else str(t)).rjust(width) for t in row)
        lines.append(f"{lane:>4} | {cells}")
    return "\n".join(lines)
