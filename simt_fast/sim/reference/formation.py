"""Plain-Python reference engine for the mechanisms whose threads move between warps.

`dwf`, `en-dwf` (``reference/dwf.py``) and `tbc` (``reference/tbc.py``) regroup threads, so
a warp is not a fixed set of lanes of one CTA here but a *slot array*: ``warp.slots[s]`` is the
global thread id in slot ``s`` (``-1`` = hole). Slot ``s`` sits in SIMD lane ``s % simd_width``
and quarter ``s // simd_width`` (Jin 2012's slot model); a thread's home slot is its CTA-local id
modulo ``warp_size``. Everything that is the same for the three mechanisms lives here, stepped one
cycle at a time, written to be read rather than to be fast: CTA dispatch, per-thread register
scoreboard (a thread's registers live in its lane's bank and follow it from warp to warp), SIMD
occupancy, barriers, statistics. The numba kernel ``simt_fast.sim.formation`` must match it
exactly (tests/test_formation_*.py).
"""

from __future__ import annotations

import numpy as np

from ...trace.validate import require_valid
from ..config import SimConfig
from ..stats import Stats
from . import machine
from .dispatch import RoundRobinDispatch
from .memory import TraceMemory
from .tables import ReferenceError_

HOLE = -1


def slot_checksum(slots) -> int:
    """Identity of a slot array in the event log: sum of (thread + 1) * (slot + 1)."""
    return int(sum((int(t) + 1) * (s + 1) for s, t in enumerate(slots) if t >= 0))


class FWarp:
    """One issue unit of the formation mechanisms: a PC and a slot array."""

    __slots__ = ("id", "age", "blk", "off", "slots", "not_before", "state", "bar_t", "cta", "slot")

    def __init__(self, wid, age, blk, slots, not_before, cta=-1, slot=-1):
        self.id = wid  # for events: SM-local creation index * n_sms + SM (reused by the group that keeps the warp)
        self.age = age  # creation order: round-robin and oldest-first tie-breaks
        self.blk = blk
        self.off = 0
        self.slots = list(slots)
        self.not_before = not_before
        self.state = 0  # 0 ready, 1 at a bar.sync, 2 (tbc) waiting at a branch, 3 (tbc) at its RPC
        self.bar_t = 0
        self.cta = cta  # tbc: the owning CTA (dwf warps may mix CTAs)
        self.slot = slot  # tbc: warp slot on the SM

    def threads(self):
        return [t for t in self.slots if t != HOLE]

    def mask(self):
        return sum(1 << s for s, t in enumerate(self.slots) if t != HOLE)


def quarters_of(slots, simd_width, n_q):
    """Quarters (issue sub-groups) holding at least one thread."""
    return sum(1 for q in range(n_q) if any(t != HOLE for t in slots[q * simd_width:(q + 1) * simd_width]))


