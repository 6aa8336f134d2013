"""The lane-aware squeeze and the issue width it gives (Jin 2012, §4.1-4.2), as the numba kernels
the cycle loops call (PDOM&HWS in the core, en-DWF&HWS in the formation kernel) and
:mod:`simt_fast.sim.hws` builds its public API on. A module of its own so that the simulator does
not compile the public API's eagerly typed functions when it starts.
"""

from __future__ import annotations

import numpy as np

from .._jit import jit

_ONE = np.uint64(1)
_ALL_BITS = np.uint64(0xFFFFFFFFFFFFFFFF)
HOLE = -1

# Called from the NRT-free cycle loops and from hws.py's functions (and its tests, from Python).
kernel = jit(_nrt=False)


@kernel
def _rank_quarters(counts, order, n):
    """Sort the first ``n`` quarter ids by descending count in place, with the thesis' exchange sort.

    Appendix A's pairwise exchange is not stable; which of two equally full quarters becomes
    the recipient decides where threads land, so the exact sort is kept.
    """
    for i in range(n):
        order[i] = i
    for i in range(n - 1):
        for j in range(i + 1, n):
            if counts[i] < counts[j]:
                c = counts[i]
                counts[i] = counts[j]
                counts[j] = c
                o = order[i]
                order[i] = order[j]
                order[j] = o


@kernel
def _squeeze_scratch(slots, out, simd_width, counts, order):
    """``_squeeze_into`` with caller-provided int64 scratch ``counts``/``order`` (n_quarters each),
    so a hot loop squeezing many warps allocates nothing per warp.

    Recipients are the fullest quarters first; each hole of a recipient is filled from the
    emptiest quarter that has a thread in the same lane (Jin 2012, §4.1 steps 1-4, Fig. 4.2).
    Threads never change lane (objective 1, no register-bank conflict); donors are the
    emptiest quarters so the fewest threads move (objective 3). The scan reads the warp as it
    is being squeezed, so every lane ends up filled from the top-ranked quarter down and the
    result needs exactly max-over-lanes(threads in lane) quarters (objective 2).
    """
    warp_size = slots.shape[0]
    n_quarters = warp_size // simd_width
    counts[:n_quarters] = 0
    for s in range(warp_size):
        out[s] = slots[s]
        if slots[s] >= 0:
            counts[s // simd_width] += 1
    _rank_quarters(counts, order, n_quarters)
    n_moves = 0
    for rank in range(n_quarters - 1):
        if counts[rank] == simd_width:  # a full quarter has no hole to fill
            continue
        recipient = order[rank] * simd_width
        for lane in range(simd_width):
            if out[recipient + lane] >= 0:
                continue
            for donor_rank in range(n_quarters - 1, rank, -1):
                source = order[donor_rank] * simd_width + lane
                if out[source] >= 0:
                    out[recipient + lane] = out[source]
                    out[source] = HOLE
                    n_moves += 1
                    break
    return n_moves


@jit(inline="always")  # (on every PDOM&HWS issue, via max_lane_count: a call there cost ~2%)
def _low_bits(n):
    """A uint64 with the low ``n`` bits set (n = 64 included, where ``1 << 64`` would wrap)."""
    if n >= 64:
        return _ALL_BITS
    return (_ONE << np.uint64(n)) - _ONE


@kernel
def max_lane_count(mask, n_quarters, simd_width):
    """The most set bits any lane has across the quarters of ``mask`` (uint64; no argument checks).

    Word-parallel, so it costs a few word operations per quarter instead of a popcount per lane (it
    runs on every PDOM&HWS issue): each pass removes every lane's first set bit, so the number of
    passes until nothing is left is the largest per-lane count.
    """
    lanes = _low_bits(simd_width)
    every = lanes
    for q in range(n_quarters):
        every &= mask >> np.uint64(q * simd_width)
    if every & lanes:
        return n_quarters  # some lane is active in every quarter (always so for a converged warp)
    most = 0
    while mask:
        most += 1
        seen = np.uint64(0)
        rest = np.uint64(0)
        for q in range(n_quarters):
            shift = np.uint64(q * simd_width)
            x = (mask >> shift) & lanes
            rest |= (x & seen) << shift  # lanes already met in an earlier quarter keep this bit
            seen |= x
        mask = rest
    return most
