"""The core's cycle loop (docs/core.md): issue, block ends, CTA retirement and dispatch, per visit.

``run`` is the kernel ``simulate`` calls with the state it allocated; it never allocates, so it and
its helpers compile without the numba runtime (`_jit.helper`).
"""

from __future__ import annotations

import numpy as np
from numba.cpython.unsafe.numbers import trailing_zeros

from ..._jit import cycle_loop, prefetch
from ..squeeze import max_lane_count
from ..events import EV_ISSUE, emit
from ..memory.issue import access_mask, flush_cursors, warp_first_row
from ..mech import MIMD, MP_OER, SPS, DPS, FRONTIER
from ..mech._tables import S_BLK, S_EXP, S_MASK, S_OFF, S_ROW, S_RPCB, S_RPCO, S_STATE, S_T, W_CTA, W_CTASLOT, W_EPOCH, \
    W_GID, W_LIVE, W_MROW, W_NB, W_NLANES, W_STN, W_TBASE, popcount, row_list_remove
from ..program import BRANCH, POLICY_GTO
from ..stats import G_CYCLES, G_EPOCH, G_ERR, G_EXPANDED, G_IDLE, G_THREAD_INSTS, G_VKEY, G_WARP_INSTS
from ..visits import ERR_MAX_CYCLES, ERR_REPLAY, NEVER, free_every_slot, free_slot, hand_out, idle_since, next_visit, \
    simd_idle, sm_must_replay
from .blocks import advance, arrive_at_barrier, blame, dispatch_cta, early_arrival, order_row, release_barrier, \
    schedulable
from .scoreboard import SB_M0, SB_RMAX, SB_RUNION, SB_T0, sb_write, sb_write_lane
from .state import RAN_EPOCH, RAN_MASK, SB_ENTRY

INF = NEVER


