"""The visit order shared by the timing core and the formation kernel (docs/core.md, *Visit order*).

A visit is one SM at one cycle. Both kernels' `_run` loops choose their next visit here, in one of
two orders that simulate the same machine: SM-major (one SM runs until it frees a CTA slot that a
waiting CTA needs, then the earliest such stop takes the CTAs) or cycle-major (every SM's visit of
cycle t before any of cycle t + 1, SMs in index order).
"""

from __future__ import annotations

import numpy as np

from .mech._tables import inline_helper

NEVER = np.int64(1) << 62  # the kernels' INF: no next visit, not stopped

# the machine's errors (both kernels' G_ERR codes)
ERR_DEADLOCK = 1  # nothing can ever issue again (e.g. a barrier some threads can never reach)
ERR_NO_PROGRESS = 2
ERR_MAX_CYCLES = 3


@inline_helper
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


@inline_helper
def cycle_major_next(sm_res, sm_next):
    """The cycle-major choice: the SM holding CTAs with the earliest next visit, lowest index first
    (-1: none holds CTAs). A visit moves its SM's next visit past the current cycle, so this walks
    cycle t's visits in SM order before any of cycle t + 1."""
    nxt = -1
    for s in range(sm_res.shape[0]):
        if sm_res[s] > 0 and (nxt < 0 or sm_next[s] < sm_next[nxt]):
            nxt = s
    return nxt


@inline_helper
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