class FormationCore:
    """Cycle-by-cycle engine; subclasses provide ``pick``, ``finish_block``, ``arrive_barrier``.

    ``finish_block(sm, w, now, nb)``: warp ``w`` issued the last instruction of its block at ``now``
    (or was released from a barrier); the warps its threads go on in issue from cycle ``nb``."""

    def __init__(self, trace, config: SimConfig, events: list | None):
        machine.check(config)  # the reference's own reading of trace and config (reference/machine.py)
        require_valid(trace)
        self.cfg = config
        self.trace = trace
        self.events = events
        W = self.W = config.warp_size
        self.sw = config.simd_width
        self.n_q = machine.quarters(config)
        self.policy = machine.issue_policy(config)
        self.tpc = trace.threads_per_cta
        self.wpc = -(-self.tpc // W)
        self.cta_lim = machine.ctas_per_sm(config, self.tpc)
        self.block_start = [int(x) for x in trace.block_start]
        self.succ = machine.successors(trace)
        self.ipdom = [int(x) for x in trace.ipdom]
        self.has_bar = [bool(x) for x in trace.has_barrier]
        self.op_class, self.dst, self.src, self.lat, self.resume = machine.instructions(trace, config)
        self.paths = [list(map(int, trace.thread_path(t))) for t in range(trace.n_threads)]
        self.exit = trace.n_blocks - 1
        self.stats = Stats(occupancy_hist=np.zeros(W + 1, np.int64), quarter_hist=np.zeros(self.n_q + 1, np.int64))
        self.cursor = [0] * trace.n_threads
        self.reg_ready: dict = {}  # (thread, register) -> cycle its value is ready
        self.cta_live = [0] * trace.n_ctas
        self.cta_arrived = [0] * trace.n_ctas
        self.age_counter = 0
        self.id_counter = [0] * config.n_sms  # per SM: ids do not depend on how SMs interleave
        self.rel_pending: list = []  # CTAs whose barrier an exit completed, released after the issue
        self.check = False  # tests set this: verify the slot-model invariants after every cycle
        self.memory = TraceMemory(trace, config, config.n_sms)

    # ---- helpers ------------------------------------------------------------------------------
    def home_slot(self, t):
        return (t % self.tpc) % self.W

    def new_warp(self, sm, blk, slots, now, cta=-1, slot=-1):
        w = FWarp(self.id_counter[sm] * self.cfg.n_sms + sm, self.age_counter, blk, slots, now, cta, slot)
        self.id_counter[sm] += 1
        self.age_counter += 1
        return w

    def step_threads(self, w):
        """Every thread of ``w`` finished block ``w.blk``: advance it; returns {thread: next block}."""
        b = w.blk
        nxt = {}
        for t in w.threads():
            self.cursor[t] += 1
            n = self.paths[t][self.cursor[t]]
            if n not in self.succ[b]:
                raise ReferenceError_(f"thread {t} steps from block {b} to {n}, not a CFG edge")
            nxt[t] = n
        return nxt

    def exit_thread(self, t):
        cta = t // self.tpc
        self.cta_live[cta] -= 1
        # the exit may complete a bar.sync the rest of the CTA waits at
        if 0 < self.cta_arrived[cta] == self.cta_live[cta] and cta not in self.rel_pending:
            self.rel_pending.append(cta)

    def drain(self, sm, now):
        while self.rel_pending:
            self.release(sm, self.rel_pending.pop(0), now)

    def issue_width(self, w):
        """SIMD cycles of one warp instruction (Jin 2012 §4.3 under hws: active quarters only)."""
        if self.cfg.hws:
            return quarters_of(w.slots, self.sw, self.n_q)
        return self.n_q

    def ready_time(self, w):
        instr = self.block_start[w.blk] + w.off
        t = w.not_before
        for th in w.threads():
            for r in self.src[instr]:
                t = max(t, self.reg_ready.get((th, r), 0))
        return t

    # ---- one warp instruction -----------------------------------------------------------------
    def issue(self, sm, w, now):
        s = self.stats
        threads = w.threads()
        active = len(threads)
        width = self.issue_width(w)
        s.warp_insts += 1
        s.thread_insts += active
        s.occupancy_hist[active] += 1
        s.quarter_hist[quarters_of(w.slots, self.sw, self.n_q)] += 1
        if self.events is not None:
            # the slot array is reported by its checksum, as the numba kernel reports it
            self.events.append(dict(kind="issue", cycle=now, warp=w.id, pc=(w.blk, w.off), mask=w.mask(),
                                    checksum=slot_checksum(w.slots)))
        instr = self.block_start[w.blk] + w.off
        latency = self.lat[instr]
        if self.memory.is_access(instr):
            # the lanes are the slots: whatever threads this (regrouped) warp holds
            lanes = [t if t != HOLE else None for t in w.slots]
            latency = self.memory.access(sm, w.id, now, instr, lanes, self.dst[instr] >= 0) - now
        self.last_latency = latency
        if self.dst[instr] >= 0:
            for t in threads:
                self.reg_ready[(t, self.dst[instr])] = now + latency
        s.cycles = max(s.cycles, now + max(latency, width))
        nb = now + self.resume[instr]  # its threads issue again from cycle nb (after a branch: lat_branch)
        w.not_before = nb
        if w.off + 1 < self.block_start[w.blk + 1] - self.block_start[w.blk]:
            w.off += 1
            return width
        if self.has_bar[w.blk]:
            self.arrive_barrier(sm, w, now)
        else:
            self.finish_block(sm, w, now, nb)
        self.drain(sm, now)
        return width

    def release(self, sm, cta, now):
        """bar.sync: once every live thread of the CTA has arrived, its waiting warps move on."""
        while self.cta_arrived[cta] > 0 and self.cta_arrived[cta] == self.cta_live[cta]:
            self.cta_arrived[cta] = 0
            for w in sorted(self.barrier_waiters(sm, cta), key=lambda x: x.age):
                w.state = 0
                self.stats.barrier_wait_cycles += now - w.bar_t
                w.not_before = now + 1
                self.finish_block(sm, w, now, now + 1)

    # ---- the cycle loop -----------------------------------------------------------------------
    def run(self) -> Stats:
        cfg = self.cfg
        n_sms, n_sched = cfg.n_sms, cfg.n_schedulers
        n_ctas = self.trace.n_ctas
        self.setup(n_sms)
        self.sm_ctas = [[None] * self.cta_lim for _ in range(n_sms)]
        simd_free = [[0] * n_sched for _ in range(n_sms)]
        ctas = RoundRobinDispatch(n_sms, n_ctas)
        for sm, c, cta in ctas.hand_out([(sm, c) for sm in range(n_sms) for c in range(self.cta_lim)]):
            self.dispatch(sm, c, cta, 0)
            self.sm_ctas[sm][c] = cta
        done = 0
        now = 0
        last_progress = 0
        while done < n_ctas:
            if now > cfg.max_cycles:
                raise ReferenceError_(f"mechanism {cfg.mechanism} exceeded max_cycles")
            if now - last_progress > cfg.no_progress_cycles:
                raise ReferenceError_(f"mechanism {cfg.mechanism} made no progress")
            pending = False
            issued = []  # (sm, scheduler, latency) of this cycle's issues, for hws_sync_sms
            freed = []  # CTA slots freed in this cycle: they get the waiting CTAs at its end
            for sm in range(n_sms):
                if all(c is None for c in self.sm_ctas[sm]):
                    continue
                issued_sm = False
                for k in range(n_sched):
                    if simd_free[sm][k] > now:
                        pending = True
                        continue
                    w = self.pick(sm, k, now)
                    if w is None:
                        continue
                    width = self.issue(sm, w, now)
                    issued_sm = True
                    simd_free[sm][k] = now + width
                    issued.append((sm, k, self.last_latency, width))
                for c in range(self.cta_lim):
                    cta = self.sm_ctas[sm][c]
                    if cta is not None and self.cta_live[cta] == 0:
                        self.retire(sm, c, cta)
                        self.sm_ctas[sm][c] = None
                        done += 1
                        last_progress = now
                        freed.append((sm, c))
                if issued_sm:
                    last_progress = now
                    pending = True
                elif all(simd_free[sm][k] <= now for k in range(n_sched)):
                    self.stats.idle_cycles += 1  # no SIMD unit issues or executes this cycle
                if self.any_waiting_on_time(sm, now):
                    pending = True
            if cfg.hws_sync_sms and issued:
                # the thesis simulator's step 3 of §4.2: all warps issued in this cycle, on every SM,
                # take the largest warp size among them
                widest = max(x[3] for x in issued)
                for sm, k, latency, _ in issued:
                    simd_free[sm][k] = now + widest
                    self.stats.cycles = max(self.stats.cycles, now + max(latency, widest))
            for sm, c, cta in ctas.hand_out(freed):
                self.dispatch(sm, c, cta, now + 1)
                self.sm_ctas[sm][c] = cta
                pending = True
            if self.check:
                self.check_invariants()
            if done < n_ctas and not pending:
                raise ReferenceError_(f"mechanism {cfg.mechanism} deadlocked at cycle {now}")
            now += 1
        for name, value in self.memory.stats().items():
            setattr(self.stats, name, value)
        return self.stats.finalize(self.W)

    def check_invariants(self):
        """No thread in two warps; every thread sits in a slot of its home lane (never another
        bank); every warp holds a thread; under dwf every live resident thread is in some warp."""
        seen = set()
        for sm in range(self.cfg.n_sms):
            for w in self.sm_warps(sm):
                assert w.threads(), f"warp {w.id} is empty"
                for s, t in enumerate(w.slots):
                    if t == HOLE:
                        continue
                    assert t not in seen, f"thread {t} is in two warps"
                    seen.add(t)
                    assert s % self.sw == self.home_slot(t) % self.sw, f"thread {t} left its lane (slot {s})"
                    assert self.paths[t][self.cursor[t]] != self.exit, f"exited thread {t} is still in a warp"
        if self.cfg.mechanism != "tbc":
            for ctas in self.sm_ctas:
                for cta in ctas:
                    if cta is None:
                        continue
                    for t in range(cta * self.tpc, (cta + 1) * self.tpc):
                        if self.paths[t][self.cursor[t]] != self.exit:
                            assert t in seen, f"live thread {t} is in no warp"

    def any_waiting_on_time(self, sm, now):
        """Could some warp of ``sm`` still issue later (vs. all blocked forever: deadlock)?"""
        return any(w.state == 0 for w in self.sm_warps(sm))
