"""The formation kernel's cycle loop (docs/formation.md): issue, block ends, barriers, CTA retirement
and dispatch, per visit, for dwf, en-dwf and tbc.

Why a kernel of its own: the core (`sim.core`) keeps a warp as a fixed set of lanes of one CTA with
a per-warp register scoreboard. Dynamic warp formation and thread block compaction regroup threads,
so here a warp is a slot array (`pool.py`) and the scoreboard is per thread (a thread's registers
live in its lane's bank and follow it). Everything else is the core's machine (`sim.visits`): SIMD
occupancy (``ceil(warp_size / simd_width)`` cycles, or the active quarters under hws), issue
scheduling, per-CTA barriers, CTA dispatch and replacement, event skipping and the same
statistics. The plain-Python models ``simt_fast.sim.reference.dwf`` / ``tbc`` give the same stats
and event logs.

``run`` is the kernel ``simulate`` calls with the state it allocated (`layout.allocate`); it
never allocates, so it and its helpers compile without the numba runtime (`_jit.helper`). The
mechanisms' block-end steps are called from here one after the other, never from each other: numba
compiles a callee's code again into every caller, so the call tree stays shallow (docs/formation.md,
*Compile time*).
"""

from __future__ import annotations

import numpy as np

from ..._jit import cycle_loop, helper, hot_helper
from ..events import EV_ISSUE, emit
from ..memory.issue import access_slots
from ..program import BRANCH, POLICY_GTO, POLICY_MAJORITY
from ..stats import G_BARWAIT, G_CYCLES, G_ERR, G_EXITS, G_IDLE, G_MAX_STACK, G_NREL, G_THREAD_INSTS, \
    G_VKEY, G_WARP_INSTS
from ..visits import ERR_REPLAY, free_every_slot, free_slot, hand_out, idle_since, next_visit, simd_idle, \
    sm_must_replay
from .dwf import dwf_barrier, dwf_finish, pick_dwf
from .layout import (
    AT_BARRIER, EN_DWF, F_AGE, F_BART, F_BLK, F_BOUND, F_CTA, F_EP, F_ID, F_MASK, F_N, F_NB, F_NROW, F_OFF,
    F_QACT, F_RUN, F_STATE, F_USED, HOLE, INF, NSUM, P_RDY, READY, SUM_R_BITS, TBC,
)
from .pool import alloc, new_warp, pool_add, quarters, ready, ready_rows, sum_store, sync_view
from .tbc import CHECK, RESOLVE, pick_tbc, tbc_activate, tbc_check_done, tbc_clear, tbc_finish, tbc_resolve


@hot_helper
def issue(hws, w, now, nb, latency, wf, wsl, W, sw, n_q, g, reg_ready, tpc, block_start, dst_reg, occ_hist, q_hist,
          ev):
    """Issue warp ``w``'s next instruction, whose result is ready ``latency`` cycles from now
    (statistics, events, its destination register); the warp may issue again from cycle ``nb``.
    Returns its SIMD occupancy in cycles. The caller moves the warp on (`pool.ready_rows` inside a
    block, the mechanism's finish at its end)."""
    active = wf[w, F_N]
    q_act = wf[w, F_QACT]
    if q_act < 0:  # (its slots changed since its last issue)
        q_act = quarters(wf[w, F_MASK], W, sw, n_q)
        wf[w, F_QACT] = q_act
    width = q_act if hws else n_q  # Jin 2012 §4.2: only the active quarter-warps go down the pipe
    b = wf[w, F_BLK]
    off = wf[w, F_OFF]
    g[G_WARP_INSTS] += 1
    g[G_THREAD_INSTS] += active
    occ_hist[active] += 1
    q_hist[q_act] += 1
    if ev.shape[0] > 0:
        mask = np.int64(0)
        csum = np.int64(0)
        for s in range(W):
            t = wsl[w, s]
            if t >= 0:
                mask |= np.int64(1) << s
                csum += (t + 1) * (s + 1)
        emit(ev, g, EV_ISSUE, now, wf[w, F_ID], b, off, mask, csum, active, 0, 0, 0)
    instr = block_start[b] + off
    r = dst_reg[instr]
    if r >= 0:
        off = r * tpc
        run = wf[w, F_RUN]
        if run >= 0:
            reg_ready[run + off:run + off + wf[w, F_NROW]] = now + latency
        else:
            for k in range(W, W + wf[w, F_NROW]):  # the row cache (see `ready`)
                reg_ready[wsl[w, k] + off] = now + latency
        c = 2 * W + 2 * (r & (NSUM - 1))  # every thread of the warp: the summary is exact (see NSUM)
        sum_store(wf, wsl, w, c, (wf[w, F_EP] << SUM_R_BITS) | r, now + latency)
    done_t = now + (latency if latency > width else width)
    if done_t > g[G_CYCLES]:
        g[G_CYCLES] = done_t
    wf[w, F_NB] = nb
    return width


