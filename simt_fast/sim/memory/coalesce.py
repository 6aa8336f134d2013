"""Coalescing: the distinct 32-byte sectors a warp-level global or local access touches (docs/memory.md).

Each active lane's access covers ``nbytes`` bytes from its address; every sector one of those bytes
falls in is touched once, however many lanes touch it (an access straddling a sector or line
boundary touches both). An atomic is different: lanes whose bytes overlap cannot share a
transaction (GPGPU-Sim's atomic coalescing), so each sector takes as many transactions as the most
lanes that touch any one of its bytes. Local memory is interleaved first, as GPGPU-Sim lays it out:
word ``w`` of every thread the machine can hold at once side by side (stride: CTA threads in whole
warps x CTAs per SM x SMs), ordered by CTA slot across the SMs and by index within the CTA, so a warp
reading the same local variable touches one sector per 8 threads, and which cache sets it uses does
not depend on the launch's size. Constant memory serialises one access per distinct address.
"""

from __future__ import annotations

from ._jit import helper
from .layout import BYTE_BASE, LOCAL_BASE, P_CTA_THREADS, P_LOCAL_STRIDE, P_N_SMS, REPEAT_BASE, SECTOR_SHIFT


@helper
def insert_unique(buf, n, x):
    """Insert ``x`` into the sorted, duplicate-free ``buf[:n]``; returns the new length."""
    # lanes mostly ascend or repeat (coalesced, broadcast): try the end before searching
    if n == 0 or buf[n - 1] < x:
        buf[n] = x
        return n + 1
    if buf[n - 1] == x:
        return n
    lo = 0
    hi = n
    while lo < hi:
        mid = (lo + hi) >> 1
        if buf[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    if lo < n and buf[lo] == x:
        return n
    for j in range(n, lo, -1):
        buf[j] = buf[j - 1]
    buf[lo] = x
    return n + 1


@helper
def local_word_address(word, sm, resident, params):
    """Byte address of 4-byte word ``word`` of the local frame of the thread in slot ``resident`` of SM
    ``sm`` (its CTA's slot x CTA threads + its index in the CTA)."""
    cta_threads = params[P_CTA_THREADS]
    slot = resident // cta_threads
    thread = cta_threads * (sm + params[P_N_SMS] * slot) + resident - slot * cta_threads
    return LOCAL_BASE + (word * params[P_LOCAL_STRIDE] + thread) * 4


@helper
def most_lanes_on_a_byte(addrs, lane0, lane1, nbytes, unit, shift, scratch):
    """The most of lanes ``lane0 .. lane1 - 1`` that touch any one byte of the ``2**shift``-byte unit
    number ``unit`` (a sector: shift 5; a shared word: shift 2): the transactions (passes) an atomic
    needs there. Counts bytes in ``scratch[BYTE_BASE:]``."""
    size = 1 << shift
    for b in range(size):
        scratch[BYTE_BASE + b] = 0
    last = nbytes - 1 if nbytes > 0 else 0
    for lane in range(lane0, lane1):
        a = addrs[lane]
        if a < 0:
            continue
        for b in range(a, a + last + 1):
            if b >> shift == unit:
                scratch[BYTE_BASE + b - (unit << shift)] += 1
    most = 0
    for b in range(size):
        if scratch[BYTE_BASE + b] > most:
            most = scratch[BYTE_BASE + b]
    return most


@helper
def coalesce(addrs, resident, n_lanes, nbytes, local, atomic, sm, params, out):
    """The sorted distinct sector numbers (address >> 5) of the lanes' accesses into ``out``; returns
    how many. ``addrs[l] < 0`` (NO_ACCESS, an inactive lane) makes no access; ``local``: ``addrs`` are
    frame offsets of the threads in slots ``resident`` of SM ``sm``. ``atomic`` (global): each sector's
    transactions go to ``out[REPEAT_BASE + i]``."""
    n = 0
    last = nbytes - 1 if nbytes > 0 else 0
    for lane in range(n_lanes):
        a = addrs[lane]
        if a < 0:
            continue
        if local:
            for word in range(a >> 2, ((a + last) >> 2) + 1):
                n = insert_unique(out, n, local_word_address(word, sm, resident[lane], params) >> SECTOR_SHIFT)
        else:
            for s in range(a >> SECTOR_SHIFT, ((a + last) >> SECTOR_SHIFT) + 1):
                # lanes mostly ascend or repeat (coalesced, broadcast): no call for those
                if n == 0 or out[n - 1] < s:
                    out[n] = s
                    n += 1
                elif out[n - 1] != s:
                    n = insert_unique(out, n, s)
    if atomic:
        for i in range(n):  # (PTX has no local atomics: one transaction per sector if a trace has one)
            out[REPEAT_BASE + i] = 1 if local else most_lanes_on_a_byte(addrs, 0, n_lanes, nbytes, out[i], SECTOR_SHIFT,
                                                                        out)
    return n


@helper
def distinct_addresses(addrs, n_lanes, out):
    """Constant memory: how many distinct addresses the lanes access (collected unsorted in ``out``;
    a warp's constant accesses hit few addresses, so a short linear scan beats sorting)."""
    n = 0
    for lane in range(n_lanes):
        a = addrs[lane]
        if a < 0:
            continue
        j = n - 1
        while j >= 0 and out[j] != a:
            j -= 1
        if j < 0:
            out[n] = a
            n += 1
    return n
