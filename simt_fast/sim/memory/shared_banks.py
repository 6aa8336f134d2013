"""Shared-memory bank conflicts (docs/memory.md).

Shared memory is ``shared_banks`` banks of 4-byte words; word ``w`` lives in bank ``w % shared_banks``.
The lanes of a warp-level access are checked in groups of ``shared_bank_group`` consecutive lanes
(the whole warp on Fermi and later, half-warps on GT200). Within a group, lanes reading the same word
share one read (broadcast); a bank holding ``n`` distinct requested words needs ``n`` passes, and the
group takes as many passes as its busiest bank: an n-way conflict is n passes, n - 1 replays. A lane's
access of ``nbytes`` > 4 covers every word it spans, each counted like a separate lane's word — so a
conflict-free 8-byte (16-byte) warp access takes 2 (4) passes when 32 banks serve 32 lanes, as on
the hardware, which serves 64- and 128-bit accesses in half- and quarter-warp passes. An atomic does
not broadcast: lanes whose bytes overlap serialise, so a word takes as many passes as the most lanes
touching any one of its bytes (32 lanes on one word: 32 passes).

Most warp accesses are affine (lane ``l`` at ``a + l * stride``: a broadcast, a row, a column of a
tile): `affine_passes` counts them in closed form, and only the others are counted word by word
(`counted_passes`, which costs a dozen host cycles per lane: on the replicated-CTA trace, 1.69 M
shared accesses, it was 40 % of the run).
"""

from __future__ import annotations

from ._jit import helper
from .coalesce import insert_unique, most_lanes_on_a_byte
from .layout import BANK_BASE


@helper
def shared_passes(addrs, n_lanes, nbytes, banks, group, atomic, scratch):
    """(passes, replays) of a warp-level shared access: passes summed over the lane groups that
    access memory, replays = passes beyond one per such group. (0, 0): no lane accesses memory."""
    if not atomic:
        passes, replays = affine_passes(addrs, n_lanes, nbytes, banks, group)
        if passes >= 0:
            return passes, replays
    return counted_passes(addrs, n_lanes, nbytes, banks, group, atomic, scratch)


@helper
def affine_passes(addrs, n_lanes, nbytes, banks, group):
    """(passes, replays) in closed form when every lane accesses one aligned word of an affine row
    (``n_lanes`` >= 1 lanes, lane ``l`` at ``addrs[0] + l * stride``, the word-aligned ``stride`` and
    ``addrs[0]``, ``nbytes`` <= 4, a power-of-two number of banks); (-1, 0) for any other access.

    Lane l reads word w0 + l * ws (ws = stride / 4). ws = 0: one word, a broadcast (one pass per
    group). Otherwise the words are distinct and their banks repeat with period p = banks / gcd(ws,
    banks) lanes, so a group of g lanes puts ceil(g / p) words in its busiest bank."""
    a0 = addrs[0]
    if a0 < 0 or nbytes > 4 or banks & (banks - 1) != 0 or a0 & 3 != 0:
        return -1, 0
    stride = addrs[1] - a0 if n_lanes > 1 else 0
    if stride & 3 != 0:
        return -1, 0
    off = 0  # (no early exit: the host compares the lanes a vector at a time)
    for lane in range(2, n_lanes):
        off |= addrs[lane] ^ (a0 + lane * stride)
    if off != 0:
        return -1, 0
    ws = stride >> 2
    low = ws & -ws  # gcd(ws, banks) for ws != 0, both powers of two below banks
    period = 1 if ws == 0 else (banks // low if 0 < low < banks else 1)
    passes = 0
    n_groups = 0
    for g0 in range(0, n_lanes, group):
        g = group if g0 + group <= n_lanes else n_lanes - g0
        passes += 1 if ws == 0 else (g + period - 1) // period
        n_groups += 1
    return passes, passes - n_groups


@helper
def counted_passes(addrs, n_lanes, nbytes, banks, group, atomic, scratch):
    """`shared_passes` word by word: any access, with inactive lanes, atomics, any bank count."""
    passes = 0
    replays = 0
    last = nbytes - 1 if nbytes > 0 else 0
    pow2 = banks & (banks - 1) == 0  # every real GPU: a mask instead of a 64-bit division per word
    for g0 in range(0, n_lanes, group):
        g1 = g0 + group if g0 + group < n_lanes else n_lanes
        if pow2 and not atomic:
            # the common case first, without sorting: every bank serves one word (conflict-free or
            # broadcast) - one pass. A second word in a bank sends the group to the general count.
            # (which banks hold a word so far: a bit each, banks <= 64, so nothing to clear per access)
            taken = 0
            used = False
            conflict = False
            for lane in range(g0, g1):
                a = addrs[lane]
                if a < 0:
                    continue
                used = True
                for word in range(a >> 2, ((a + last) >> 2) + 1):
                    bank = word & (banks - 1)
                    if (taken >> bank) & 1 == 0:
                        taken |= 1 << bank
                        scratch[BANK_BASE + bank] = word
                    elif scratch[BANK_BASE + bank] != word:
                        conflict = True
                        break
                if conflict:
                    break
            if not used:
                continue
            if not conflict:
                passes += 1
                continue
        n = 0
        for lane in range(g0, g1):
            a = addrs[lane]
            if a < 0:
                continue
            for word in range(a >> 2, ((a + last) >> 2) + 1):
                n = insert_unique(scratch, n, word)
        if n == 0:
            continue
        for b in range(banks):
            scratch[BANK_BASE + b] = 0
        worst = 0
        for i in range(n):
            b = BANK_BASE + (scratch[i] & (banks - 1) if pow2 else scratch[i] % banks)
            if atomic:
                scratch[b] += most_lanes_on_a_byte(addrs, g0, g1, nbytes, scratch[i], 2, scratch)
            else:
                scratch[b] += 1
            if scratch[b] > worst:
                worst = scratch[b]
        passes += worst
        replays += worst - 1
    return passes, replays
