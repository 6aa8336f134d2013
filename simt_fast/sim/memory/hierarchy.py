"""The memory hierarchy a warp-level memory instruction goes through: :func:`access` (docs/memory.md).

Global and local accesses coalesce into sectors (an atomic's sector once per transaction: atomics
whose bytes overlap serialise), which the SM's load/store unit takes line by line; each sector then
looks up the SM's L1 (loads and stores; atomics skip it). A load that misses needs a miss-status
holding register (:mod:`.mshr`) and every request leaving the SM room in its miss queue; until then
the LSU stalls. A request crosses the interconnect (the SM's port, the slice's port; the reply
books the SM's reply port) to its L2 slice, whose data port serves one sector at a time
(:mod:`.ports`, :mod:`.slices`), then the L2 and, on a miss, DRAM. The instruction's result is ready
when its last sector's data arrives: the cycle the LSU took the sector + the latency of the level
that served it + every cycle it waited on the way (ports, slice, DRAM partition). Shared accesses
take one LSU cycle per pass (bank conflicts add passes); constant accesses one cycle of the constant
cache per distinct address.

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

from ..config import SECTOR_BYTES
from ..._jit import prefetch
from ._jit import helper, stream
from .cache import fill_sector, find_way, merge_in_flight, sector_valid, set_of, touch
from .coalesce import coalesce, distinct_addresses
from .dram import dram_transfer
from .layout import (
    C_CONST_ACCESSES, C_CONST_REQUESTS, C_ICNT_WAIT, C_L1_HITS, C_L1_MISSES, C_L2_HITS, C_L2_MISSES, C_MEM_LINES,
    C_MEM_REQUESTS, C_MEM_SECTORS, C_MEM_STALL, C_MSHR_STALL, C_SHARED_PASSES, C_SHARED_REPLAYS, C_SHARED_REQUESTS,
    C_SLICE_WAIT, KIND_ATOMIC, KIND_LOAD, KIND_STORE, L_DIRTY, L_FILL, L_MRU, L_TAG, L_VALID, P_BANK_GROUP, P_BANKS, P_ICNT_BPC,
    P_L1_ASSOC, P_L1_MERGE, P_L1_MSHRS, P_L2_MERGE, P_L1_SET_MASK, P_L1_SETS, P_L1_WRITE_EVICT, P_L2_ASSOC, P_L2_SET_MASK, P_L2_SETS,
    P_L2_WRITE_FETCH, P_LAT_CONST, P_LAT_DRAM, P_LAT_L1, P_LAT_L2, P_LAT_NONE, P_LAT_SHARED, P_LSU_SECTORS,
    P_MISS_QUEUE, P_PKT_BARE, P_PKT_SECTOR, P_SLICE_BPC, REPEAT_BASE, SL_IN, SL_PORT, SM_CONST_FREE, SM_IN,
    SM_LSU_FREE, SM_OUT, SPACE_CONST, SPACE_LOCAL, SPACE_SHARED,
)
from .lsu import line_cycles, unit_start
from .mshr import register_free, take_register
from .ports import hold, room, transfer
from .shared_banks import shared_passes
from .slices import slice_of


@helper
def _dram_read_write(dram, params, sector, t, kind, counters):
    """No L2: a load reads the sector, a store writes it, an atomic reads then writes it."""
    q = dram_transfer(dram, params, sector, t, counters)
    if kind == KIND_ATOMIC:
        dram_transfer(dram, params, sector, t, counters)
    return t + params[P_LAT_DRAM] + q


@helper
def prefetch_sets(l1, l2, params, sm, scratch, n):
    """Ask the host for the L1 and L2 sets of the request's ``n`` sectors (``scratch[:n]``) before the
    first is looked up: each lookup is a chain of dependent loads (the set's most recently used way,
    its tag, the way's fields) into state far larger than the host's caches, and the sectors are
    looked up one after the other; their sets' first lines can all be on their way at once."""
    sets1 = params[P_L1_SETS]
    sets2 = params[P_L2_SETS]
    for i in range(n):
        line = scratch[i] >> 2
        if sets1 > 0:
            s = set_of(line, sets1, params[P_L1_SET_MASK])
            prefetch(l1[sm, s, L_MRU], 0)
            prefetch(l1[sm, s, L_TAG], 0)
        if sets2 > 0:
            s = set_of(line, sets2, params[P_L2_SET_MASK])
            prefetch(l2[0, s, L_MRU], 0)
            prefetch(l2[0, s, L_TAG], 0)


@helper
def l2_access(slices, l2, l2_clock, dram, params, q, sector, t, kind, counters):
    """The L2 (or DRAM without one) takes the sector at cycle ``t`` from the data port of slice ``q``;
    returns the cycle its data is ready (for a store: the cycle the write is done).

    A sector's data reaches the L2 ``lat_l2`` cycles before it is back at the SM. A load or atomic
    of a sector whose data has not reached the L2 yet merges with the miss that fetches it; when
    that miss-status holding register is full, the slice stalls until the data arrives (nothing
    behind the request moves: its data port is busy until then) and the request then hits."""
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
        fill = l2[0, s, L_FILL + (sector & 3), w]
        if kind != KIND_STORE and fill > ready:
            ready = fill
            if not merge_in_flight(l2, 0, s, w, sector, params[P_L2_MERGE]):
                # the slice retries the request until the data arrives, and serves it then
                arrives = fill - params[P_LAT_L2]
                counters[C_SLICE_WAIT] += arrives - t
                hold(slices, q, SL_PORT, arrives, params[P_SLICE_BPC])
                transfer(slices, q, SL_PORT, arrives, SECTOR_BYTES, params[P_SLICE_BPC])
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
def below_l1(sm_state, slices, l2, l2_clock, dram, params, sm, sector, t, kind, counters):
    """A request of SM ``sm`` for ``sector`` leaving it at cycle ``t``, through the interconnect to the
    sector's L2 slice and back; returns the cycle its data (a store: its acknowledgement) is back.
    Every port adds only its waiting: without contention the L2 (DRAM) latency is the whole trip."""
    bpc = params[P_ICNT_BPC]
    request = params[P_PKT_BARE] if kind == KIND_LOAD else params[P_PKT_SECTOR]  # a write, an atomic: data
    reply = params[P_PKT_BARE] if kind == KIND_STORE else params[P_PKT_SECTOR]  # a write: its ack only
    q = slice_of(sector, params)
    sent = t + transfer(sm_state, sm, SM_OUT, t, request, bpc)
    back = transfer(sm_state, sm, SM_IN, sent, reply, bpc)  # booked when the request leaves, in its order
    arrived = sent + transfer(slices, q, SL_IN, sent, request, bpc)
    taken = arrived + transfer(slices, q, SL_PORT, arrived, SECTOR_BYTES, params[P_SLICE_BPC])
    counters[C_ICNT_WAIT] += (sent - t) + (arrived - sent) + back
    counters[C_SLICE_WAIT] += taken - arrived
    return l2_access(slices, l2, l2_clock, dram, params, q, sector, taken, kind, counters) + back


@helper
def leave(sm_state, params, sm, t, kind):
    """The first cycle at or after ``t`` a request of ``kind`` finds room in the SM's miss queue (at
    most ``l1_miss_queue`` requests waiting for the interconnect; 0: unbounded)."""
    queue = params[P_MISS_QUEUE]
    if queue == 0:
        return t
    request = params[P_PKT_BARE] if kind == KIND_LOAD else params[P_PKT_SECTOR]
    return room(sm_state, sm, SM_OUT, t, queue * request, params[P_ICNT_BPC])


@helper
def sector_access(sm_state, l1, l1_clock, slices, mshr, l2, l2_clock, dram, params, sm, sector, t, space, kind,
                  counters):
    """One sector of a global/local access, taken by the LSU of ``sm`` at cycle ``t``. Returns (ready,
    the cycle the LSU could take it: later than ``t`` when it stalled for a register or the queue)."""
    sets = params[P_L1_SETS]
    if kind == KIND_ATOMIC or sets == 0:
        start = leave(sm_state, params, sm, t, kind)
        return below_l1(sm_state, slices, l2, l2_clock, dram, params, sm, sector, start, kind, counters), start
    assoc = params[P_L1_ASSOC]
    s = set_of(sector >> 2, sets, params[P_L1_SET_MASK])
    w = find_way(l1, sm, s, assoc, sector >> 2)
    bit = 1 << (sector & 3)
    if kind == KIND_LOAD:
        if sector_valid(l1, sm, s, w, sector):
            # a hit, or a miss in flight this request merges with (no new register); when that
            # register is full, the LSU stalls until the data is there, and then hits
            counters[C_L1_HITS] += 1
            touch(l1, l1_clock, sm, s, w)
            ready = t + params[P_LAT_L1]
            fill = l1[sm, s, L_FILL + (sector & 3), w]
            if fill <= ready or merge_in_flight(l1, sm, s, w, sector, params[P_L1_MERGE]):
                return (fill if fill > ready else ready), t
            counters[C_MSHR_STALL] += fill - t
            return fill + params[P_LAT_L1], fill
        counters[C_L1_MISSES] += 1
        n_regs = params[P_L1_MSHRS]
        start = t
        if n_regs > 0:
            start = register_free(mshr, sm, n_regs, start)
        start = leave(sm_state, params, sm, start, KIND_LOAD)
        counters[C_MSHR_STALL] += start - t
        ready = below_l1(sm_state, slices, l2, l2_clock, dram, params, sm, sector, start, KIND_LOAD, counters)
        if n_regs > 0:
            take_register(mshr, sm, n_regs, ready)
        ev_line, ev_dirty = fill_sector(l1, l1_clock, sm, s, assoc, w, sector, ready, False)
        for k in range(4):
            if (ev_dirty >> k) & 1:
                below_l1(sm_state, slices, l2, l2_clock, dram, params, sm, ev_line * 4 + k, start, KIND_STORE,
                         counters)
        return ready, start
    # a store
    if sector_valid(l1, sm, s, w, sector):
        counters[C_L1_HITS] += 1
        if params[P_L1_WRITE_EVICT] == 0:
            touch(l1, l1_clock, sm, s, w)
        elif space == SPACE_LOCAL:
            touch(l1, l1_clock, sm, s, w)
            l1[sm, s, L_DIRTY, w] |= bit
            return t + params[P_LAT_L1], t
        else:
            l1[sm, s, L_VALID, w] &= ~bit
            l1[sm, s, L_DIRTY, w] &= ~bit
    else:
        counters[C_L1_MISSES] += 1
    start = leave(sm_state, params, sm, t, KIND_STORE)
    return below_l1(sm_state, slices, l2, l2_clock, dram, params, sm, sector, start, KIND_STORE, counters), start


@helper
def access(state, params, sm, warp, now, space, kind, nbytes, writes_reg, addrs, resident, n_lanes, counters):
    """A warp-level memory instruction issued at cycle ``now`` by warp slot ``warp`` of SM ``sm``;
    returns the cycle its result is ready.

    ``space``: the instruction's op_class (MEM_GLOBAL, MEM_SHARED, MEM_LOCAL, MEM_CONST); ``kind``:
    its mem_kind (load, store, atomic); ``nbytes``: bytes one thread accesses; ``writes_reg``: it has
    a destination register (its result counts towards mem_stall_cycles). ``addrs[l]`` for lanes
    ``l < n_lanes``: the lane's /mem entry (as int64), or NO_ACCESS (-1) for an inactive lane or a false
    guard; ``resident[l]``: the slot of the lane's thread on the SM (its CTA's slot x CTA threads in
    whole warps + its index in the CTA; used by local memory). An instruction none of whose lanes
    accesses memory is ready after ``lat_alu``.
    """
    sm_state, l1, l1_clock, l2, l2_clock, dram, warp_wait, scratch, slices, mshr = state
    atomic = kind == KIND_ATOMIC
    if space == SPACE_SHARED:
        passes, replays = shared_passes(addrs, n_lanes, nbytes, params[P_BANKS], params[P_BANK_GROUP], atomic, scratch)
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
        n = coalesce(addrs, resident, n_lanes, nbytes, space == SPACE_LOCAL, atomic, sm, params, scratch)
        if n == 0:
            return now + params[P_LAT_NONE]
        counters[C_MEM_REQUESTS] += 1
        prefetch_sets(l1, l2, params, sm, scratch, n)
        # the LSU takes one line per cycle, a few of its sectors; an atomic one transaction per cycle.
        # A stall (no free register, a full miss queue) delays the sector and everything after it.
        per_cycle = 1 if atomic else params[P_LSU_SECTORS]
        start = unit_start(sm_state, sm, SM_LSU_FREE, now)
        used = 0  # LSU cycles taken by the lines before this one
        stalled = 0
        ready = 0
        i = 0
        while i < n:
            line = scratch[i] >> 2
            j = i + 1
            while j < n and scratch[j] >> 2 == line:
                j += 1
            counters[C_MEM_LINES] += 1
            k = 0  # the line's sectors (an atomic's transactions) taken so far
            for x in range(i, j):
                for _ in range(scratch[REPEAT_BASE + x] if atomic else 1):
                    t = start + used + k // per_cycle + stalled
                    r, taken = sector_access(sm_state, l1, l1_clock, slices, mshr, l2, l2_clock, dram, params, sm,
                                             scratch[x], t, space, kind, counters)
                    stalled += taken - t
                    if r > ready:
                        ready = r
                    k += 1
            counters[C_MEM_SECTORS] += k
            used += line_cycles(k, per_cycle)
            i = j
        sm_state[sm, SM_LSU_FREE] = start + used + stalled
    if writes_reg and ready > warp_wait[warp]:
        # warp-cycles with a memory result outstanding: the union of [issue, ready) over the warp's
        # memory results (its issues come in cycle order, so extending one interval suffices)
        since = now if now > warp_wait[warp] else warp_wait[warp]
        counters[C_MEM_STALL] += ready - since
        warp_wait[warp] = ready
    return ready


@stream  # no NRT: it would incref/decref every array argument of `access` on every call
def replay(state, params, sms, warps, nows, spaces, kinds, nbytes, writes_reg, addrs, resident, n_lanes, counters,
           ready):
    """Run a stream of accesses through :func:`access` in order (row ``i`` of the 2-D ``addrs`` and
    ``resident`` holds access ``i``'s lanes); writes each one's ready cycle to ``ready[i]``. For tests
    and benchmarks: the timing kernels call :func:`access` from their issue path instead."""
    for i in range(sms.shape[0]):
        ready[i] = access(state, params, sms[i], warps[i], nows[i], spaces[i], kinds[i], nbytes[i], writes_reg[i],
                          addrs[i], resident[i], n_lanes[i], counters)
