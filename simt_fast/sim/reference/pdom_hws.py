"""Reference PDOM&HWS (Jin 2012, §4.1-4.3): the reference core's `sps`, issuing only active quarters.

Before a warp issues, its active threads are squeezed lane-aware (Jin 2012, Appendix A); the warp
then occupies the SIMD unit for its non-empty quarters only. A lane holding k threads needs k
quarters and the squeeze reaches that bound, so the issue width is the most threads any one lane
holds (``squeezed_quarter_count``). The squeeze does not outlive the issue: at the IPDOM the warp
is the converged warp again (Jin 2012, §4.2, "the converged warp always has consecutive thread
IDs"). ``quarter_hist`` records the issued (squeezed) quarters.
"""

from __future__ import annotations

from . import machine
from .core import ReferenceCore
from .hws import squeeze


class PDOMHWSCore(ReferenceCore):
    def __init__(self, trace, config, events):
        machine.check(config)
        super().__init__(trace, config.replace(hws=False, hws_sync_sms=False, hws_squeeze=True), events)
        self.hws_cfg = config
        self.latencies_now: list = []

    def issue(self, sm, warp, u, now):
        sw = self.cfg.simd_width
        slots = [lane if u.mask >> lane & 1 else -1 for lane in range(self.W)]
        squeezed = list(squeeze(slots, sw)) if self.hws_cfg.hws_squeeze else slots
        # Jin 2012, §4.2: one issue cycle per quarter that still holds a thread after the squeeze
        width = sum(1 for q in range(self.n_q) if any(t >= 0 for t in squeezed[q * sw:(q + 1) * sw]))
        unsqueezed = sum(1 for q in range(self.n_q) if u.mask >> (q * sw) & ((1 << sw) - 1))
        self.occ = width
        super().issue(sm, warp, u, now)
        self.stats.quarter_hist[unsqueezed] -= 1
        self.stats.quarter_hist[width] += 1
        self.latencies_now.append(self.last_latency)

    def end_cycle(self, now, simd_free):
        if self.hws_cfg.hws_sync_sms and self.issued_now:
            # the thesis simulator (Jin 2012, §4.2 step 3): every warp issued in this cycle, on any SM,
            # takes the largest warp size among them
            widest = max(simd_free[sm][k] - now for sm, k in self.issued_now)
            for sm, k in self.issued_now:
                simd_free[sm][k] = now + widest
            for latency in self.latencies_now:
                self.stats.cycles = max(self.stats.cycles, now + max(latency, widest))
        self.latencies_now = []
        super().end_cycle(now, simd_free)


def simulate(trace, config, *, events=None):
    return PDOMHWSCore(trace, config, events).run()
