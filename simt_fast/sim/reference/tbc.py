"""Reference `tbc`: thread block compaction (Fung & Aamodt, HPCA 2011).

Rules (docs/formation.md; the numba twin is ``simt_fast.sim.formation``):

* Each CTA has one reconvergence stack whose entries hold a PC, a reconvergence PC (the IPDOM of
  the branch that pushed it; none for the root), the CTA-wide thread mask (uint64 words in the
  numba model) and the warp layout the entry runs with. Only the top entry's warps issue.
* At the end of a block with one successor a warp moves on by itself (a warp reaching the top
  entry's RPC waits there). At the end of a block with several successors (a potentially divergent
  branch) the warp waits until every warp of the top entry has executed the branch (the CTA-wide
  synchronisation TBC pays for compaction). Then, over the whole entry, threads are grouped by
  target (successor order); threads going to the exit leave.
* One group: the entry's warps go on with their layout. Several groups: the entry's PC becomes
  IPDOM(branch) and it keeps its current warp layout (restored at the IPDOM); each group whose
  target is not the IPDOM is pushed (successor order, so the last successor runs first) with its
  threads compacted lane-aware: thread in home slot ``s`` of the k-th warp that has one there goes
  to slot ``s`` of new warp k, so a thread never changes slot (Fung & Aamodt's per-lane priority
  encoders); the entry needs max-over-slots(threads) warps.
* When every warp of the top entry waits at its RPC (or has no thread left) it is popped; the new
  top starts (a pushed sibling, with its compacted warps) or resumes (a reconvergence entry, with
  its saved layout minus exited threads) at its PC. Barriers are per CTA, as for every mechanism.
"""

from __future__ import annotations

from .formation import HOLE, FormationCore


class Entry:
    __slots__ = ("pc", "rpc", "layout")

    def __init__(self, pc, rpc, layout):
        self.pc = pc  # block the entry's warps (re)start at
        self.rpc = rpc  # reconvergence block (-1: none, the root entry)
        self.layout = layout  # list of slot arrays


