"""The machine rules both cycle loops share (docs/core.md, *Visit order*): which SM runs next, the
errors, idle cycles, the thesis' all-SM warp-size synchronisation.

A visit is one SM at one cycle. Both kernels' loops choose their next visit here, in one of two
orders that simulate the same machine: SM-major (one SM runs until it frees a CTA slot that a
waiting CTA needs, then the earliest such stop takes the CTAs) or cycle-major (every SM's visit of
cycle t before any of cycle t + 1, SMs in index order).
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from .._jit import helper, hot_helper
from .stats import G_CYCLES, G_ERR, G_ERR_CYCLE

NEVER = np.int64(1) << 62  # no next visit, not stopped, never ready

# the machine's errors (G_ERR)
ERR_DEADLOCK = 1  # nothing can ever issue again (e.g. a barrier some threads can never reach)
ERR_NO_PROGRESS = 2
ERR_MAX_CYCLES = 3
ERR_TABLE_OVERFLOW = 4  # a mechanism's reconvergence state outgrew its table
ERR_BAD_EDGE = 5  # a path step that is not a CFG edge
ERR_REPLAY = 6  # an SM-major run met a case only the cycle-major order decides: `simulate` replays it


@hot_helper
def sm_major_next(sm, sm_res, stop_t, sm_next):
    """The SM-major choice after a visit of ``sm`` (-1: none yet): the same SM while it holds CTAs
    and has not stopped; else the lowest SM not yet run to a stop; else the earliest stop (lowest
    cycle, then lowest SM), which resumes (its freed slots take the waiting CTAs). Returns (SM,
    cycle, resumes); SM -1 when every SM has finished."""
    if sm >= 0 and sm_res[sm] > 0 and stop_t[sm] >= NEVER:
        return sm, sm_next[sm], False
    first_stop = -1
    for s in range(stop_t.shape[0]):
        if stop_t[s] < NEVER:
            if first_stop < 0 or stop_t[s] < stop_t[first_stop]:
                first_stop = s
        elif sm_res[s] > 0:
            return s, sm_next[s], False
    if first_stop < 0:
        return -1, 0, False
    t = stop_t[first_stop]
    stop_t[first_stop] = NEVER
    return first_stop, t, True


@hot_helper
def cycle_major_next(sm_res, sm_next):
    """The cycle-major choice: the SM holding CTAs with the earliest next visit, lowest index first
    (-1: none holds CTAs). A visit moves its SM's next visit past the current cycle, so this walks
    cycle t's visits in SM order before any of cycle t + 1."""
    nxt = -1
    for s in range(sm_res.shape[0]):
        if sm_res[s] > 0 and (nxt < 0 or sm_next[s] < sm_next[nxt]):
            nxt = s
    return nxt


@hot_helper
def next_in_cycle(sm_res, sm_next, sm, now):
    """The next SM after ``sm`` with a visit due at ``now`` (-1: none): what `cycle_major_next` would
    choose within cycle ``now``. Only an SM's own visit moves its next visit, always past the cycle it
    runs in, so the SMs below ``sm`` have none left in this cycle: the search goes on from ``sm``, and
    one cycle's visits cost one walk over the SMs, not one per visit."""
    for s in range(sm + 1, sm_res.shape[0]):
        if sm_res[s] > 0 and sm_next[s] <= now:
            return s
    return -1


@helper
def free_slot(pend, n_freed, sm, c):
    """CTA slot ``c`` of ``sm`` is free: it waits in ``pend`` for the next CTA."""
    pend[sm, c] = True
    n_freed[sm] += 1


@helper
def free_every_slot(pend, n_freed):
    """Every CTA slot is free (the start of a run)."""
    pend[:, :] = True
    n_freed[:] = pend.shape[1]


@helper
def hand_out(pend, n_freed, assigned, cta_q, n_ctas, stop_t, t, sm0):
    """Round-robin CTA dispatch (GPGPU-Sim's block issue): the waiting CTAs go to the freed slots
    (``pend``; ``n_freed[sm]`` of them on ``sm``) one per SM in turn, each round starting after the
    SM that got the last CTA (``cta_q`` = [next CTA, that SM]), until the CTAs or the slots run out;
    ``assigned[sm, c]`` receives the CTA of slot c. Eligible SMs: every SM (``sm0`` < 0, the
    cycle-major end of a cycle), or ``sm0`` and the SMs stopped at cycle ``t`` (the SM-major group
    that resumes at t). The eligible SMs' freed slots are cleared; returns how many CTAs were handed
    out. An SM without freed slots costs one look (the cycle-major loop calls this every cycle: a
    look at every slot of every SM was a tenth of a replicated-CTA run)."""
    n_sms = pend.shape[0]
    cta_lim = pend.shape[1]
    handed = 0
    got = True
    while got and cta_q[0] < n_ctas:
        got = False
        start = cta_q[1]
        for i in range(1, n_sms + 1):
            s = start + i if start + i < n_sms else start + i - n_sms
            if n_freed[s] == 0 or (sm0 >= 0 and s != sm0 and stop_t[s] != t):
                continue
            for c in range(cta_lim):
                if pend[s, c]:
                    pend[s, c] = False
                    n_freed[s] -= 1
                    assigned[s, c] = cta_q[0]
                    cta_q[0] += 1
                    cta_q[1] = s
                    handed += 1
                    got = True
                    break
            if cta_q[0] >= n_ctas:
                break
    for s in range(n_sms):  # CTAs ran out: the other freed slots stay empty
        if n_freed[s] > 0 and (sm0 < 0 or s == sm0 or stop_t[s] == t):
            for c in range(cta_lim):
                pend[s, c] = False
            n_freed[s] = 0
    return handed


