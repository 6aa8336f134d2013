"""A set-associative sector cache with LRU replacement (docs/memory.md), for the L1s and the L2.

Lines are 128 bytes, tagged by line number (address >> 7) and placed in set ``line % n_sets``;
each of a line's four 32-byte sectors is valid (and dirty) on its own. A lookup hits when the line's
tag is present and the sector is valid. A miss on a present line fills only that sector (no
eviction); a miss on an absent line takes an unused way, else the least recently used line, whose
dirty sectors the caller writes back. Every hit and every fill makes the line the most recently used.
Each sector remembers the cycle its data arrives, so a hit on a sector still being filled waits for it
(the request merges with the one in flight in its miss-status holding register), and how many
requests that register holds (:func:`merge_in_flight`).

A cache is an int64 array ``[cache, set, field, way]`` (fields ``layout.L_*``: a set's tags are one
contiguous row); ``clocks[c]`` counts the uses of cache ``c`` and stamps each use, so the least
recently used line is the smallest stamp.
"""

from __future__ import annotations

from ._jit import helper
from .layout import L_DIRTY, L_FILL, L_LRU, L_MERGED, L_MRU, L_TAG, L_VALID, MERGED_MAX


@helper
def set_of(line, n_sets, mask):
    """The set of ``line``: line % n_sets (a mask when n_sets is a power of two, ``mask`` >= 0)."""
    return line & mask if mask >= 0 else line % n_sets


@helper
def find_way(cache, c, s, assoc, line):
    """The way of set ``s`` holding ``line`` in cache ``c``, or -1. The set's most recently used way
    first: a line's sectors come one after the other (a 64-way L1 otherwise reads 64 tags per
    sector); a set holds a line at most once, so that way is the one the walk would find."""
    mru = cache[c, s, L_MRU, 0]
    if cache[c, s, L_TAG, mru] == line:
        return mru
    way = 0  # 1 + the way holding the line: a sum without an early exit, so tags compare a vector at a time
    for w in range(assoc):
        way += w + 1 if cache[c, s, L_TAG, w] == line else 0
    return way - 1


@helper
def sector_valid(cache, c, s, w, sector):
    return w >= 0 and (cache[c, s, L_VALID, w] >> (sector & 3)) & 1 == 1


@helper
def touch(cache, clocks, c, s, w):
    clocks[c] += 1
    cache[c, s, L_LRU, w] = clocks[c]
    cache[c, s, L_MRU, 0] = w


@helper
def victim_way(cache, c, s, assoc):
    """An unused way (the lowest), else the least recently used line of set ``s``. Ways are taken
    lowest first and never emptied, so the unused ones are the last; a cache's use stamps are
    distinct, so one way holds the oldest. (Sums and a minimum without early exits: the host
    reads a 64-way set's rows a vector at a time.)"""
    used = 0
    for w in range(assoc):
        used += 1 if cache[c, s, L_TAG, w] >= 0 else 0
    if used < assoc:
        return used
    oldest = cache[c, s, L_LRU, 0]
    for w in range(1, assoc):
        oldest = min(oldest, cache[c, s, L_LRU, w])
    way = 0
    for w in range(assoc):
        way += w + 1 if cache[c, s, L_LRU, w] == oldest else 0
    return way - 1


@helper
def fill_sector(cache, clocks, c, s, assoc, w, sector, ready, dirty):
    """Make ``sector`` valid (dirty or clean) with data arriving at ``ready``; ``w`` is the way already
    holding its line, or -1 to allocate one. Returns (evicted line, its dirty sector mask): (-1, 0)
    when nothing with data was evicted."""
    line = sector >> 2
    bit = 1 << (sector & 3)
    ev_line = -1
    ev_dirty = 0
    if w < 0:
        w = victim_way(cache, c, s, assoc)
        if cache[c, s, L_TAG, w] >= 0:
            ev_line = cache[c, s, L_TAG, w]
            ev_dirty = cache[c, s, L_DIRTY, w]
        cache[c, s, L_TAG, w] = line
        cache[c, s, L_VALID, w] = 0
        cache[c, s, L_DIRTY, w] = 0
    cache[c, s, L_VALID, w] |= bit
    if dirty:
        cache[c, s, L_DIRTY, w] |= bit
    else:
        cache[c, s, L_DIRTY, w] &= ~bit
    cache[c, s, L_FILL + (sector & 3), w] = ready
    shift = 16 * (sector & 3)
    cache[c, s, L_MERGED, w] = (cache[c, s, L_MERGED, w] & ~(MERGED_MAX << shift)) | (1 << shift)  # the miss itself
    touch(cache, clocks, c, s, w)
    return ev_line, ev_dirty


@helper
def merge_in_flight(cache, c, s, w, sector, limit):
    """A request for ``sector`` while its data is still in flight joins the miss-status holding register
    of the miss that fetches it, if the register holds fewer than ``limit`` requests (0: no limit);
    returns whether it could."""
    shift = 16 * (sector & 3)
    held = (cache[c, s, L_MERGED, w] >> shift) & MERGED_MAX
    if limit > 0 and held >= limit:
        return False
    if held < MERGED_MAX:
        cache[c, s, L_MERGED, w] += 1 << shift
    return True