@cycle_loop
def run(p, prog, m, s, out, mp, mr):
    """Replay every thread's path on ``p.n_sms`` SMs; fills the counters ``out.g`` (G_* layout),
    the histograms and, if ``out.ev`` has rows, the event log.

    A visit is one SM at one cycle: issue, retire finished CTAs, hand their slots new CTAs, compute
    the SM's next visit. SMs share only the queue of CTAs waiting for a slot, so the visit order is
    free as long as CTAs are handed out in (cycle, SM) order of the slots freed (`sim.visits`):

    - cycle-major (``p.sm_major`` 0): every SM's visits of cycle t before any of cycle t + 1, SMs
      in index order. Needed by ``hws_sync`` (it couples the SMs every cycle) and for the errors,
      whose rules are global (the replay of an SM-major run that ended with ERR_REPLAY).
    - SM-major: one SM runs alone, visit after visit, until it frees a CTA slot while CTAs still
      wait; it stops there. When every SM has stopped (or finished), the one that stopped first
      (lowest cycle, then lowest index) gets the waiting CTAs and runs on: each CTA goes where the
      cycle-major loop sends it, and one SM's warps and scoreboard stay in cache meanwhile. An SM
      that could stall for good, stop for ``no_progress`` cycles or pass ``max_cycles`` ends the
      run with ERR_REPLAY: which error the machine meets first is the cycle-major replay's answer.

    ``hws`` (sps only, PDOM&HWS): a warp instruction occupies the SIMD unit for its active quarters
    after a lane-aware squeeze; ``hws_sync``: every issue of a cycle takes the widest of them.

    ``mp``/``mr`` (`sim.memory.program`; both None without the memory model): with the model, a memory
    instruction's result is ready when `memory.access` says, not after its op class's latency. Its
    state couples the SMs when it has an L2 or a DRAM limit: `simulate` then runs cycle-major.
    """
    mech = p.mech
    W = p.W
    sw = p.sw
    n_sms = p.n_sms
    n_sched = p.n_sched
    cta_lim = p.cta_lim
    tpc = p.tpc
    n_ctas = p.n_ctas
    policy = p.policy
    max_cycles = p.max_cycles
    no_progress = p.no_progress
    exit_b = p.exit_b
    wpc = p.wpc
    WS = p.WS
    n_q = p.n_q
    hws = p.hws
    hws_sync = p.hws_sync
    squeeze = hws and p.hws_squeeze
    sm_major = p.sm_major
    k1 = p.K - 1
    n_slots = n_sms * WS
    qmask = (np.int64(1) << sw) - 1 if sw < 64 else np.int64(-1)
    occ = 1 if mech == MIMD else n_q  # SIMD cycles of one warp instruction: ceil(width / simd_width)
    block_start = prog.block_start
    succ_ptr = prog.succ_ptr
    succ_idx = prog.succ_idx
    ipdom = prog.ipdom
    has_bar = prog.has_bar
    prio = prog.prio
    syncwarp = prog.syncwarp
    op_class = prog.op_class
    dst_reg = prog.dst_reg
    src_reg = prog.src_reg
    dep_next = prog.dep_next
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
    cta_live = m.cta_live
    cta_arr = m.cta_arr
    pos = m.pos
    st = s.st
    rt = s.rt
    winfo = s.winfo
    sb = s.sb
    sbr = s.sbr
    ran = s.ran
    wready = s.wready
    sk_next = s.sk_next
    rr = s.rr
    last = s.last
    order = s.order
    order_n = s.order_n
    sm_retire = s.sm_retire
    nxt = s.nxt
    gblk = s.gblk
    gmask = s.gmask
    cand = s.cand
    g = out.g
    ev = out.ev
    occ_hist = out.occ_hist
    q_hist = out.q_hist
    n_regs = sb.shape[0] // (n_slots * SB_ENTRY)
    rec_words = sbr.shape[0] // (n_slots * n_regs)  # words per scoreboard overflow record
    sb_span = min(n_regs * SB_ENTRY, 64)  # words of a warp's scoreboard entries prefetched (at most 8 lines)
    # ---- CTA dispatch: round-robin over the SMs (one CTA per SM in turn) until they are full --
    assigned = m.assigned
    cta_q = m.cta_q
    free_every_slot(pend, n_freed)
    hand_out(pend, n_freed, assigned, cta_q, n_ctas, stop_t, 0, -1)
    for sm in range(n_sms):
        for c in range(cta_lim):
            if assigned[sm, c] >= 0:
                cta = assigned[sm, c]
                assigned[sm, c] = -1
                dispatch_cta(mech, sm, c, cta, 0, W, wpc, WS, tpc, path_ptr, path, exit_b, st, winfo, sb, pos,
                             cta_live, order, order_n, sm_res, g, ev, rt)
                if mp is not None:
                    for w in range(sm * WS + c * wpc, sm * WS + (c + 1) * wpc):
                        winfo[w, W_MROW] = warp_first_row(mp, winfo[w, W_TBASE], winfo[w, W_NLANES])
                if cta_live[cta] == 0:
                    sm_retire[sm] = 1  # a CTA without live threads retires at the SM's next issue
    for w in range(n_slots):
        if winfo[w, W_CTA] >= 0:
            wready[w] = 0

    done = 0
    now = 0
    last_progress = 0
    sm = -1
    while True:
        # ---- the next visit: (sm, now); `resume`: the SM takes the CTAs handed to it (`visits`)
        sm, now, resume, go = next_visit(sm_major, sm, now, done, n_ctas, hws_sync, last_progress, no_progress,
                                         max_cycles, m, g)
        if not go:
            if g[G_ERR] != 0 and g[G_ERR] != ERR_MAX_CYCLES and g[G_ERR] != ERR_REPLAY:
                blame(st, winfo, g)  # a machine error names the warp that was left waiting
            return
        n_pend = 1 if resume else 0  # CTA slots of this SM freed in this visit (a resume: some)
        # the event rows' visit key: cycle, then visits before resumes (CTAs start after the cycle), then SM
        g[G_VKEY] = ((now + 1) * 2 + resume) * (n_sms + 1) + sm + 1

        if not resume:
            g[G_IDLE] += idle_since(simd_free, sm, seen[sm], now)  # (mimd never sets simd_free)
            seen[sm] = now + 1
            issued_sm = False
            released = False
            nt = INF  # the earliest cycle any scheduler of this SM may issue again
            for k in range(n_sched):
                if mech != MIMD and simd_free[sm, k] > now:
                    # busy: it can issue once the unit frees, and not before its warps can
                    k_next = simd_free[sm, k] if simd_free[sm, k] > sk_next[sm, k] else sk_next[sm, k]
                    if k_next < nt:
                        nt = k_next
                    continue
                if sk_next[sm, k] > now:
                    # none of this scheduler's warps can issue yet (cached by its last walk)
                    if sk_next[sm, k] < nt:
                        nt = sk_next[sm, k]
                    continue
                # warps of this scheduler (slots k, k + n_sched, ...), in policy order
                nk = (WS - k + n_sched - 1) // n_sched
                n_w = order_n[sm * n_sched + k] + 1 if policy == POLICY_GTO else nk
                issued_k = False
                k_nt = INF
                k_width = occ
                for jj in range(n_w):
                    if policy == POLICY_GTO:
                        # greedy: the warp that issued last first, then oldest first
                        if jj == 0:
                            w = last[sm, k]
                            if w < 0:
                                continue
                        else:
                            w = order[sm * n_sched + k, jj - 1]  # (this scheduler's warps: `order_row`)
                            if w == last[sm, k]:
                                continue
                    else:
                        # loose round robin: walk the slots starting after the one that issued last
                        j = rr[sm, k] + 1 + jj
                        if j >= nk:
                            j -= nk
                        w = sm * WS + k + j * n_sched
                    if wready[w] > now:  # (INF for an empty slot)
                        if wready[w] < k_nt:
                            k_nt = wready[w]
                        continue
                    # the warp's scoreboard entries (a few host lines) are read at the end of a chain of
                    # loads (info row, split row, instruction): ask for all of them now, in parallel
                    sb0 = w * n_regs * SB_ENTRY
                    for e in range(sb0, sb0 + sb_span, 8):
                        prefetch(sb, e)
                    prefetch(st, w * W * S_ROW)  # its first split row (a converged warp's only one)
                    stn = winfo[w, W_STN]
                    if mp is not None:
                        if winfo[w, W_MROW] >= 0:
                            prefetch(mp.rows, 2 * winfo[w, W_MROW])  # the address row its threads take next
                        else:
                            prefetch(mr.cursor, winfo[w, W_TBASE])  # its threads' /mem cursors
                    if stn == 1:
                        # one unit: it is schedulable under every mechanism (the common converged case)
                        cand[0] = 0
                        nc = 1
                    elif mech == SPS:
                        cand[0] = stn - 1  # the top of the stack (sps.schedulable, inlined)
                        nc = 1 if stn > 0 else 0
                    elif mech == DPS or mech == FRONTIER:
                        nc = schedulable(mech, st, rt, winfo, w, prio, cand)
                    else:
                        for ci in range(stn):  # every unit (mp.schedulable, inlined)
                            cand[ci] = ci
                        nc = stn
                    ci = 0
                    w_t = INF
                    w_next = 0  # after an issue: a cycle before which this warp cannot issue (0: unknown)
                    while ci < nc:
                        i = cand[ci]
                        ci += 1
                        if st[w, i, S_STATE] != 0:
                            continue
                        b = st[w, i, S_BLK]
                        instr = block_start[b] + st[w, i, S_OFF]
                        mask = st[w, i, S_MASK]
                        # operands ready? no source register may have a pending write for any of its threads
                        t = winfo[w, W_NB]  # (sps, frontier: not while the warp's last branch resolves)
                        for j in range(3):
                            r = src_reg[instr, j]
                            if r < 0:
                                continue
                            e = (w * n_regs + r) * 4
                            if mech == MIMD:
                                # one thread: its latest write is its only pending one (sb_write_lane)
                                if sb[e + SB_RMAX] > now:
                                    lt = sbr[(w * n_regs + r) * rec_words + trailing_zeros(mask)]
                                    if lt > t:
                                        t = lt
                                continue
                            # slots that landed (ready <= now) cannot block, so they need no look
                            if sb[e + SB_T0] > now and sb[e + SB_M0] & mask and sb[e + SB_T0] > t:
                                t = sb[e + SB_T0]
                            if sb[e + SB_RMAX] > now and sb[e + SB_RUNION] & mask:
                                rb = (w * n_regs + r) * rec_words
                                for kk in range(k1):
                                    if sbr[rb + k1 + kk] & mask and sbr[rb + kk] > t:
                                        t = sbr[rb + kk]
                        if st[w, i, S_T] > t:
                            t = st[w, i, S_T]
                        if t > now:
                            if t < w_t:
                                w_t = t
                            if t < k_nt:
                                k_nt = t
                            continue
                        # ---- issue unit i of warp w -------------------------------------------
                        stn_before = winfo[w, W_STN]
                        mask = st[w, i, S_MASK]
                        active = popcount(mask)
                        off = st[w, i, S_OFF]
                        g[G_WARP_INSTS] += 1
                        g[G_THREAD_INSTS] += active
                        occ_hist[active] += 1
                        k_width = occ
                        if squeeze:
                            # PDOM&HWS (Jin 2012 §4.1-4.2): squeezed lane-aware, the warp issues only its
                            # non-empty quarters; a lane with k threads needs k, and the squeeze gets there
                            k_width = max_lane_count(np.uint64(mask), n_q, sw)
                            quarters = k_width
                        else:
                            quarters = 0
                            for q in range(n_q):
                                if (mask >> (q * sw)) & qmask:
                                    quarters += 1
                            if hws:  # hws_squeeze off: the non-empty quarters as they are
                                k_width = quarters
                        q_hist[quarters] += 1
                        if ev.shape[0] > 0:
                            emit(ev, g, EV_ISSUE, now, winfo[w, W_GID], b, off, mask, 0, 0, 0, 0, 0)

                        # expanded_insts: a unit entering a block that other threads of its (still diverged)
                        # warp already ran since the warp was last fully converged, and that none of its own
                        # threads ran in that time (a second copy of the same block instance, not a later loop
                        # iteration), re-executes that block: code expansion, as structurizer copies would.
                        if mech != MIMD:
                            if off == 0:
                                if mask == winfo[w, W_LIVE]:
                                    winfo[w, W_EPOCH] = g[G_EPOCH]  # fully converged: a new epoch starts
                                    g[G_EPOCH] += 1
                                    st[w, i, S_EXP] = 0
                                elif ran[w, b, RAN_EPOCH] == winfo[w, W_EPOCH] and (ran[w, b, RAN_MASK] & ~mask) != 0 \
                                        and (ran[w, b, RAN_MASK] & mask) == 0:
                                    st[w, i, S_EXP] = 1
                                else:
                                    st[w, i, S_EXP] = 0
                                if ran[w, b, RAN_EPOCH] != winfo[w, W_EPOCH]:
                                    ran[w, b, RAN_EPOCH] = winfo[w, W_EPOCH]
                                    ran[w, b, RAN_MASK] = mask
                                else:
                                    ran[w, b, RAN_MASK] |= mask
                            if st[w, i, S_EXP]:
                                g[G_EXPANDED] += 1

                        latency = lat[op_class[instr]]
                        r = dst_reg[instr]
                        if mp is not None and mp.space[instr] >= 0:  # (None: numba drops the branch)
                            ready, wrow = access_mask(mp, mr, sm, winfo[w, W_GID], now, instr, mask, winfo[w, W_TBASE],
                                                      winfo[w, W_NLANES], r >= 0, winfo[w, W_CTASLOT], winfo[w, W_MROW])
                            winfo[w, W_MROW] = wrow
                            latency = ready - now
                        if r >= 0 and mech == MIMD:
                            sb_write_lane(sb, sbr, W, (w * n_regs + r) * SB_ENTRY, (w * n_regs + r) * rec_words,
                                          trailing_zeros(mask), now + latency, now)
                        elif r >= 0:
                            sb_write(sb, sbr, k1, (w * n_regs + r) * SB_ENTRY, (w * n_regs + r) * rec_words, mask,
                                     now + latency, now)
                        done_t = now + (latency if latency > k_width else k_width)
                        iss_lat[sm, k] = latency + 1
                        if done_t > g[G_CYCLES]:
                            g[G_CYCLES] = done_t
                        # a unit issues at most once per cycle, and after a branch only once it has
                        # resolved (the control hazard): its threads go on from cycle nb
                        nb = now + 1
                        if op_class[instr] == BRANCH:
                            nb = now + lat_branch
                            if mech == SPS or mech == FRONTIER:
                                winfo[w, W_NB] = nb  # one PC per warp: its next one is fetched then
                        st[w, i, S_T] = nb

                        size = block_start[b + 1] - block_start[b]
                        err = 0
                        if off + 1 < size:
                            st[w, i, S_OFF] = off + 1
                            if mech == MP_OER and st[w, i, S_RPCB] == b and st[w, i, S_RPCO] == off + 1:
                                err = early_arrival(mech, st, rt, winfo, w, now, nb, g, ev)
                            elif dep_next[instr] and (stn_before == 1 or mech == SPS) and mech != MIMD:
                                # The same unit issues next (the only one, or sps' top of stack). If that
                                # instruction reads the register just written, it waits for this write:
                                # the walk may skip the warp until then instead of checking its operands
                                # (a dependent chain issuing faster than its latency, e.g. 1-quarter warps
                                # under PDOM&HWS: nn walked 3.3 slots per visit, mostly such checks).
                                w_next = now + latency
                        else:
                            # the block's last instruction: a bar.sync waits, anything else moves on
                            cta = winfo[w, W_CTA]
                            if has_bar[b]:
                                arrive_at_barrier(mech, st, winfo, w, i, now, active, cta_arr, prio)
                            else:
                                err = advance(mech, st, rt, winfo, w, i, now, nb, pos, path, succ_ptr, succ_idx,
                                              ipdom, exit_b, prio, cta_live, nxt, gblk, gmask, g, ev, syncwarp)
                            if err == 0 and cta_arr[cta] != 0 and cta_arr[cta] == cta_live[cta]:
                                # every live thread of the CTA has arrived (or exited): its waiting units
                                # move on. They may belong to warps of any scheduler of this SM (from the
                                # next cycle: released units are not-before now + 1), so caches are stale.
                                released = True
                                w0 = (w // WS) * WS + winfo[w, W_CTASLOT] * wpc
                                wready[w0:w0 + wpc] = 0
                                err = release_barrier(mech, cta, w0, wpc, st, rt, winfo, now, pos, path, succ_ptr,
                                                      succ_idx, ipdom, exit_b, prio, cta_live, cta_arr, nxt, gblk,
                                                      gmask, g, ev, syncwarp)
                        if err:
                            return
                        if size == off + 1 and cta_live[winfo[w, W_CTA]] == 0:
                            sm_retire[sm] = 1
                        issued_k = True
                        if mech != MIMD:
                            break
                        # mimd: every ready thread issues; rescan if the table shape changed
                        if winfo[w, W_STN] != stn_before or winfo[w, W_CTA] < 0:
                            if winfo[w, W_CTA] < 0:
                                break
                            nc = schedulable(mech, st, rt, winfo, w, prio, cand)
                            ci = 0
                    wready[w] = w_next if issued_k else w_t
                    if issued_k and mech != MIMD:
                        rr[sm, k] = (w - sm * WS - k) // n_sched
                        last[sm, k] = w
                        break
                sk_next[sm, k] = 0 if issued_k else k_nt
                k_next = k_nt
                if issued_k:
                    issued_sm = True
                    k_next = now + 1
                    if mech != MIMD:
                        simd_free[sm, k] = now + k_width
                        k_next = now + k_width
                if k_next < nt:
                    nt = k_next
            if released:
                for kk in range(n_sched):
                    sk_next[sm, kk] = 0
                nt = now + 1
            # ---- retire finished CTAs; their slots wait in `pend` for the next CTAs
            # (a CTA finishes only through an issue of one of its warps, which flags the SM; so the
            # CTA slots are scanned once per finished CTA, not after every issue)
            scan = issued_sm and sm_retire[sm] != 0
            if scan:
                sm_retire[sm] = 0
            for c in range(cta_lim if scan else 0):
                w0 = sm * WS + c * wpc
                cta = winfo[w0, W_CTA]
                if cta >= 0 and cta_live[cta] == 0:
                    for w in range(w0, w0 + wpc):
                        if mp is not None:
                            flush_cursors(mp, mr, winfo[w, W_TBASE], winfo[w, W_NLANES], winfo[w, W_MROW])
                        winfo[w, W_CTA] = -1
                        wready[w] = INF
                        row_list_remove(order, order_n, order_row(order_n, sm_res, sm, WS, w), w)
                    sm_res[sm] -= 1
                    done += 1
                    last_progress = now
                    sm_lp[sm] = now
                    free_slot(pend, n_freed, sm, c)
                    n_pend += 1
            if issued_sm:
                last_progress = now
                sm_lp[sm] = now
            elif simd_idle(simd_free, sm, now):
                g[G_IDLE] += 1
            if n_pend > 0 and sm_major and cta_q[0] < n_ctas:
                stop_t[sm] = now  # which CTAs it gets depends on the SMs not run this far yet
                sm_next[sm] = nt  # (kept for the resume)
                continue
        else:
            nt = sm_next[sm]

        # ---- a resume: the freed slots take the CTAs handed to them (`visits.hand_out`)
        for c in range(cta_lim if resume else 0):
            if assigned[sm, c] >= 0:
                cta = assigned[sm, c]
                assigned[sm, c] = -1
                w0 = sm * WS + c * wpc
                dispatch_cta(mech, sm, c, cta, now + 1, W, wpc, WS, tpc, path_ptr, path, exit_b, st,
                             winfo, sb, pos, cta_live, order, order_n, sm_res, g, ev, rt)
                if mp is not None:
                    for w in range(w0, w0 + wpc):
                        winfo[w, W_MROW] = warp_first_row(mp, winfo[w, W_TBASE], winfo[w, W_NLANES])
                wready[w0:w0 + wpc] = 0
                sk_next[sm, :] = 0
                if cta_live[cta] == 0:
                    sm_retire[sm] = 1
                nt = now + 1
        sm_next[sm] = nt if sm_res[sm] > 0 else INF
        if sm_major and sm_must_replay(sm_res[sm], nt, sm_lp[sm], no_progress, max_cycles):
            g[G_ERR] = ERR_REPLAY
            return

