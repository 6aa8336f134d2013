"""The memory hierarchy a warp-level memory instruction goes through: :func:`access` (docs/memory.md).

Global and local accesses coalesce into sectors, which the SM's load/store unit takes line by line;
each sector then looks up the SM's L1 (loads and stores; atomics skip it), on a miss the shared L2,
and on a miss DRAM. Shared accesses take one LSU cycle per pass (bank conflicts add passes); constant
accesses one cycle of the constant cache per distinct address. The instruction's result is ready when
its last sector's data arrives: the cycle the LSU took the sector + the latency of the level that
served it + the cycles it queued for a DRAM partition.

Write policies (GPGPU-Sim's Fermi configuration by default, `simt_fast.sim.config`):
* L1 ``write-evict``: a global store that hits evicts the sector, a local store that hits marks it
  dirty and stops there (write-back); ``write-through``: a store that hits keeps the sector. A store
  that misses never allocates. Every store except a local write-back hit goes on to the L2. An L1 line
  evicted with dirty sectors writes them to the L2.
* L2 write-back: a store or atomic that hits marks the sector dirty; an atomic that misses reads the
  sector from DRAM and marks it dirty; a store that misses either (``fetch``) writes the sector on to
  DRAM and reads it in clean, or (``allocate``) allocates it dirty without touching DRAM. Dirty sectors
  are written to DRAM when their line is evicted.
* Without an L2, loads read DRAM, stores write it and an atomic reads and then writes its sector.

All state lives in the arrays of ``state`` (allocated once by ``simt_fast.sim.memory.allocate``); no
function here allocates.
"""

from __future__ import annotations

from ._jit import helper, stream
from .cache import fill_sector, find_way, sector_valid, set_of, touch
from .coalesce import coalesce, distinct_addresses
from .dram import dram_transfer
from .layout import (
    C_CONST_ACCESSES, C_CONST_REQUESTS, C_L1_HITS, C_L1_MISSES, C_L2_HITS, C_L2_MISSES, C_MEM_LINES, C_MEM_REQUESTS,
    C_MEM_SECTORS, C_MEM_STALL, C_SHARED_PASSES, C_SHARED_REPLAYS, C_SHARED_REQUESTS, KIND_ATOMIC, KIND_LOAD,
    KIND_STORE, L_DIRTY, L_FILL, L_VALID, P_BANK_GROUP, P_BANKS, P_L1_ASSOC, P_L1_SETS, P_L1_SET_MASK, P_L1_WRITE_EVICT,
    P_L2_ASSOC, P_L2_SET_MASK, P_L2_SETS, P_L2_WRITE_FETCH, P_LAT_CONST, P_LAT_DRAM, P_LAT_L1, P_LAT_L2, P_LAT_NONE, P_LAT_SHARED,
    P_LSU_SECTORS, P_N_THREADS, SM_CONST_FREE, SM_LSU_FREE, SPACE_CONST, SPACE_LOCAL, SPACE_SHARED,
)
from .lsu import line_cycles, unit_start
from .shared_banks import shared_passes


@helper
def _dram_read_write(dram, params, sector, t, kind, counters):
    """No L2: a load reads the sector, a store writes it, an atomic reads then writes it."""
    q = dram_transfer(dram, params, sector, t, counters)
    if kind == KIND_ATOMIC:
        dram_transfer(dram, params, sector, t, counters)
    return t + params[P_LAT_DRAM] + q


