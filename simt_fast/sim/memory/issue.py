"""The cycle loops' side of the memory model (docs/memory.md, *In the timing model*): on the issue of a
memory instruction, gather the issuing warp's lanes — each active lane's address for this step of
its thread's path, NO_ACCESS for an inactive lane (a guard-false thread already is NO_ACCESS in the
trace) — and ask :func:`simt_fast.sim.memory.access` when the result is ready.

Two gathers, one per kernel family: the core's warps are a lane mask over consecutive threads
(``tbase + lane``); the formation kernel's warps are slot arrays of whatever threads a regrouping
put together (dwf, tbc), which is where their loads stop coalescing.

A core warp's threads are consecutive, so its gather reads ``start`` once per group of ``stride``
threads (``start[t]`` = the group's first entry + t's index in the group, `memory.program`; stride
is 1 or a power of two), not once per lane. Each gather also asks the host to prefetch every
issuing thread's next entry: a warp issues its next memory instruction many visits later, by when
that entry is in the host's caches rather than in DRAM (with many SMs resident, thousands of warps
each stream their own part of a trace's addresses, and a gather missed on nearly every lane).
"""

from __future__ import annotations

from ..._jit import prefetch
from ._jit import helper
from .hierarchy import access
from .layout import NO_ACCESS, P_CTA_THREADS, P_TPC, SPACE_LOCAL, STATE_FIELDS

WAIT_FIELD = STATE_FIELDS.index("warp_wait")  # (a constant to numba: the state tuple's warp_wait)


@helper
def access_mask(mp, mr, sm, key, now, instr, mask, tbase, n_lanes, writes_reg, cta_slot):
    """A core warp's memory instruction: lanes ``l < n_lanes`` of ``mask`` (thread ``tbase + l``, its
    CTA in slot ``cta_slot`` of the SM), each taking its thread's next /mem entry; stall time is keyed
    by the warp's ``key``. Returns the ready cycle."""
    addr = mr.lane_addr
    resident = mr.lane_resident
    cursor = mr.cursor
    start = mp.start
    stride = mp.stride
    entries = mp.addr
    group = -1
    for lane in range(n_lanes):
        t = tbase + lane
        if (mask >> lane) & 1:
            if group != t - (t & (stride - 1)):
                group = t - (t & (stride - 1))
                first = start[group]
            at = first + (t - group) + cursor[t] * stride
            addr[lane] = entries[at]
            cursor[t] += 1
            prefetch(entries, at + stride)  # the thread's next entry (see the module doc)
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
            at = mp.start[t] + cursor[t] * mp.stride  # (a regrouped warp's threads: one start each)
            addr[s] = mp.addr[at]
            cursor[t] += 1
            prefetch(mp.addr, at + mp.stride)  # the thread's next entry (see the module doc)
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