@hot_helper
def first_flagged(flags):
    """The lowest SM whose flag is set (-1: none), clearing it."""
    for s in range(flags.shape[0]):
        if flags[s]:
            flags[s] = False
            return s
    return -1


@hot_helper
def next_visit(sm_major, sm, now, done, n_ctas, hws_sync, last_progress, no_progress, max_cycles, m, g):
    """The next visit of either cycle loop, after a visit of ``sm`` at ``now`` (sm -1: none yet):
    (sm, cycle, resume, go). ``resume``: the SM takes the CTAs handed to it (`hand_out`) and does
    nothing else. ``go`` False: the run ends here, finished or with its error in ``g`` (G_ERR:
    ERR_REPLAY when the SM-major order must give way to the cycle-major replay, else the machine's
    error at G_ERR_CYCLE). SM-major: `sm_major_next`; the SMs stopped at the same cycle share the
    waiting CTAs. Cycle-major: the visits of cycle t in SM order, then the resumes of the SMs handed
    CTAs at its end, then (``hws_sync``) the width synchronisation, the error rules and a jump to
    the next cycle at which anything can happen."""
    if sm_major:
        sm, now, resume = sm_major_next(sm, m.sm_res, m.stop_t, m.sm_next)
        if sm < 0:
            if done < n_ctas:
                g[G_ERR] = ERR_REPLAY  # (an SM left with CTAs and no next visit)
            return sm, now, False, False
        if resume:
            hand_out(m.pend, m.n_freed, m.assigned, m.cta_q, n_ctas, m.stop_t, now, sm)
        return sm, now, resume, True
    if m.n_resume[0] == 0:
        nxt_sm = next_in_cycle(m.sm_res, m.sm_next, sm, now)
        if nxt_sm >= 0:
            return nxt_sm, now, False, True
    while True:
        if m.n_resume[0] > 0:
            m.n_resume[0] -= 1
            return first_flagged(m.to_resume), now, True, True
        nxt_sm = cycle_major_next(m.sm_res, m.sm_next)
        if nxt_sm >= 0 and m.sm_next[nxt_sm] <= now:
            return nxt_sm, now, False, True
        # every visit of cycle `now` is done: the slots freed in it get the waiting CTAs
        if hand_out(m.pend, m.n_freed, m.assigned, m.cta_q, n_ctas, m.stop_t, now, -1) > 0:
            for s in range(m.assigned.shape[0]):
                for c in range(m.assigned.shape[1]):
                    if m.assigned[s, c] >= 0 and not m.to_resume[s]:
                        m.to_resume[s] = True
                        m.n_resume[0] += 1
            continue
        if hws_sync:
            sync_widths(m.simd_free, m.iss_lat, now, g)
        if done >= n_ctas:
            return -1, now, False, False
        # event skipping: jump to the next cycle at which anything can happen
        nxt_t = m.sm_next[nxt_sm] if nxt_sm >= 0 else NEVER
        err, err_cycle = cycle_major_error(nxt_t, now, last_progress, no_progress, max_cycles)
        if err:
            g[G_ERR] = err
            g[G_ERR_CYCLE] = err_cycle
            return -1, now, False, False
        return nxt_sm, nxt_t, False, True


@hot_helper
def cycle_major_error(nxt_t, now, last_progress, no_progress, max_cycles):
    """The machine's error when every visit of cycle ``now`` is done and the next is at ``nxt_t``:
    (code, cycle), code 0 when it goes on. Deadlock and no progress are reported at ``now``,
    max_cycles at the cycle past it."""
    if nxt_t >= NEVER:
        return ERR_DEADLOCK, now
    if nxt_t - last_progress > no_progress:
        return ERR_NO_PROGRESS, now
    if nxt_t > max_cycles:
        return ERR_MAX_CYCLES, nxt_t
    return 0, now


@hot_helper
def sm_must_replay(sm_res, nt, last_progress, no_progress, max_cycles):
    """SM-major: after a visit, an SM that holds CTAs and could stall for good, go ``no_progress``
    cycles without progress or pass ``max_cycles`` by its next visit ``nt`` ends the run for the
    cycle-major replay (the SM alone cannot tell what the machine reports: its last progress is no
    later than the machine's, so this catches every no-progress error, and more)."""
    return sm_res > 0 and (nt >= NEVER or nt - last_progress > no_progress or nt > max_cycles)


