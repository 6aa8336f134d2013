"""Round-robin CTA dispatch (issue 17 item 1): CTAs spread over the SMs as GPGPU-Sim's block issue
spreads them, in the kernels (``visits.hand_out``) and the references (``reference.dispatch``)."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from simt_fast._jit import jit
from simt_fast.sim import simulate
from simt_fast.sim.config import SimConfig
from simt_fast.sim.reference.dispatch import RoundRobinDispatch
from simt_fast.sim.visits import NEVER, hand_out
from simt_fast.trace.synth import synthetic

from hypothesis_budget import examples


@jit
def _hand_out(pend, n_freed, assigned, cta_q, n_ctas, stop_t, t, sm0):  # (helpers have no Python entry)
    return hand_out(pend, n_freed, assigned, cta_q, n_ctas, stop_t, t, sm0)


def kernel_hand_out(free, n_sms, cta_lim, n_ctas, cta_q):
    pend = np.zeros((n_sms, cta_lim), np.bool_)
    for sm, c in free:
        pend[sm, c] = True
    n_freed = pend.sum(axis=1).astype(np.int64)
    assigned = np.full((n_sms, cta_lim), -1, np.int64)
    stop_t = np.full(n_sms, NEVER, np.int64)
    _hand_out(pend, n_freed, assigned, cta_q, n_ctas, stop_t, 0, -1)
    assert not pend.any() and not n_freed.any()  # every freed slot is cleared, filled or not
    return sorted((sm, c, int(assigned[sm, c])) for sm in range(n_sms) for c in range(cta_lim) if assigned[sm, c] >= 0)


def test_launch_spreads_six_ctas_over_six_of_28_sms():
    q = np.array([0, 27], np.int64)
    got = kernel_hand_out([(s, c) for s in range(28) for c in range(8)], 28, 8, 6, q)
    assert got == [(s, 0, s) for s in range(6)]
    assert q.tolist() == [6, 5]


def test_turns_start_after_the_sm_that_got_the_last_cta():
    # SM 1 got the last CTA; SMs 0 (two slots) and 3 have room: 3 first, then 0; the next turn
    # starts after SM 0 and finds only SM 0
    q = np.array([10, 1], np.int64)
    assert kernel_hand_out([(0, 0), (0, 2), (3, 1)], 4, 3, 20, q) == [(0, 0, 11), (0, 2, 12), (3, 1, 10)]
    assert q.tolist() == [13, 0]
    # the CTAs run out: the first in turn get them
    q = np.array([18, 1], np.int64)
    assert kernel_hand_out([(0, 0), (0, 2), (3, 1)], 4, 3, 20, q) == [(0, 0, 19), (3, 1, 18)]


@examples(200)
@given(st.integers(1, 6), st.integers(1, 4), st.integers(0, 30), st.data())
def test_kernel_hand_out_matches_reference(n_sms, cta_lim, n_ctas, data):
    last = data.draw(st.integers(0, n_sms - 1))
    first = data.draw(st.integers(0, n_ctas))
    free = data.draw(st.sets(st.tuples(st.integers(0, n_sms - 1), st.integers(0, cta_lim - 1))))
    ref = RoundRobinDispatch(n_sms, n_ctas)
    ref.next_cta, ref.last_sm = first, last
    expected = ref.hand_out(list(free))
    q = np.array([first, last], np.int64)
    assert kernel_hand_out(free, n_sms, cta_lim, n_ctas, q) == expected
    assert q.tolist() == [ref.next_cta, ref.last_sm]


def test_six_ctas_use_six_sms():
    """6 CTAs on 28 SMs run one per SM: as fast as on 6 SMs and several times faster than on one
    SM that could hold them all (a greedy dispatcher would put all six on SM 0)."""
    trace = synthetic(n_blocks=12, n_threads=6 * 256, seed=3, block=(256, 1, 1))
    assert trace.n_ctas == 6
    cycles = {}
    for n_sms in (1, 6, 28):
        cfg = SimConfig(mechanism="sps", warp_size=32, simd_width=8, n_sms=n_sms, max_ctas_per_sm=8)
        cycles[n_sms] = simulate(trace, cfg).cycles
    assert cycles[28] == cycles[6]
    assert cycles[1] > 3 * cycles[6]
