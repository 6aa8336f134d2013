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
next row: the warp issues its next memory instruction many visits later.
"""

from __future__ import annotations

from ..._jit import prefetch
from ._jit import helper
from .hierarchy import access
from .layout import NO_ACCESS, P_CTA_THREADS, P_TPC, SPACE_LOCAL, STATE_FIELDS
from .program import NOT_AFFINE, lane_address

WAIT_FIELD = STATE_FIELDS.index("warp_wait")  # (a constant to numba: the state tuple's warp_wait)


@helper
def access_mask(mp, mr, sm, key, now, instr, mask, tbase, n_lanes, writes_reg, cta_slot):
    """A core warp's memory instruction: lanes ``l < n_lanes`` of ``mask`` (thread ``tbase + l``, its
    CTA in slot ``cta_slot`` of the SM), each taking its thread's next /mem entry; stall time is keyed
    by the warp's ``key``. Returns the ready cycle."""
    addr = mr.lane_addr
    resident = mr.lane_resident
    cursor = mr.cursor
    rows = mp.rows
    shift = mp.shift
    in_group = (1 << shift) - 1
    r = -1  # the row read last: its (group, cursor), its two words
    row_g = -1
    row_c = -1
    first = 0
    second = 0
    for lane in range(n_lanes):
        if (mask >> lane) & 1:
            t = tbase + lane
            c = cursor[t]
            cursor[t] = c + 1
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
    if mp.space[instr] == SPACE_LOCAL:  # (only local memory needs the threads' slots on the SM)
        first = cta_slot * mr.params[P_CTA_THREADS] + tbase % mr.params[P_TPC]  # lane 0's
        for lane in range(n_lanes):
            resident[lane] = first + lane
    return access(mr.state, mr.params, sm, key, now, mp.space[instr], mp.kind[instr], mp.nbytes[instr], writes_reg,
                  addr, resident, n_lanes, mr.counters)


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