@helper
def next_released(tbc, sm, cta, now, wf, pool, pool_n, NW, cta_arr, cta_live, g, releasing):
    """The barrier release of CTA ``cta``: once every live thread of the CTA has arrived (``releasing``
    becomes True), its waiting warps move on, oldest first — one per call, marked ready. Returns
    (warp, releasing); warp -1 when the CTA has none left to release. The caller finishes the warp's
    block (which may exit threads and complete other CTAs' barriers) and asks again."""
    while True:
        if not releasing:
            if cta_arr[cta] > 0 and cta_arr[cta] == cta_live[cta]:
                cta_arr[cta] = 0
                releasing = True
            else:
                return -1, False
        best = -1
        if tbc:  # the CTA's warp slots (few)
            for j in range(NW):
                w = sm * NW + j
                if wf[w, F_USED] and wf[w, F_STATE] == AT_BARRIER and wf[w, F_CTA] == cta:
                    if best < 0 or wf[w, F_AGE] < wf[best, F_AGE]:
                        best = w
        else:  # dwf: waiting warps stay in the pool, whose order is age order: the first is the oldest
            for j in range(pool_n[sm]):  # (not every record of the SM: there are tpc * CTAs of them)
                w = pool[sm, j]
                if wf[w, F_STATE] == AT_BARRIER and wf[w, F_CTA] == cta:
                    best = w
                    break
        if best >= 0:
            wf[best, F_STATE] = READY
            g[G_BARWAIT] += now - wf[best, F_BART]
            wf[best, F_NB] = now + 1
            return best, True
        releasing = False


@helper
def dispatch_cta(mech, sm, c, cta, now, W, wpc, WS, tpc, cta_lim, path_ptr, path, exit_b, wf, wsl, pos, cta_live, cslot,
              reg_ready, sb_used, pool, pool_n, free, free_n, depth, ent_pc, ent_rpc, ent_nw, lay, g, block_start, src_reg, pl):
    """CTA ``cta`` becomes resident in CTA slot ``c`` of ``sm``; its warps start at the entry block."""
    cs = sm * cta_lim + c
    blk = reg_ready.shape[0] // sb_used.shape[0]  # the slot's scoreboard block: n_regs * tpc words
    for lt in range(tpc):
        cslot[cta * tpc + lt] = cs * blk + lt
    if sb_used[cs]:  # a fresh block is zero already (and its pages untouched: see `simulate`)
        reg_ready[cs * blk:(cs + 1) * blk] = 0
    sb_used[cs] = True
    live_total = 0
    if mech == TBC:
        depth[cs] = 1
        ent_pc[cs, 0] = 0
        ent_rpc[cs, 0] = -1
        ent_nw[cs, 0] = wpc
    for i in range(wpc):
        n = 0
        if mech == TBC:
            w = -1
        else:
            w = alloc(wf, free, free_n, sm)
        for s in range(W):
            t = cta * tpc + i * W + s
            slot_t = HOLE
            if i * W + s < tpc:
                pos[t] = path_ptr[t]
                if path[pos[t]] != exit_b:  # a thread whose path is only the exit never runs
                    slot_t = t
                    n += 1
            if mech == TBC:
                lay[cs, 0, i, s] = slot_t
            else:
                wsl[w, s] = slot_t
        live_total += n
        if mech != TBC:
            if n > 0:
                new_warp(wf, wsl, w, g, 0, now, -1)
                wf[w, F_BOUND] = 0  # a dispatched CTA's registers are all ready (its block is cleared)
                wf[w, F_N] = n
                pool_add(wf, pool, pool_n, pl, sm, w, block_start)
                ready(wf, wsl, w, W, reg_ready, tpc, cslot, block_start, src_reg, pl)
            else:
                free_n[sm] += 1  # give the record back
    cta_live[cta] = live_total
    if mech == TBC:
        if 1 > g[G_MAX_STACK]:
            g[G_MAX_STACK] = 1
        tbc_activate(cs, sm * WS + c * wpc, cta, now, wf, wsl, depth, ent_pc, ent_rpc, ent_nw, lay, wpc, W, pos,
                      path, exit_b, g, reg_ready, tpc, cslot, block_start, src_reg, pl)



