"""Plain-Python reference timing core: same machine, same mechanisms, same stats — stepped one
cycle at a time (no event skipping), with objects instead of flat arrays.

It exists to be obviously right and to be compared with the numba kernel (tests/test_sim_*.py):
both must produce identical Stats and identical debug event logs for every mechanism.
"""

from __future__ import annotations

import importlib

import numpy as np

from ..config import SimConfig
from ..mechanisms import BY_NAME
from ..stats import Stats
from . import machine
from .dispatch import RoundRobinDispatch
from .memory import TraceMemory
from .tables import ReferenceError_, Unit, Warp, lanes, popcount

IPDOM_FAMILY = ("sps", "dps", "mp", "mp-oer")


class Scoreboard:
    """Per (warp, register): K slots of [ready cycle, thread mask], masks kept disjoint."""

    def __init__(self, k: int):
        self.k = k
        self.slots: dict = {}

    def ready(self, regs, mask: int) -> int:
        t = 0
        for r in regs:
            for time, m in self.slots.get(r, []):
                if m & mask:
                    t = max(t, time)
        return t

    def write(self, r: int, mask: int, ready: int, now: int) -> None:
        slots = self.slots.setdefault(r, [[0, 0] for _ in range(self.k)])
        for s in slots:
            s[1] &= ~mask  # the newer write supersedes older ones for these threads
        free = next((s for s in slots if s[1] == 0 or s[0] <= now), None)
        if free is not None:
            free[0], free[1] = ready, mask
            return
        latest = slots[0]
        for s in slots:
            if s[0] > latest[0]:
                latest = s
        latest[1] |= mask  # conservative fold when every slot is pending
        latest[0] = max(latest[0], ready)


