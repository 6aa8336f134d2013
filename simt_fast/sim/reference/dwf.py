"""Reference `dwf` / `en-dwf`: dynamic warp formation (Fung et al., MICRO 2007; Jin 2012, §3.6, §4.4).

The merge of a *male* warp (the incoming group) into a *female* warp (a forming warp of the pool),
both slot lists (``-1`` = hole, slot ``s`` in lane ``s % simd_width``, quarter ``s // simd_width``),
is :func:`merge_count_conflicts`; the numba kernel must agree with it on every input.

Rules (docs/formation.md; the numba twin is ``simt_fast.sim.formation.dwf``):

* Each SM has one warp pool: every warp of its resident CTAs. At the end of each block the issued
  warp dissolves: its threads step along their paths and are grouped by next block (successor
  order); each group (the *male* warp, threads at their current slots) meets the *forming* warps
  at that block's first instruction (warps that have not issued there yet), oldest first.
* DWF: a thread joins the first forming warp whose slot for it is free (a thread never changes
  slot, so never lane: no register-bank conflict). en-DWF: if the whole male fits a forming warp
  under Jin 2012, Appendix B (a conflicting thread moves to another quarter of its lane that is a
  hole in both warps) it merges whole, with those moves; otherwise the DWF rule applies to it.
* Threads left over open a new warp; the first such group keeps the dissolved warp's id and age.
  ``merges`` counts (group, forming warp) pairs that joined; ``lane_conflicts`` counts threads that
  had to open a new warp although a forming warp at their PC existed.
* Under hws the male is squeezed before it meets the pool (Jin 2012, §4.4 step 1) and a warp
  issues for its active quarters only (step 4).
* Scheduling: ``majority`` issues at the PC with the most (non-waiting) threads on the SM, ties to
  the lower PC, round-robin by age among that PC's ready warps; ``lrr`` walks all warps by age.
* A warp ending in bar.sync splits per CTA; when a CTA's barrier releases, its waiting warps
  dissolve into the pool as above. New CTAs start as static warps (home slots) at the entry.
"""

from __future__ import annotations

from .formation import HOLE, FormationCore
from .hws import squeeze


def merge_count_conflicts(male, female, simd_width, enhanced):
    """Merge ``male`` into ``female``; returns ``(merged or None, n_conflicts, n_moved)``.

    A lane conflict is a slot where both warps hold a thread (both would need the same
    register bank at the same offset). DWF (Fung et al. 2007, lane-aware) keeps every male
    thread at its own slot, so any conflict refuses the merge. en-DWF (Appendix B) walks the
    lanes in order and, within a lane, the quarters in order; a conflicting male thread moves
    to the first other quarter of that lane where neither warp has a thread. The merge fails
    only if some conflict finds no such position. ``n_conflicts`` counts conflicting slots,
    ``n_moved`` the male threads relocated (en-DWF only; counted even when the merge fails).
    """
    n_quarters = len(male) // simd_width
    placed = list(male)
    n_conflicts = n_moved = n_unresolved = 0
    for lane in range(simd_width):
        for quarter in range(n_quarters):
            slot = quarter * simd_width + lane
            if female[slot] == HOLE or placed[slot] == HOLE:
                continue
            n_conflicts += 1
            resolved = False
            if enhanced:
                for other in range(n_quarters):
                    free = other * simd_width + lane
                    if other != quarter and female[free] == HOLE and placed[free] == HOLE:
                        placed[free], placed[slot] = placed[slot], HOLE
                        n_moved += 1
                        resolved = True
                        break
            if not resolved:
                n_unresolved += 1
    if n_unresolved:
        return None, n_conflicts, n_moved
    merged = [f if f != HOLE else m for f, m in zip(female, placed)]
    return merged, n_conflicts, n_moved


def merge(male, female, simd_width, enhanced):
    """The merged slots, or None when a lane conflict refuses the merge."""
    return merge_count_conflicts(male, female, simd_width, enhanced)[0]


