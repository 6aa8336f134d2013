"""Plain-Python reference model of hybrid warp size (Jin 2012), for differential tests.

Written to be read next to the thesis, not to be fast. The numba kernels in
:mod:`simt_fast.sim.hws` must agree with every function here on every input.

Slot model: a warp has ``warp_size`` slots; slot ``s`` sits in lane ``s % simd_width`` and in
quarter (issue sub-group) ``s // simd_width``. ``slots[s]`` is a thread id, ``-1`` is a hole.
"""

from __future__ import annotations

HOLE = -1


def quarter_counts(slots, simd_width):
    """Active threads per quarter, in physical quarter order."""
    n_quarters = len(slots) // simd_width
    return [sum(1 for lane in range(simd_width) if slots[q * simd_width + lane] != HOLE)
            for q in range(n_quarters)]


def quarter_rank_order(counts):
    """Quarter ids by descending active count, ties broken exactly as the thesis' exchange sort.

    Appendix A sorts with a pairwise exchange (for i < j, swap when count[i] < count[j]); that
    sort is not stable, and which of two equally full quarters becomes the recipient decides
    where threads land, so it is reproduced as written rather than replaced by ``sorted``.
    """
    counts = list(counts)
    order = list(range(len(counts)))
    for i in range(len(counts) - 1):
        for j in range(i + 1, len(counts)):
            if counts[i] < counts[j]:
                counts[i], counts[j] = counts[j], counts[i]
                order[i], order[j] = order[j], order[i]
    return order


def squeeze_with_moves(slots, simd_width):
    """Lane-aware squeeze (Jin 2012, §4.1, Fig. 4.2, Appendix A); returns ``(slots, n_moves)``.

    Recipients are taken fullest first (rank 0, 1, …, q-2); for each hole of a recipient,
    donors are scanned from the emptiest quarter upwards (rank q-1 down to recipient+1) and the
    first one holding a thread in that same lane gives it up. Threads never leave their lane
    (objective 1: no register-bank conflicts), and moving from the emptiest quarters into the
    fullest ones is what keeps the number of moves small (objective 3).

    The scan reads the warp as it is being squeezed. (The thesis listing tests the *original*
    warp at that point, which, once a donor has already given its thread away, copies a hole
    instead of looking further; that loses density and makes the squeeze non-idempotent, which
    contradicts objective 2, so the current contents are used.)
    """
    n_quarters = len(slots) // simd_width
    out = list(slots)
    order = quarter_rank_order(quarter_counts(slots, simd_width))
    n_moves = 0
    for rank in range(n_quarters - 1):
        recipient = order[rank]
        for lane in range(simd_width):
            hole = recipient * simd_width + lane
            if out[hole] != HOLE:
                continue
            for donor_rank in range(n_quarters - 1, rank, -1):
                source = order[donor_rank] * simd_width + lane
                if out[source] != HOLE:
                    out[hole], out[source] = out[source], HOLE
                    n_moves += 1
                    break
    return out, n_moves


def squeeze(slots, simd_width):
    """The squeezed slots (see :func:`squeeze_with_moves`)."""
    return squeeze_with_moves(slots, simd_width)[0]


def quarter_mask(slots, simd_width):
    """Appendix C's warp-size analyzer as a bit mask: bit q set iff quarter q has a thread."""
    mask = 0
    for q, count in enumerate(quarter_counts(slots, simd_width)):
        if count:
            mask |= 1 << q
    return mask


def active_quarters(slots, simd_width):
    """Quarters with at least one thread: the issue cycles the warp needs under HWS (§4.2-4.3)."""
    return sum(1 for count in quarter_counts(slots, simd_width) if count)


def mask_to_slots(active_mask, warp_size):
    """Bit-packed active mask -> slots holding thread id = slot (home slots) or holes."""
    return [s if (active_mask >> s) & 1 else HOLE for s in range(warp_size)]


def slots_to_mask(slots):
    return sum(1 << s for s, t in enumerate(slots) if t != HOLE)


def estimate_speedup(fractions):
    """Eq. 6.1 (Amdahl's law over warp classes).

    ``fractions[i]`` is the fraction of warps with ``i+1`` active quarters out of
    ``q = len(fractions) + 1``; such a warp issues in ``i+1`` instead of ``q`` cycles, so its
    ideal speedup is ``q / (i+1)`` (4, 2, 1.33 for the thesis' q = 4). Warps with all q
    quarters active are the unenhanced remainder.
    """
    n_quarters = len(fractions) + 1
    remainder = 1.0 - sum(fractions)
    enhanced = sum(f / (n_quarters / (i + 1)) for i, f in enumerate(fractions))
    return 1.0 / (remainder + enhanced)