@hot_helper
def idle_since(simd_free, sm, since, now):
    """Idle SM-cycles from ``since`` (the cycle after the SM's last visit) to ``now`` (excluded):
    nothing could issue there, so each cycle at or after its SIMD units drained was idle (counted at
    the next visit rather than cycle by cycle). An SM-cycle is idle when no SIMD unit of the SM
    issues or still executes a warp (docs/DESIGN.md §8)."""
    busy_until = since
    for k in range(simd_free.shape[1]):
        if simd_free[sm, k] > busy_until:
            busy_until = simd_free[sm, k]
    return now - busy_until if now > busy_until else 0


@hot_helper
def simd_idle(simd_free, sm, now):
    """A visit without an issue is an idle cycle when every SIMD unit of the SM has drained."""
    for k in range(simd_free.shape[1]):
        if simd_free[sm, k] > now:
            return False
    return True


@helper
def sync_widths(simd_free, iss_lat, now, g):
    """hws_sync_sms (the thesis simulator, Jin 2012, §4.2 step 3), at the end of cycle ``now``: every
    warp issued in it, on any SM, takes the largest warp size among them. ``iss_lat[sm, k]`` is
    latency + 1 of scheduler k's issue this cycle (0: none); it is cleared."""
    widest = 0
    for sm in range(iss_lat.shape[0]):
        for k in range(iss_lat.shape[1]):
            if iss_lat[sm, k] > 0 and simd_free[sm, k] - now > widest:
                widest = simd_free[sm, k] - now
    for sm in range(iss_lat.shape[0]):
        for k in range(iss_lat.shape[1]):
            if iss_lat[sm, k] > 0:
                simd_free[sm, k] = now + widest
                done_t = now + (iss_lat[sm, k] - 1 if iss_lat[sm, k] - 1 > widest else widest)
                if done_t > g[G_CYCLES]:
                    g[G_CYCLES] = done_t
                iss_lat[sm, k] = 0


# ------------------------------------------------------------------------------------------------
# the machine's state, the same for both cycle loops (allocated in Python, filled by the kernels)
# ------------------------------------------------------------------------------------------------
Machine = namedtuple("Machine", [
    "simd_free",  # [n_sms, n_sched]: the cycle each SIMD unit is free again
    "iss_lat",  # [n_sms, n_sched]: hws_sync_sms: latency + 1 of this cycle's issue (0: none)
    "sm_next",  # [n_sms]: each SM's next visit (NEVER: none)
    "sm_res",  # [n_sms]: CTAs resident
    "sm_lp",  # [n_sms]: each SM's last progress (issue or CTA completion)
    "stop_t",  # [n_sms]: SM-major: the cycle an SM stopped at (NEVER: not stopped)
    "seen",  # [n_sms]: idle cycles are counted up to here (the cycle after its last visit)
    "pend",  # bool [n_sms, cta_lim]: freed CTA slots waiting for the next CTAs
    "n_freed",  # [n_sms]: how many of each SM's slots are in pend (`free_slot`)
    "assigned",  # [n_sms, cta_lim]: the CTA handed to a freed slot, dispatched at the SM's next visit (-1: none)
    "cta_q",  # [2]: the next CTA to hand out, the SM that got the last one (round-robin dispatch)
    "to_resume",  # bool [n_sms]: cycle-major: SMs handed CTAs at the end of the cycle, to visit for them
    "n_resume",  # [1]: how many of them are left
    "res_cta",  # [n_sms, cta_lim]: the CTA in each slot (-1: none)
    "cta_live",  # [n_ctas]: threads of each CTA not yet exited
    "cta_arr",  # [n_ctas]: threads waiting at the CTA's bar.sync
    "pos",  # [n_threads]: each thread's position in its path
])


def machine_state(p) -> Machine:
    n_sms, n_sched = p.n_sms, p.n_sched
    n_threads = p.n_ctas * p.tpc
    return Machine(
        simd_free=np.zeros((n_sms, n_sched), np.int64), iss_lat=np.zeros((n_sms, n_sched), np.int64),
        sm_next=np.zeros(n_sms, np.int64), sm_res=np.zeros(n_sms, np.int64), sm_lp=np.zeros(n_sms, np.int64),
        stop_t=np.full(n_sms, NEVER, np.int64), seen=np.zeros(n_sms, np.int64),
        pend=np.zeros((n_sms, p.cta_lim), np.bool_), n_freed=np.zeros(n_sms, np.int64), assigned=np.full((n_sms, p.cta_lim), -1, np.int64),
        cta_q=np.array([0, n_sms - 1], np.int64), to_resume=np.zeros(n_sms, np.bool_),
        n_resume=np.zeros(1, np.int64), res_cta=np.full((n_sms, p.cta_lim), -1, np.int64),
        cta_live=np.zeros(p.n_ctas, np.int64), cta_arr=np.zeros(p.n_ctas, np.int64),
        pos=np.zeros(n_threads, np.int64),
    )