class TBCCore(FormationCore):
    def setup(self, n_sms):
        ws = self.cta_lim * self.wpc
        self.slots_of = [[None] * ws for _ in range(n_sms)]  # warp slots of each SM
        self.stacks = {}  # cta -> list of Entry (top last)
        self.cta_slot = {}
        self.rr = [[-1] * self.cfg.n_schedulers for _ in range(n_sms)]
        self.last = [[-1] * self.cfg.n_schedulers for _ in range(n_sms)]

    def sm_warps(self, sm):
        return [w for w in self.slots_of[sm] if w is not None]

    def dispatch(self, sm, c, cta, now):
        layout = []
        for i in range(self.wpc):
            slots = [HOLE] * self.W
            for lane in range(min(self.W, self.tpc - i * self.W)):
                t = cta * self.tpc + i * self.W + lane
                self.cursor[t] = 0
                if self.paths[t][0] != self.exit:
                    slots[lane] = t
                    self.cta_live[cta] += 1
            layout.append(slots)
        self.stacks[cta] = [Entry(0, -1, layout)]
        self.cta_slot[cta] = (sm, c)
        self.track(cta)
        self.activate(cta, now)  # a new CTA's warps may issue at once, as under every mechanism

    def retire(self, sm, c, cta):
        del self.stacks[cta]

    def barrier_waiters(self, sm, cta):
        return [w for w in self.cta_warps(cta) if w.state == 1]

    def cta_warps(self, cta):
        sm, c = self.cta_slot[cta]
        return [w for w in self.slots_of[sm][c * self.wpc:(c + 1) * self.wpc] if w is not None]

    def track(self, cta):
        self.stats.max_stack_depth = max(self.stats.max_stack_depth, len(self.stacks[cta]))

    # ---- the CTA stack --------------------------------------------------------------------------
    def activate(self, cta, nb):
        """Start (or resume) the top entry: its layout becomes the CTA's warps (issuing from cycle
        ``nb``); entries with nothing left to run, or already at their RPC, are popped first."""
        sm, c = self.cta_slot[cta]
        stack = self.stacks[cta]
        while stack:
            e = stack[-1]
            layout = [[t if t != HOLE and self.live(t) else HOLE for t in slots] for slots in e.layout]
            layout = [slots for slots in layout if any(t != HOLE for t in slots)]
            if not layout or e.pc == e.rpc:
                stack.pop()  # nothing left to run, or it is already at its reconvergence point
                continue
            for i, slots in enumerate(layout):
                w = self.new_warp(sm, e.pc, slots, nb, cta, c * self.wpc + i)
                self.slots_of[sm][w.slot] = w
            return

    def live(self, t):
        return self.paths[t][self.cursor[t]] != self.exit

    def clear(self, cta):
        sm, c = self.cta_slot[cta]
        for i in range(c * self.wpc, (c + 1) * self.wpc):
            self.slots_of[sm][i] = None

    def finish_block(self, sm, w, now, nb):
        b = w.blk
        nxt = self.step_threads(w)
        for t, n in nxt.items():
            if n == self.exit:
                self.exit_thread(t)
        w.slots = [t if t != HOLE and nxt[t] != self.exit else HOLE for t in w.slots]
        cta = w.cta
        top = self.stacks[cta][-1]
        if len(set(self.succ[b])) > 1:
            w.state = 2  # TBC: wait for the whole entry at a potentially divergent branch
            if not w.threads():
                self.slots_of[sm][w.slot] = None
            self.resolve(cta, nb)
            return
        s = self.succ[b][0]
        if not w.threads():
            self.slots_of[sm][w.slot] = None
        elif s == top.rpc:
            w.blk, w.off, w.state = s, 0, 3
        else:
            w.blk, w.off, w.not_before = s, 0, nb
        self.check_done(cta, nb)

    def check_done(self, cta, nb):
        """Pop the top entry once every warp is at its RPC (or empty); the next one issues from ``nb``."""
        warps = self.cta_warps(cta)
        if all(w.state == 3 or not w.threads() for w in warps):
            self.clear(cta)
            self.stacks[cta].pop()
            self.activate(cta, nb)

    def resolve(self, cta, nb):
        """The last warp of the top entry reached the branch: go on together or push one entry per
        target; either way the entry's warps issue from ``nb`` (the branch resolved for all of them)."""
        warps = self.cta_warps(cta)
        if not all(w.state == 2 or not w.threads() for w in warps):
            return
        top = self.stacks[cta][-1]
        if not warps:  # every thread of the entry exited at this branch
            self.check_done(cta, nb)
            return
        b = warps[0].blk
        threads = [t for w in warps for t in w.threads()]
        groups = []
        for s in dict.fromkeys(self.succ[b]):
            g = [t for t in threads if self.paths[t][self.cursor[t]] == s]
            if g and s != self.exit:
                groups.append((s, g))
        if len(groups) <= 1:
            for w in warps:
                if not w.threads():
                    self.slots_of[w_sm(self, cta)][w.slot] = None
                    continue
                s = groups[0][0]
                if s == top.rpc:
                    w.blk, w.off, w.state = s, 0, 3
                else:
                    w.blk, w.off, w.state, w.not_before = s, 0, 0, nb
            self.check_done(cta, nb)
            return
        r = self.ipdom[b]
        if r == top.rpc:
            # the entry would resume at its own RPC and pop at once: replace it by the new entries
            # (its threads are in the entry below, which resumes at r), so loops do not deepen the stack
            self.stacks[cta].pop()
        else:
            top.pc = r  # the entry now waits at the IPDOM with its current warps (restored there)
            top.layout = [list(w.slots) for w in warps if w.threads()]
        stack = self.stacks[cta]
        for s, g in groups:
            if s == r:
                continue
            if stack and stack[-1].pc == s and stack[-1].rpc == r:
                # the entry below waits to run the same PC to the same RPC (a loop's break path left
                # it there on an earlier iteration): join it instead of stacking one per iteration
                below = [t for slots in stack[-1].layout for t in slots if t != HOLE]
                stack[-1].layout = self.compact(below + g)
            else:
                stack.append(Entry(s, r, self.compact(g)))
        self.track(cta)
        self.clear(cta)
        self.activate(cta, nb)

    def compact(self, threads):
        """Lane-aware compaction: the k-th thread (CTA order) with home slot s goes to warp k, slot s."""
        per_slot = [[] for _ in range(self.W)]
        for t in threads:  # per slot, warp order is thread-id order (compaction keeps it so)
            per_slot[self.home_slot(t)].append(t)
        n = max(len(p) for p in per_slot)
        return [[per_slot[s][k] if k < len(per_slot[s]) else HOLE for s in range(self.W)] for k in range(n)]

    def arrive_barrier(self, sm, w, now):
        w.state = 1
        w.bar_t = now
        self.cta_arrived[w.cta] += len(w.threads())
        self.release(sm, w.cta, now)

    # ---- scheduling (as the core: warp slots bound to schedulers, lrr or gto) --------------------
    def pick(self, sm, k, now):
        n_sched = self.cfg.n_schedulers
        ws = len(self.slots_of[sm])
        mine = [i for i in range(ws) if i % n_sched == k]
        if self.policy == "gto":
            last = self.last[sm][k]
            order = ([last] if last >= 0 else []) + sorted(
                (i for i in mine if i != last and self.slots_of[sm][i] is not None),
                key=lambda i: self.slots_of[sm][i].age)
        else:
            j0 = mine.index(self.rr[sm][k]) + 1 if self.rr[sm][k] >= 0 else 0
            order = [mine[(j0 + j) % len(mine)] for j in range(len(mine))]
        for i in order:
            w = self.slots_of[sm][i]
            if w is None or w.state != 0:
                continue
            if self.ready_time(w) <= now:
                self.rr[sm][k] = i
                self.last[sm][k] = i
                return w
        return None


def w_sm(core, cta):
    return core.cta_slot[cta][0]


def simulate(trace, config, *, events: list | None = None):
    return TBCCore(trace, config, events).run()
