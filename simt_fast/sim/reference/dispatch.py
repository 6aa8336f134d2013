"""Round-robin CTA dispatch, the readable way (the kernels' twin is ``simt_fast.sim.visits.hand_out``).

GPGPU-Sim's block issue: whenever SMs have free CTA slots, the waiting CTAs go one per SM in turn,
each turn starting after the SM that got the last CTA. The references hand out the slots freed in a
cycle at its end (the CTAs start the next cycle), and every slot at launch.
"""

from __future__ import annotations


class RoundRobinDispatch:
    """The queue of CTAs not yet on an SM and the SM that got the last one."""

    def __init__(self, n_sms: int, n_ctas: int):
        self.n_sms = n_sms
        self.n_ctas = n_ctas
        self.next_cta = 0
        self.last_sm = n_sms - 1  # so that the first CTA goes to SM 0

    def waiting(self) -> bool:
        return self.next_cta < self.n_ctas

    def hand_out(self, free_slots) -> list:
        """``free_slots``: (sm, slot) pairs that have room. Returns (sm, slot, cta) for the slots that
        get a CTA, sorted by SM and slot (each SM fills its free slots lowest first)."""
        free = {}
        for sm, slot in sorted(free_slots):
            free.setdefault(sm, []).append(slot)
        given = []
        while self.waiting() and any(free.values()):
            start = self.last_sm
            for i in range(1, self.n_sms + 1):
                sm = (start + i) % self.n_sms
                if free.get(sm) and self.waiting():
                    given.append((sm, free[sm].pop(0), self.next_cta))
                    self.next_cta += 1
                    self.last_sm = sm
        return sorted(given)