@cycle_loop
def run(p, prog, m, s, out, mp, mr):
    """Replay every thread's path under dwf / en-dwf / tbc on ``p.n_sms`` SMs; fills the counters
    ``out.g`` (G_* layout), the histograms and, if ``out.ev`` has rows, the event log.

    The visit loop of `sim.core.loop.run`, in the same two orders (`sim.visits`). SM-major keeps one
    SM's warps, pool and scoreboard in cache for thousands of cycles instead of having them evicted
    by the other SMs between two of its issues.

    ``mp``/``mr`` (`sim.memory.program`; both None without the memory model): with the model, a memory
    instruction's lanes are the threads the (regrouped) warp holds, and `memory.access` says when its
    result is ready.
    """
    mech = p.mech
    tbc = mech == TBC
    enhanced = (mech == EN_DWF) & (p.sw < p.W)  # one quarter leaves no other position in a lane: en-DWF is DWF
    majority = p.policy == POLICY_MAJORITY
    gto = p.policy == POLICY_GTO
    W = p.W
    sw = p.sw
    n_q = p.n_q
    n_sms = p.n_sms
    n_sched = p.n_sched
    cta_lim = p.cta_lim
    tpc = p.tpc
    wpc = p.wpc
    WS = p.WS
    NW = p.NW
    n_ctas = p.n_ctas
    max_cycles = p.max_cycles
    no_progress = p.no_progress
    exit_b = p.exit_b
    hws = p.hws
    sync = p.hws_sync
    squeeze = hws and p.hws_squeeze
    sm_major = p.sm_major
    block_start = prog.block_start
    succ_ptr = prog.succ_ptr
    succ_idx = prog.succ_idx
    ipdom = prog.ipdom
    has_bar = prog.has_bar
    op_class = prog.op_class
    dst_reg = prog.dst_reg
    src_reg = prog.src_reg
    lat = prog.lat
    lat_branch = lat[BRANCH]
    path_ptr = prog.path_ptr
    path = prog.path
    simd_free = m.simd_free
    iss_lat = m.iss_lat
    sm_next = m.sm_next
    sm_res = m.sm_res
    sm_lp = m.sm_lp
    stop_t = m.stop_t
    seen = m.seen
    pend = m.pend
    n_freed = m.n_freed
    res_cta = m.res_cta
    cta_live = m.cta_live
    cta_arr = m.cta_arr
    pos = m.pos
    wf = s.wf
    wsl = s.wsl
    pool = s.pool
    pool_n = s.pool_n
    free = s.free
    free_n = s.free_n
    pl = s.pl
    depth = s.depth
    ent_pc = s.ent_pc
    ent_rpc = s.ent_rpc
    ent_nw = s.ent_nw
    lay = s.lay
    sb_used = s.sb_used
    cslot = s.cslot
    reg_ready = s.reg_ready
    rr = s.rr
    last = s.last
    last_age = s.last_age
    smr = s.smr
    dirty = s.dirty
    chk = s.chk
    ctas = s.ctas
    rel = s.rel
    g = out.g
    ev = out.ev
    occ_hist = out.occ_hist
    q_hist = out.q_hist

    # ---- CTA dispatch: round-robin over the SMs (one CTA per SM in turn) until they are full
    assigned = m.assigned
    cta_q = m.cta_q
    free_every_slot(pend, n_freed)
    hand_out(pend, n_freed, assigned, cta_q, n_ctas, stop_t, 0, -1)
    for sm in range(n_sms):
        for c in range(cta_lim):
            if assigned[sm, c] >= 0:
                cta = assigned[sm, c]
                assigned[sm, c] = -1
                dispatch_cta(mech, sm, c, cta, 0, W, wpc, WS, tpc, cta_lim, path_ptr, path, exit_b, wf, wsl, pos,
                             cta_live, cslot, reg_ready, sb_used, pool, pool_n, free, free_n, depth, ent_pc, ent_rpc,
                             ent_nw, lay, g, block_start, src_reg, pl)
                res_cta[sm, c] = cta
                sm_res[sm] += 1
    done = 0
    now = 0
    last_progress = 0
    sm = -1
    while True:
        # ---- the next visit: (sm, now); `resume`: the SM takes the CTAs handed to it (`visits`)
        sm, now, resume, go = next_visit(sm_major, sm, now, done, n_ctas, sync, last_progress, no_progress,
                                         max_cycles, m, g)
        if not go:
            return
        n_pend = 1 if resume else 0  # CTA slots of this SM freed in this visit (a resume: some)
        # the event rows' visit key: cycle, then visits before resumes (CTAs start after the cycle), then SM
        g[G_VKEY] = ((now + 1) * 2 + resume) * (n_sms + 1) + sm + 1

        if not resume:
            g[G_IDLE] += idle_since(simd_free, sm, seen[sm], now)
            seen[sm] = now + 1
            issued_sm = False
            exits = g[G_EXITS]
            for k in range(n_sched):
                if simd_free[sm, k] > now:
                    continue
                if tbc:
                    w = pick_tbc(gto, sm, k, now, wf, WS, n_sched, rr, last, pl)
                else:
                    w = pick_dwf(majority, gto, sm, now, wf, pool, pool_n, last_age, pl)
                if w < 0:
                    continue
                instr = block_start[wf[w, F_BLK]] + wf[w, F_OFF]
                latency = lat[op_class[instr]]
                if mp is not None and mp.space[instr] >= 0:  # (None: numba drops the branch)
                    latency = access_slots(mp, mr, sm, w, wf[w, F_ID], now, instr, wsl, W, dst_reg[instr] >= 0,
                                           res_cta) - now
                # one issue per cycle, and after a branch only once it has resolved (the control hazard)
                nb = now + lat_branch if op_class[instr] == BRANCH else now + 1
                width = issue(hws, w, now, nb, latency, wf, wsl, W, sw, n_q, g, reg_ready, tpc, block_start, dst_reg,
                              occ_hist, q_hist, ev)
                issued_sm = True
                simd_free[sm, k] = now + width
                iss_lat[sm, k] = latency + 1
                b = wf[w, F_BLK]
                off = wf[w, F_OFF]
                if off + 1 < block_start[b + 1] - block_start[b]:
                    wf[w, F_OFF] = off + 1
                    ready_rows(wf, wsl, w, W, reg_ready, block_start, src_reg, pl, tpc)  # same threads
                    continue
                # ---- the block's last instruction. Without a barrier the warp finishes its block
                # (`fw`); a bar.sync makes it wait, and the CTAs whose barrier that completes (`ctas`)
                # release their waiting warps, which finish their blocks, one at a time. Exits may
                # complete further CTAs' barriers (queued in `rel`), released last.
                fw = -1
                n_bar = 0
                if not has_bar[b]:
                    fw = w
                elif tbc:
                    wf[w, F_STATE] = AT_BARRIER
                    wf[w, F_BART] = now
                    sync_view(wf, pl, w, block_start)
                    cta_arr[wf[w, F_CTA]] += wf[w, F_N]
                    ctas[0] = wf[w, F_CTA]
                    n_bar = 1
                else:
                    n_bar = dwf_barrier(sm, w, now, wf, wsl, pool, pool_n, free, free_n, W, tpc, cta_arr, s.orig, ctas,
                                        g, pl, block_start, cslot)
                bi = 0  # next CTA of `ctas`
                cta = -1  # the CTA being released
                releasing = False
                err = 0
                while True:
                    if fw >= 0:
                        if tbc:
                            err = tbc_finish(fw, now, nb, wf, wsl, W, pos, path, succ_ptr, succ_idx, exit_b, tpc,
                                             cta_live, cta_arr, rel, ent_rpc, s.nxt, g, reg_ready, cslot, block_start,
                                             src_reg, pl, depth)
                            if err == RESOLVE:
                                err = tbc_resolve(fw, now, nb, wf, wsl, W, wpc, pos, path, succ_ptr, succ_idx, exit_b,
                                                  ipdom, depth, ent_pc, ent_rpc, ent_nw, lay, s.cnt, g, reg_ready, tpc,
                                                  cslot, block_start, src_reg, pl)
                            if err == CHECK:
                                tbc_check_done(fw, nb, wf, wsl, depth, ent_pc, ent_rpc, ent_nw, lay, wpc, W, pos, path,
                                               exit_b, g, reg_ready, tpc, cslot, block_start, src_reg, pl)
                                err = 0
                        else:
                            err = dwf_finish(enhanced, squeeze, sm, fw, now, nb, wf, wsl, pool, pool_n, free, free_n, W,
                                             sw, pos, path, succ_ptr, succ_idx, exit_b, tpc, cta_live, cta_arr, rel,
                                             s.orig, s.male, s.sq, s.sq_counts, s.sq_order, s.nxt, g, reg_ready, cslot,
                                             block_start, src_reg, pl)
                        if err:
                            return
                    if cta < 0:
                        if bi < n_bar:
                            cta = ctas[bi]
                            bi += 1
                        elif g[G_NREL] > 0:
                            cta = rel[0]
                            for i in range(g[G_NREL] - 1):
                                rel[i] = rel[i + 1]
                            g[G_NREL] -= 1
                        else:
                            break
                    fw, releasing = next_released(tbc, sm, cta, now, wf, pool, pool_n, NW, cta_arr, cta_live, g,
                                                  releasing)
                    nb = now + 1  # a warp released from a barrier goes on from the next cycle
                    if fw < 0:
                        cta = -1
            # a resident CTA finishes when its last thread exits (or at once if none ever runs); its
            # slot waits in `pend` for the next CTA
            for c in range(cta_lim if (g[G_EXITS] != exits or chk[sm]) else 0):
                if c == 0:
                    chk[sm] = False
                cta = res_cta[sm, c]
                if cta >= 0 and cta_live[cta] == 0:
                    if tbc:
                        depth[sm * cta_lim + c] = 0
                        tbc_clear(wf, sm * WS + c * wpc, wpc, pl)
                    res_cta[sm, c] = -1
                    sm_res[sm] -= 1
                    done += 1
                    last_progress = now
                    sm_lp[sm] = now
                    free_slot(pend, n_freed, sm, c)
                    n_pend += 1
            if issued_sm:
                last_progress = now
                sm_lp[sm] = now
                dirty[sm] = True  # (its warps changed: rescan below)
            elif simd_idle(simd_free, sm, now):
                g[G_IDLE] += 1
            if n_pend > 0 and sm_major and cta_q[0] < n_ctas:
                stop_t[sm] = now  # which CTAs it gets depends on the SMs not run this far yet
                continue

        # ---- a resume: the freed slots take the CTAs handed to them (`visits.hand_out`)
        for c in range(cta_lim if resume else 0):
            if assigned[sm, c] >= 0:
                cta = assigned[sm, c]
                assigned[sm, c] = -1
                dispatch_cta(mech, sm, c, cta, now + 1, W, wpc, WS, tpc, cta_lim, path_ptr, path, exit_b,
                             wf, wsl, pos, cta_live, cslot, reg_ready, sb_used, pool, pool_n, free, free_n, depth,
                             ent_pc, ent_rpc, ent_nw, lay, g, block_start, src_reg, pl)
                res_cta[sm, c] = cta
                sm_res[sm] += 1
                dirty[sm] = True
                chk[sm] = True

        # ---- the next cycle this SM can issue: a SIMD unit is free and some warp is ready (only its
        # own issues and new CTAs change its warps, so nothing can happen here before that cycle)
        if dirty[sm]:
            # warps change only when this SM issues or gets a new CTA: rescan only then
            dirty[sm] = False
            min_ready = INF
            rdy = pl[sm, P_RDY]  # the pool view: INF for warps that cannot issue
            if tbc:
                # few warp slots, many waiting (operands, branch, RPC): a branch-free minimum
                # (vectorised) beats stopping early
                for j in range(pool_n[sm]):
                    min_ready = rdy[j] if rdy[j] < min_ready else min_ready
            else:
                # The next issue cycle is max(earliest free SIMD unit, earliest READY, now + 1),
                # so any READY at or below lo = max(earliest free unit, now + 1) gives the same
                # answer: stop at the first one (dwf pools are large and mostly ready). Units only
                # get busier and `now` only grows until the next rescan: the cached bound stays
                # exact.
                fmin = INF
                for k in range(n_sched):
                    fmin = simd_free[sm, k] if simd_free[sm, k] < fmin else fmin
                lo = fmin if fmin > now + 1 else now + 1
                for j in range(pool_n[sm]):
                    if rdy[j] < min_ready:
                        min_ready = rdy[j]
                        if min_ready <= lo:
                            break
            smr[sm] = min_ready
        min_ready = smr[sm]
        nt = INF
        if min_ready < INF:
            for k in range(n_sched):
                t_k = simd_free[sm, k] if simd_free[sm, k] > min_ready else min_ready
                if t_k < nt:
                    nt = t_k
            if nt <= now:
                nt = now + 1
        sm_next[sm] = nt if sm_res[sm] > 0 else INF
        if sm_major and sm_must_replay(sm_res[sm], nt, sm_lp[sm], no_progress, max_cycles):
            g[G_ERR] = ERR_REPLAY
            return