@helper
def below_l1(l2, l2_clock, dram, params, sector, t, kind, counters):
    """A sector access that reaches the L2 (or DRAM without one) at cycle ``t``; returns the cycle its
    data is ready (for a store: the cycle the write is done)."""
    sets = params[P_L2_SETS]
    if sets == 0:
        return _dram_read_write(dram, params, sector, t, kind, counters)
    assoc = params[P_L2_ASSOC]
    s = set_of(sector >> 2, sets, params[P_L2_SET_MASK])
    w = find_way(l2, 0, s, assoc, sector >> 2)
    if sector_valid(l2, 0, s, w, sector):
        counters[C_L2_HITS] += 1
        touch(l2, l2_clock, 0, s, w)
        if kind != KIND_LOAD:
            l2[0, s, L_DIRTY, w] |= 1 << (sector & 3)
        ready = t + params[P_LAT_L2]
        if kind != KIND_STORE and l2[0, s, L_FILL + (sector & 3), w] > ready:
            ready = l2[0, s, L_FILL + (sector & 3), w]
        return ready
    counters[C_L2_MISSES] += 1
    if kind == KIND_STORE and params[P_L2_WRITE_FETCH] == 0:
        ready = t + params[P_LAT_L2]
        ev_line, ev_dirty = fill_sector(l2, l2_clock, 0, s, assoc, w, sector, ready, True)
    else:
        if kind == KIND_STORE:
            dram_transfer(dram, params, sector, t, counters)  # the write goes on, then the sector is read in
        ready = t + params[P_LAT_DRAM] + dram_transfer(dram, params, sector, t, counters)
        ev_line, ev_dirty = fill_sector(l2, l2_clock, 0, s, assoc, w, sector, ready, kind == KIND_ATOMIC)
    for k in range(4):
        if (ev_dirty >> k) & 1:
            dram_transfer(dram, params, ev_line * 4 + k, t, counters)
    return ready


@helper
def sector_access(l1, l1_clock, l2, l2_clock, dram, params, sm, sector, t, space, kind, counters):
    """One sector of a global/local access, taken by the LSU of ``sm`` at cycle ``t``."""
    sets = params[P_L1_SETS]
    if kind == KIND_ATOMIC or sets == 0:
        return below_l1(l2, l2_clock, dram, params, sector, t, kind, counters)
    assoc = params[P_L1_ASSOC]
    s = set_of(sector >> 2, sets, params[P_L1_SET_MASK])
    w = find_way(l1, sm, s, assoc, sector >> 2)
    bit = 1 << (sector & 3)
    if kind == KIND_LOAD:
        if sector_valid(l1, sm, s, w, sector):
            counters[C_L1_HITS] += 1
            touch(l1, l1_clock, sm, s, w)
            ready = t + params[P_LAT_L1]
            if l1[sm, s, L_FILL + (sector & 3), w] > ready:
                ready = l1[sm, s, L_FILL + (sector & 3), w]
            return ready
        counters[C_L1_MISSES] += 1
        ready = below_l1(l2, l2_clock, dram, params, sector, t, KIND_LOAD, counters)
        ev_line, ev_dirty = fill_sector(l1, l1_clock, sm, s, assoc, w, sector, ready, False)
        for k in range(4):
            if (ev_dirty >> k) & 1:
                below_l1(l2, l2_clock, dram, params, ev_line * 4 + k, t, KIND_STORE, counters)
        return ready
    # a store
    if sector_valid(l1, sm, s, w, sector):
        counters[C_L1_HITS] += 1
        if params[P_L1_WRITE_EVICT] == 0:
            touch(l1, l1_clock, sm, s, w)
        elif space == SPACE_LOCAL:
            touch(l1, l1_clock, sm, s, w)
            l1[sm, s, L_DIRTY, w] |= bit
            return t + params[P_LAT_L1]
        else:
            l1[sm, s, L_VALID, w] &= ~bit
            l1[sm, s, L_DIRTY, w] &= ~bit
    else:
        counters[C_L1_MISSES] += 1
    return below_l1(l2, l2_clock, dram, params, sector, t, KIND_STORE, counters)


