"""The cycle loops' side of the memory model (docs/memory.md, *In the timing model*): on the issue of a
memory instruction, gather the issuing warp's lanes — each active lane's address for this step of
its thread's path, NO_ACCESS for an inactive lane (a guard-false thread already is NO_ACCESS in the
trace) — and ask :func:`simt_fast.sim.memory.access` when the result is ready.

Two gathers, one per kernel family: the core's warps are a lane mask over consecutive threads
(``tbase + lane``); the formation kernel's warps are slot arrays of whatever threads a regrouping
put together (dwf, tbc), which is where their loads stop coalescing.

A thread's next address is in row ``row0[t >> shift] + cursor[t]`` of `memory.program`'s layout,
usually an affine row of two words; a core warp whose lanes share a group and a cursor (a
converged warp) reads that row once, not once per lane, and asks the host to prefetch the group's
next row: the warp issues its next memory instruction many visits later. While such a warp stays
converged it keeps that row itself (``wrow``) and its threads' cursors wait (`access_mask`).
"""

from __future__ import annotations

import numpy as np

from ..._jit import prefetch
from ._jit import helper
from .hierarchy import access
from .layout import NO_ACCESS, P_CTA_THREADS, P_TPC, SPACE_LOCAL, STATE_FIELDS
from .program import NOT_AFFINE, lane_address

WAIT_FIELD = STATE_FIELDS.index("warp_wait")  # (a constant to numba: the state tuple's warp_wait)


@helper
def warp_first_row(mp, tbase, n_lanes):
    """The row a freshly dispatched core warp's threads all take next (every cursor is 0), or -1 when
    its lanes span two groups (a CTA size that is not a multiple of the group): see `access_mask`."""
    g = tbase >> mp.shift
    if (tbase + n_lanes - 1) >> mp.shift != g:
        return -1
    return mp.row0[g]


@helper
def flush_cursors(mp, mr, tbase, n_lanes, wrow):
    """Write a warp's common cursor back to its threads' own (``wrow`` >= 0: its next row)."""
    if wrow >= 0:
        c = wrow - mp.row0[tbase >> mp.shift]
        for lane in range(n_lanes):
            mr.cursor[tbase + lane] = c


@helper
def access_mask(mp, mr, sm, key, now, instr, mask, tbase, n_lanes, writes_reg, cta_slot, wrow):
    """A core warp's memory instruction: lanes ``l < n_lanes`` of ``mask`` (thread ``tbase + l``, its
    CTA in slot ``cta_slot`` of the SM), each taking its thread's next /mem entry; stall time is keyed
    by the warp's ``key``. Returns (the ready cycle, the warp's ``wrow`` after it).

    ``wrow`` >= 0 says every thread of the warp stands at the same entry, in row ``wrow`` of the one
    group that holds them, and that their own cursors are stale: while every lane issues, the warp
    reads that row and moves ``wrow`` on, touching no cursor (a converged warp, the common case: its
    32 cursors were a line or two the host had to fetch per access, 5 % of a replicated-CTA run). The
    first access with a lane off writes the common cursor back (`flush_cursors`) and the lanes go
    their own ways; an access by every lane from one cursor makes them common again. -1: the threads'
    cursors hold their entries."""
    addr = mr.lane_addr
    resident = mr.lane_resident
    cursor = mr.cursor
    rows = mp.rows
    shift = mp.shift
    in_group = (1 << shift) - 1
    every = np.int64(-1) if n_lanes >= 64 else (np.int64(1) << n_lanes) - 1
    if wrow >= 0 and mask != every:
        flush_cursors(mp, mr, tbase, n_lanes, wrow)
        wrow = -1
    if wrow >= 0:
        first = rows[2 * wrow]
        second = rows[2 * wrow + 1]
        wrow += 1
        i0 = tbase & in_group
        if second == NOT_AFFINE:
            for lane in range(n_lanes):
                addr[lane] = mp.full[first + i0 + lane]
        else:
            stride = second >> 32
            for lane in range(n_lanes):
                i = i0 + lane
                addr[lane] = NO_ACCESS if (second >> i) & 1 else first + i * stride
    else:
        r = -1  # the row read last: its (group, cursor), its two words
        row_g = -1
        row_c = -1
        first = 0
        second = 0
        common = cursor[tbase] if mask == every else -1  # the lanes' cursor, while they share one
        for lane in range(n_lanes):
            if (mask >> lane) & 1:
                t = tbase + lane
                c = cursor[t]
                cursor[t] = c + 1
                if c != common:
                    common = -1
                if t >> shift != row_g or c != row_c:
                    row_g = t >> shift
                    row_c = c
                    r = mp.row0[row_g] + c
                    first = rows[2 * r]
                    second = rows[2 * r + 1]
                    prefetch(rows, 2 * r + 2)  # the group's next row (see the module doc)
                i = t & in_group
                if second == NOT_AFFINE:
                    addr[lane] = mp.full[first + i]
                elif (second >> i) & 1:
                    addr[lane] = NO_ACCESS
                else:
                    addr[lane] = first + i * (second >> 32)
            else:
                addr[lane] = NO_ACCESS
        if common >= 0:
            wrow = warp_first_row(mp, tbase, n_lanes)
            if wrow >= 0:
                wrow += common + 1
    if mp.space[instr] == SPACE_LOCAL:  # (only local memory needs the threads' slots on the SM)
        first = cta_slot * mr.params[P_CTA_THREADS] + tbase % mr.params[P_TPC]  # lane 0's
        for lane in range(n_lanes):
            resident[lane] = first + lane
    return access(mr.state, mr.params, sm, key, now, mp.space[instr], mp.kind[instr], mp.nbytes[instr], writes_reg,
                  addr, resident, n_lanes, mr.counters), wrow


@helper
def access_slots(mp, mr, sm, w, wid, now, instr, wsl, W, writes_reg, res_cta):
    """A formation warp's memory instruction: slot ``s`` of record ``w`` holds thread ``wsl[w, s]``
    (-1: a hole); ``res_cta[sm, c]``: the CTA in the SM's slot c. Stall time is keyed by the record,
    restarted when the record holds a new warp (id ``wid``): a warp's stall is its own, as in the
    reference, which keys it by warp id."""
    if mr.owner[w] != wid:
        mr.owner[w] = wid
        mr.state[WAIT_FIELD][w] = 0
    addr = mr.lane_addr
    resident = mr.lane_resident
    cursor = mr.cursor
    tpc = mr.params[P_TPC]
    local = mp.space[instr] == SPACE_LOCAL  # (only local memory needs the threads' slots on the SM)
    for s in range(W):
        t = wsl[w, s]
        if t >= 0:
            addr[s] = lane_address(mp.rows, mp.full, mp.row0[t >> mp.shift] + cursor[t], t & ((1 << mp.shift) - 1))
            cursor[t] += 1
            resident[s] = 0
            if local:
                c = 0
                while res_cta[sm, c] != t // tpc:
                    c += 1
                resident[s] = c * mr.params[P_CTA_THREADS] + t % tpc
        else:
            resident[s] = 0
            addr[s] = NO_ACCESS
    return access(mr.state, mr.params, sm, w, now, mp.space[instr], mp.kind[instr], mp.nbytes[instr], writes_reg,
                  addr, resident, W, mr.counters)
