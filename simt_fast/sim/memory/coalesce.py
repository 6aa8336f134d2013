"""Coalescing: the distinct 32-byte sectors a warp-level global or local access touches (docs/memory.md).

Each active lane's access covers ``nbytes`` bytes from its address; every sector one of those bytes
falls in is touched once, however many lanes touch it (an access straddling a sector or line
boundary touches both). Local memory is interleaved first, as NVIDIA GPUs lay it out: consecutive
32-bit words of one frame offset belong to consecutive threads, so a warp reading the same local
variable touches one sector per 8 threads. Constant memory serialises one access per distinct address.
"""

from __future__ import annotations

from ._jit import helper
from .layout import LOCAL_BASE, SECTOR_SHIFT


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
def local_word_address(word, thread_id, n_threads):
    """Byte address of 4-byte word ``word`` of thread ``thread_id``'s local frame, interleaved over the
    launch's ``n_threads`` threads: ((offset // 4) * n_threads + thread) * 4 (+ offset % 4)."""
    return LOCAL_BASE + (word * n_threads + thread_id) * 4


@helper
def coalesce(addrs, thread_ids, n_lanes, nbytes, local, n_threads, out):
    """The sorted distinct sector numbers (address >> 5) of the lanes' accesses into ``out``; returns
    how many. ``addrs[l] < 0`` (NO_ACCESS, an inactive lane) makes no access; ``local``: ``addrs`` are
    frame offsets of the threads ``thread_ids``."""
    n = 0
    last = nbytes - 1 if nbytes > 0 else 0
    for lane in range(n_lanes):
        a = addrs[lane]
        if a < 0:
            continue
        if local:
            for word in range(a >> 2, ((a + last) >> 2) + 1):
                n = insert_unique(out, n, local_word_address(word, thread_ids[lane], n_threads) >> SECTOR_SHIFT)
        else:
            for s in range(a >> SECTOR_SHIFT, ((a + last) >> SECTOR_SHIFT) + 1):
                n = insert_unique(out, n, s)
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