@helper
def access(state, params, sm, warp, now, space, kind, nbytes, writes_reg, addrs, thread_ids, n_lanes, counters):
    """A warp-level memory instruction issued at cycle ``now`` by warp slot ``warp`` of SM ``sm``;
    returns the cycle its result is ready.

    ``space``: the instruction's op_class (MEM_GLOBAL, MEM_SHARED, MEM_LOCAL, MEM_CONST); ``kind``:
    its mem_kind (load, store, atomic); ``nbytes``: bytes one thread accesses; ``writes_reg``: it has
    a destination register (its result counts towards mem_stall_cycles). ``addrs[l]`` for lanes
    ``l < n_lanes``: the lane's /mem entry (as int64), or NO_ACCESS (-1) for an inactive lane or a false
    guard; ``thread_ids[l]``: the lane's thread (global id, trace order; used by local memory). An
    instruction none of whose lanes accesses memory is ready after ``lat_alu``.
    """
    sm_state, l1, l1_clock, l2, l2_clock, dram, warp_wait, scratch = state
    if space == SPACE_SHARED:
        passes, replays = shared_passes(addrs, n_lanes, nbytes, params[P_BANKS], params[P_BANK_GROUP], scratch)
        if passes == 0:
            return now + params[P_LAT_NONE]
        counters[C_SHARED_REQUESTS] += 1
        counters[C_SHARED_REPLAYS] += replays
        counters[C_SHARED_PASSES] += passes
        start = unit_start(sm_state, sm, SM_LSU_FREE, now)
        sm_state[sm, SM_LSU_FREE] = start + passes
        ready = start + passes - 1 + params[P_LAT_SHARED]
    elif space == SPACE_CONST:
        n = distinct_addresses(addrs, n_lanes, scratch)
        if n == 0:
            return now + params[P_LAT_NONE]
        counters[C_CONST_REQUESTS] += 1
        counters[C_CONST_ACCESSES] += n
        start = unit_start(sm_state, sm, SM_CONST_FREE, now)
        sm_state[sm, SM_CONST_FREE] = start + n
        ready = start + n - 1 + params[P_LAT_CONST]
    else:
        n = coalesce(addrs, thread_ids, n_lanes, nbytes, space == SPACE_LOCAL, params[P_N_THREADS], scratch)
        if n == 0:
            return now + params[P_LAT_NONE]
        counters[C_MEM_REQUESTS] += 1
        counters[C_MEM_SECTORS] += n
        per_cycle = params[P_LSU_SECTORS]
        start = unit_start(sm_state, sm, SM_LSU_FREE, now)
        used = 0  # LSU cycles taken by the lines before this one
        ready = 0
        i = 0
        while i < n:
            line = scratch[i] >> 2
            j = i + 1
            while j < n and scratch[j] >> 2 == line:
                j += 1
            counters[C_MEM_LINES] += 1
            for k in range(i, j):
                r = sector_access(l1, l1_clock, l2, l2_clock, dram, params, sm, scratch[k],
                                  start + used + (k - i) // per_cycle, space, kind, counters)
                if r > ready:
                    ready = r
            used += line_cycles(j - i, per_cycle)
            i = j
        sm_state[sm, SM_LSU_FREE] = start + used
    if writes_reg and ready > warp_wait[warp]:
        # warp-cycles with a memory result outstanding: the union of [issue, ready) over the warp's
        # memory results (its issues come in cycle order, so extending one interval suffices)
        since = now if now > warp_wait[warp] else warp_wait[warp]
        counters[C_MEM_STALL] += ready - since
        warp_wait[warp] = ready
    return ready


@stream  # no NRT: it would incref/decref every array argument of `access` on every call
def replay(state, params, sms, warps, nows, spaces, kinds, nbytes, writes_reg, addrs, thread_ids, n_lanes, counters,
           ready):
    """Run a stream of accesses through :func:`access` in order (row ``i`` of the 2-D ``addrs`` and
    ``thread_ids`` holds access ``i``'s lanes); writes each one's ready cycle to ``ready[i]``. For tests
    and benchmarks: the timing kernels call :func:`access` from their issue path instead."""
    for i in range(sms.shape[0]):
        ready[i] = access(state, params, sms[i], warps[i], nows[i], spaces[i], kinds[i], nbytes[i], writes_reg[i],
                          addrs[i], thread_ids[i], n_lanes[i], counters)