class ReferenceCore:
    def __init__(self, trace, config: SimConfig, events: list | None, syncwarp=None):
        machine.check(config)  # the reference's own reading of trace and config (reference/machine.py)
        self.cfg = config
        self.name = config.mechanism
        self.policy = machine.issue_policy(config)
        self.mech = importlib.import_module(BY_NAME[self.name].reference)
        self.mp = importlib.import_module(BY_NAME["mp"].reference)
        self.trace = trace
        self.W = config.warp_size
        self.events = events
        self.block_start = [int(x) for x in trace.block_start]
        self.succ = machine.successors(trace)
        self.ipdom = [int(x) for x in trace.ipdom]
        self.has_bar = [bool(x) for x in trace.has_barrier]
        self.prio = machine.rpo_priority(self.succ)
        self.syncwarp = machine.syncwarp_blocks(trace, config, syncwarp)
        self.op_class, self.dst, self.src, self.lat, self.resume = machine.instructions(trace, config)
        # the stack and the thread frontier fetch one PC per warp, so a branch holds up the whole warp
        # until it resolves; the other mechanisms fetch per unit (split, path, thread)
        self.one_pc_per_warp = self.name in ("sps", "frontier")
        self.paths = [list(map(int, trace.thread_path(t))) for t in range(trace.n_threads)]
        self.exit = trace.n_blocks - 1
        self.tpc = trace.threads_per_cta
        self.wpc = -(-self.tpc // self.W)
        self.cta_lim = machine.ctas_per_sm(config, self.tpc)
        self.n_q = machine.quarters(config)
        self.occ = 1 if self.name == "mimd" else self.n_q  # SIMD cycles per warp instruction
        # pending writes tracked per (warp, register): 4, folded when more are in flight; mimd one per lane
        self.K = self.W if self.name == "mimd" else 4
        self.stats = Stats(occupancy_hist=np.zeros(self.W + 1, np.int64),
                           quarter_hist=np.zeros(self.n_q + 1, np.int64))
        self.epoch_counter = 0
        self.age_counter = 0
        self.cursor = [0] * trace.n_threads  # index into each thread's path
        self.cta_live = [0] * trace.n_ctas
        self.cta_arrived = [0] * trace.n_ctas
        self.ran: dict = {}  # (warp slot, block) -> (epoch, mask) for expanded_insts
        self.scoreboards: dict = {}
        self.issued_now: list = []  # (sm, scheduler) of this cycle's issues, for end_cycle
        self.memory = TraceMemory(trace, config, config.n_sms)

    # ---- events -------------------------------------------------------------------------------
    def emit_tables(self, now, warp):
        if self.events is None:
            return
        st = [dict(pc=u.pc, mask=u.mask, rpc=u.rpc if u.rpc is not None else (-1, -1), parent=u.parent,
                   waiting=u.waiting or u.sync_wait) for u in warp.st]
        rt = [dict(id=e.id, pc=e.pc, rpc=e.rpc if e.rpc is not None else (-1, -1), rmask=e.rmask,
                   pending=e.pending, parent=e.parent) for e in warp.rt]
        self.events.append(dict(kind="tables", cycle=now, warp=warp.gid, st=st, rt=rt))

    # ---- CTA dispatch -------------------------------------------------------------------------
    def dispatch(self, sm, c, cta, now):
        for i in range(self.wpc):
            nl = min(self.W, self.tpc - i * self.W)
            tbase = cta * self.tpc + i * self.W
            live = 0
            for lane in range(nl):
                self.cursor[tbase + lane] = 0
                if self.paths[tbase + lane][0] != self.exit:
                    live |= 1 << lane
            slot = c * self.wpc + i
            warp = Warp(cta=cta, gid=cta * self.wpc + i, tbase=tbase, nlanes=nl, live=live, epoch=self.epoch_counter,
                        age=self.age_counter, slot=slot, cta_slot=c)
            self.epoch_counter += 1
            self.age_counter += 1
            if self.name == "mimd":
                warp.st = [Unit(0, 0, 1 << lane, not_before=now) for lane in lanes(live, nl)]
            elif live:
                warp.st = [Unit(0, 0, live, not_before=now)]
            self.sm_warps[sm][slot] = warp
            self.sm_order[sm].append(warp)
            self.scoreboards[(sm, slot)] = Scoreboard(self.K)
            self.cta_live[cta] += popcount(live)
            self.emit_tables(now, warp)
        self.sm_ctas[sm][c] = cta

    # ---- one warp-split instruction -----------------------------------------------------------
    def issue(self, sm, warp, u, now):
        b, off, mask = u.blk, u.off, u.mask
        instr = self.block_start[b] + off
        active = popcount(mask)
        s = self.stats
        s.warp_insts += 1
        s.thread_insts += active
        s.occupancy_hist[active] += 1
        sw = self.cfg.simd_width
        s.quarter_hist[sum(1 for q in range(self.n_q) if (mask >> (q * sw)) & ((1 << sw) - 1))] += 1
        if self.events is not None:
            self.events.append(dict(kind="issue", cycle=now, warp=warp.gid, pc=(b, off), mask=mask))
        if self.name != "mimd":
            key = (sm, warp.slot, b)
            if off == 0:
                epoch, ran = self.ran.get(key, (-1, 0))
                if mask == warp.live:
                    warp.epoch = self.epoch_counter  # the whole warp together: a new divergence epoch
                    self.epoch_counter += 1
                    u.expanding = False
                else:
                    u.expanding = epoch == warp.epoch and bool(ran & ~mask) and not ran & mask
                if epoch != warp.epoch:
                    self.ran[key] = (warp.epoch, mask)
                else:
                    self.ran[key] = (epoch, ran | mask)
            if u.expanding:
                s.expanded_insts += 1
        latency = self.lat[instr]
        if self.memory.is_access(instr):
            threads = [warp.tbase + lane if mask >> lane & 1 else None for lane in range(warp.nlanes)]
            latency = self.memory.access(sm, warp.gid, now, instr, threads, self.dst[instr] >= 0) - now
        self.last_latency = latency
        if self.dst[instr] >= 0:
            self.scoreboards[(sm, warp.slot)].write(self.dst[instr], mask, now + latency, now)
        s.cycles = max(s.cycles, now + max(latency, self.occ))
        nb = now + self.resume[instr]  # the unit's threads issue again from cycle nb (after a branch: lat_branch)
        u.not_before = nb
        if self.one_pc_per_warp and nb > now + 1:
            warp.not_before = nb
        size = self.block_start[b + 1] - self.block_start[b]
        if off + 1 < size:
            u.off = off + 1
            if self.name == "mp-oer" and u.rpc == (b, off + 1):
                self.mp.settle(warp, nb)
                self.track(warp)
                self.emit_tables(now, warp)
            return
        if self.has_bar[b]:
            u.waiting = True
            u.bar_t = now
            self.cta_arrived[warp.cta] += active
            if self.name == "stackless":
                self.mech.release(warp, self.prio)
        else:
            self.advance(warp, u, now, nb)
        self.release(sm, warp.cta, now)

    def release(self, sm, cta, now):
        while self.cta_arrived[cta] > 0 and self.cta_arrived[cta] == self.cta_live[cta]:
            self.cta_arrived[cta] = 0
            c = self.sm_ctas[sm].index(cta)
            for slot in range(c * self.wpc, (c + 1) * self.wpc):
                warp = self.sm_warps[sm][slot]
                while True:
                    u = next((x for x in warp.st if x.waiting), None)
                    if u is None:
                        break
                    u.waiting = False
                    self.stats.barrier_wait_cycles += now - u.bar_t
                    u.not_before = now + 1
                    self.advance(warp, u, now, now + 1)

    def advance(self, warp, u, now, nb):
        """The unit finished its block at cycle ``now``: each thread steps along its own path; the
        units its threads end up in issue from cycle ``nb`` on."""
        b = u.blk
        nxt = {}
        for lane in lanes(u.mask, warp.nlanes):
            t = warp.tbase + lane
            self.cursor[t] += 1
            nxt[lane] = self.paths[t][self.cursor[t]]
        groups = []
        exited = 0
        seen = 0
        for s in self.succ[b]:
            m = sum(1 << lane for lane, n in nxt.items() if n == s)
            if m == 0 or seen & m:
                continue
            seen |= m
            if s == self.exit:
                exited |= m
            else:
                groups.append((s, m))
        if seen != u.mask:
            lane = next(lane for lane in nxt if not seen >> lane & 1)
            raise ReferenceError_(f"thread {warp.tbase + lane} steps from block {b} to {nxt[lane]}, not a CFG edge")
        if exited:
            warp.live &= ~exited
            self.cta_live[warp.cta] -= popcount(exited)
        i = warp.st.index(u)
        if self.name in ("serial", "frontier", "mimd", "stackless"):
            moved = []
            if not groups:
                del warp.st[i]
            else:
                u.blk, u.off, u.mask, u.not_before = groups[0][0], 0, groups[0][1], nb
                moved.append(u)
                for blk, m in groups[1:]:
                    warp.st.append(Unit(blk, 0, m, not_before=nb))
                    moved.append(warp.st[-1])
            if self.name == "frontier":
                self.mech.merge_same_pc(warp)
            if self.name == "stackless":
                self.mech.arrive(moved, self.syncwarp)
                self.mech.release(warp, self.prio)
        else:
            if len(groups) == 1:
                u.blk, u.off, u.mask, u.not_before = groups[0][0], 0, groups[0][1], nb
            elif not groups:
                del warp.st[i]
            else:
                self.mp.diverge(warp, i, self.ipdom[b], groups, nb, collapse=self.name != "dps")
            if exited:
                self.mp.clear_exited(warp, exited)
            self.mp.settle(warp, nb)
            if self.name == "mp-oer":
                self.stats.early_reconvergences += self.mech.early_reconverge(warp)
        if len(warp.st) > self.W or len(warp.rt) > 2 * self.W + 2:
            raise ReferenceError_("table overflow")
        self.track(warp)
        self.emit_tables(now, warp)

    def end_cycle(self, now, simd_free):
        """Hook after every cycle (PDOM&HWS's hws_sync_sms uses it); here: forget the cycle's issues."""
        self.issued_now.clear()

    def track(self, warp):
        s = self.stats
        stn, rtn = len(warp.st), len(warp.rt)
        if self.name == "sps":
            splits, depth = min(stn, 1), stn + rtn
        elif self.name == "dps":
            splits, depth = len(self.mech.schedulable(warp, self.prio)), rtn + 1
        elif self.name == "frontier":
            splits, depth = min(stn, 1), 0
        else:
            splits, depth = stn, 0
        s.max_splits = max(s.max_splits, splits)
        s.max_stack_depth = max(s.max_stack_depth, depth)
        if self.name in ("mp", "mp-oer"):
            s.max_st = max(s.max_st, stn)
            s.max_rt = max(s.max_rt, rtn)

    # ---- the cycle loop -----------------------------------------------------------------------
    def warps_in_order(self, sm, k, rr, last):
        n_sched = self.cfg.n_schedulers
        ws = self.cta_lim * self.wpc
        if self.policy == "gto":
            # greedy: the warp in the slot that issued last, then the others oldest first
            order = []
            if last[k] >= 0 and self.sm_warps[sm][last[k]] is not None:
                order.append(self.sm_warps[sm][last[k]])
            order += [w for w in self.sm_order[sm] if w.slot != last[k]]
        else:
            order = [self.sm_warps[sm][(rr[k] + 1 + j) % ws] for j in range(ws)]
        return [w for w in order if w is not None and w.slot % n_sched == k]

    def run(self) -> Stats:
        cfg = self.cfg
        n_sms, n_sched = cfg.n_sms, cfg.n_schedulers
        ws = self.cta_lim * self.wpc
        n_ctas = self.trace.n_ctas
        self.sm_warps = [[None] * ws for _ in range(n_sms)]
        self.sm_order = [[] for _ in range(n_sms)]
        self.sm_ctas = [[None] * self.cta_lim for _ in range(n_sms)]
        simd_free = [[0] * n_sched for _ in range(n_sms)]
        rr = [[-1] * n_sched for _ in range(n_sms)]
        last = [[-1] * n_sched for _ in range(n_sms)]
        ctas = RoundRobinDispatch(n_sms, n_ctas)
        for sm, c, cta in ctas.hand_out([(sm, c) for sm in range(n_sms) for c in range(self.cta_lim)]):
            self.dispatch(sm, c, cta, 0)
        done = 0
        now = 0
        last_progress = 0
        mimd = self.name == "mimd"
        while done < n_ctas:
            if now > cfg.max_cycles:
                raise ReferenceError_(f"mechanism {self.name} exceeded max_cycles")
            if now - last_progress > cfg.no_progress_cycles:
                raise ReferenceError_(f"mechanism {self.name} made no progress for {cfg.no_progress_cycles} cycles")
            anything_pending = False
            freed = []  # CTA slots freed in this cycle: they get the waiting CTAs at its end
            for sm in range(n_sms):
                if all(c is None for c in self.sm_ctas[sm]):
                    continue
                issued_sm = False
                for k in range(n_sched):
                    if not mimd and simd_free[sm][k] > now:
                        anything_pending = True
                        continue
                    issued_k = False
                    for warp in self.warps_in_order(sm, k, rr[sm], last[sm]):
                        sb = self.scoreboards[(sm, warp.slot)]
                        tried = set()
                        while True:
                            pick = None
                            for i in self.mech.schedulable(warp, self.prio):
                                u = warp.st[i]
                                if u.waiting or id(u) in tried:
                                    continue
                                tried.add(id(u))
                                t = max(u.not_before, warp.not_before,
                                        sb.ready(self.src[self.block_start[u.blk] + u.off], u.mask))
                                if t > now:
                                    anything_pending = True
                                    continue
                                pick = u
                                break
                            if pick is None:
                                break
                            self.issue(sm, warp, pick, now)
                            issued_k = True
                            if not mimd:
                                break
                        if issued_k and not mimd:
                            rr[sm][k] = warp.slot
                            last[sm][k] = warp.slot
                            break
                    if issued_k:
                        issued_sm = True
                        if not mimd:
                            simd_free[sm][k] = now + self.occ
                            self.issued_now.append((sm, k))
                            anything_pending = True
                # retire finished CTAs
                for c in range(self.cta_lim):
                    cta = self.sm_ctas[sm][c]
                    if cta is not None and self.cta_live[cta] == 0:
                        for slot in range(c * self.wpc, (c + 1) * self.wpc):
                            self.sm_order[sm].remove(self.sm_warps[sm][slot])
                            self.sm_warps[sm][slot] = None
                        self.sm_ctas[sm][c] = None
                        done += 1
                        last_progress = now
                        freed.append((sm, c))
                if issued_sm:
                    last_progress = now
                    anything_pending = True
                elif mimd or all(f <= now for f in simd_free[sm]):
                    self.stats.idle_cycles += 1  # no SIMD unit issues or executes this cycle
            for sm, c, cta in ctas.hand_out(freed):
                self.dispatch(sm, c, cta, now + 1)
                anything_pending = True
            if done < n_ctas and not anything_pending:
                raise ReferenceError_(f"mechanism {self.name} deadlocked at cycle {now}")
            self.end_cycle(now, simd_free)
            now += 1
        for name, value in self.memory.stats().items():
            setattr(self.stats, name, value)
        return self.stats.finalize(self.W)
