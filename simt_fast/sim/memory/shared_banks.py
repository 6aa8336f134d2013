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
"""

from __future__ import annotations

from ._jit import helper
from .coalesce import insert_unique, most_lanes_on_a_byte
from .layout import BANK_BASE


@helper
def shared_passes(addrs, n_lanes, nbytes, banks, group, atomic, scratch):
    """(passes, replays) of a warp-level shared access: passes summed over the lane groups that
    access memory, replays = passes beyond one per such group. (0, 0): no lane accesses memory."""
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