class DWFCore(FormationCore):
    def setup(self, n_sms):
        # one quarter (simd_width >= warp_size) leaves no other position in a lane: en-DWF is DWF there
        self.enhanced = self.cfg.mechanism == "en-dwf" and self.sw < self.W
        self.pool = [[] for _ in range(n_sms)]  # warps, in creation (age) order
        self.last_age = [-1] * n_sms

    def sm_warps(self, sm):
        return self.pool[sm]

    def dispatch(self, sm, c, cta, now):
        for i in range(self.wpc):
            slots = [HOLE] * self.W
            for lane in range(min(self.W, self.tpc - i * self.W)):
                t = cta * self.tpc + i * self.W + lane
                self.cursor[t] = 0
                if self.paths[t][0] != self.exit:  # a thread whose path is only the exit never runs
                    slots[lane] = t
                    self.cta_live[cta] += 1
            if any(t != HOLE for t in slots):
                self.pool[sm].append(self.new_warp(sm, 0, slots, now))

    def retire(self, sm, c, cta):
        pass  # every thread of the CTA has exited, so no warp holds one

    def barrier_waiters(self, sm, cta):
        return [w for w in self.pool[sm] if w.state == 1 and w.threads()[0] // self.tpc == cta]

    # ---- scheduling ---------------------------------------------------------------------------
    def pick(self, sm, k, now):
        warps = self.pool[sm]
        order = sorted(warps, key=lambda w: w.age)
        if self.policy == "majority":
            count = {}
            for w in warps:
                if w.state == 0:
                    count[(w.blk, w.off)] = count.get((w.blk, w.off), 0) + len(w.threads())
            pcs = sorted(count, key=lambda pc: (-count[pc], pc))
            for pc in pcs:
                ready = [w for w in order if w.state == 0 and (w.blk, w.off) == pc and self.ready_time(w) <= now]
                if ready:
                    after = [w for w in ready if w.age > self.last_age[sm]]
                    w = (after or ready)[0]
                    self.last_age[sm] = w.age
                    return w
            return None
        if self.policy == "gto":
            # greedy: the warp that issued last while it stays ready, else the oldest ready warp
            ready = [w for w in order if w.state == 0 and self.ready_time(w) <= now]
            for w in ready:
                if w.age == self.last_age[sm]:
                    return w
            if ready:
                self.last_age[sm] = ready[0].age
                return ready[0]
            return None
        after = [w for w in order if w.age > self.last_age[sm]]
        before = [w for w in order if w.age <= self.last_age[sm]]
        for w in after + before:
            if w.state == 0 and self.ready_time(w) <= now:
                self.last_age[sm] = w.age
                return w
        return None

    # ---- the warp pool --------------------------------------------------------------------------
    def arrive_barrier(self, sm, w, now):
        """bar.sync keeps its per-CTA meaning: a warp mixing CTAs waits as one warp per CTA."""
        by_cta = {}
        for s, t in enumerate(w.slots):
            if t != HOLE:
                by_cta.setdefault(t // self.tpc, [HOLE] * self.W)[s] = t
        first = True
        for cta in sorted(by_cta):
            if first:
                part = w
                part.slots = by_cta[cta]
                first = False
            else:
                part = self.new_warp(sm, w.blk, by_cta[cta], w.not_before)
                part.off = w.off
                self.pool[sm].append(part)
            part.state = 1
            part.bar_t = now
            self.cta_arrived[cta] += len(part.threads())
        for cta in sorted(by_cta):
            self.release(sm, cta, now)

    def finish_block(self, sm, w, now, nb):
        nxt = self.step_threads(w)
        b = w.blk
        pool = self.pool[sm]
        pool.remove(w)
        keep = w  # the first group that opens a warp keeps this warp's id and age
        slots = list(w.slots)
        for s in dict.fromkeys(self.succ[b]):
            male = [t if t != HOLE and nxt[t] == s else HOLE for t in slots]
            if all(t == HOLE for t in male):
                continue
            if s == self.exit:
                for t in male:
                    if t != HOLE:
                        self.exit_thread(t)
                continue
            if self.cfg.hws and self.cfg.hws_squeeze:
                male = list(squeeze(male, self.sw))  # Jin 2012, §4.4 step 1: squeeze the male
            male = self.place(sm, male, s, nb)
            if male is None:
                continue
            if keep is not None:
                keep.blk, keep.off, keep.slots, keep.not_before = s, 0, male, nb
                pool.append(keep)
                pool.sort(key=lambda x: x.age)
                keep = None
            else:
                pool.append(self.new_warp(sm, s, male, nb))

    def place(self, sm, male, s, nb):
        """Merge the male group into forming warps at (s, 0); returns the threads left, or None. A
        warp the male's threads join issues from cycle ``nb`` at the earliest (theirs)."""
        forming = [f for f in self.pool[sm] if f.blk == s and f.off == 0 and f.state == 0]
        for f in forming:
            merged = merge_count_conflicts(male, f.slots, self.sw, True)[0] if self.enhanced else None
            if merged is not None:
                f.slots = list(merged)
                f.not_before = max(f.not_before, nb)
                self.stats.merges += 1
                return None
            joined = False
            for slot, t in enumerate(male):
                if t != HOLE and f.slots[slot] == HOLE:
                    f.slots[slot] = t
                    male[slot] = HOLE
                    joined = True
            if joined:
                f.not_before = max(f.not_before, nb)
                self.stats.merges += 1
            if all(t == HOLE for t in male):
                return None
        if forming:
            self.stats.lane_conflicts += sum(1 for t in male if t != HOLE)
        return male


def simulate(trace, config, *, events: list | None = None):
    return DWFCore(trace, config, events).run()
