"""The per-cycle SM timing core (docs/DESIGN.md §4, docs/core.md).

The core owns everything that is the same under every divergence mechanism: each thread's path
cursor, the masked register scoreboard, SIMD-unit occupancy, issue scheduling (lrr/gto), barriers,
CTA dispatch and replacement, event skipping, the no-progress guard and the statistics. A mechanism
(``simt_fast.sim.mech.<name>``) owns only how the threads of a warp are grouped into *issue units*
(rows of the split table: PC + lane mask) — which units may issue, and what happens to the tables
when a unit reaches the end of a block. The core calls the mechanism's small @jit functions through
an integer mechanism code.

Public entry: :func:`simt_fast.sim.simulate`; this module's ``_simulate`` is the private numba kernel
that takes only flat arrays (STUMPY's pattern).
"""

from __future__ import annotations


import numpy as np

from numba.cpython.unsafe.numbers import trailing_zeros

from .._jit import jit
from .mech._tables import helper, inline_helper
from .mech import DPS, FRONTIER, MIMD, MP, MP_OER, SERIAL, SPS
from .mech import dps as m_dps
from .mech import frontier as m_frontier
from .mech import mp as m_mp
from .mech import mp_oer as m_oer
from .mech import stackless as m_stackless
from .mech import STACKLESS
from .mech import sps as m_sps
from .hws import max_lane_count as _max_lane_count_jit
from .visits import ERR_DEADLOCK, ERR_MAX_CYCLES, ERR_NO_PROGRESS  # noqa: F401  (the error codes, shared)
from .visits import cycle_major_error, cycle_major_next, sm_major_next
from .mech._tables import (
    R_BLK, R_ID, R_OFF, R_PAR, R_PEND, R_RMASK, R_RPCB, R_RPCO, S_BART, S_BLK, S_EXP, S_MASK, S_NF, S_OFF, S_PAR,
    S_ROW, S_RPCB, S_RPCO, S_STATE, S_T, W_AGE, W_CTA, W_CTASLOT, W_EPOCH, W_GID, W_LIVE, W_NEXTID, W_NLANES,
    W_RTN, W_STN, W_TBASE, R_NF, popcount, row_list_remove, st_append, st_remove,
)

# PDOM&HWS's issue width, inlined into the cycle loop (the public `hws.max_lane_count` is an
# ordinary compiled function: called on every sps+hws issue, the call was ~10% of a run on nn)
max_lane_count = inline_helper(_max_lane_count_jit.py_func)

# ---- the stats/state vector ``g`` (int64) shared between the kernel and its wrapper ------------
G_CYCLES = 0
G_WARP_INSTS = 1
G_THREAD_INSTS = 2
G_IDLE = 3
G_MAX_SPLITS = 4
G_MAX_STACK = 5
G_MAX_ST = 6
G_MAX_RT = 7
G_MERGES = 8
G_LANE_CONFLICTS = 9
G_EARLY = 10
G_BARWAIT = 11
G_EXPANDED = 12
G_EPOCH = 13  # next divergence-epoch id
G_ERR = 14  # error code (ERR_*), 0 = fine
G_ERR_CYCLE = 15
G_ERR_WARP = 16
G_ERR_BLK = 17
G_ERR_OFF = 18
G_NEVENTS = 19  # rows written to the event buffer
G_EV_OVERFLOW = 20
G_AGE = 21
G_ERR_NEXT = 22
G_VKEY = 23  # the running visit, (cycle + 1) * (n_sms + 1) + SM + 1 (0: the first dispatch); events carry it
G_N = 24

ERR_TABLE_OVERFLOW = 4
ERR_BAD_EDGE = 5  # a path step that is not a CFG edge
ERR_REPLAY = 6  # SM-major run: some SM may stall, stop or pass max_cycles; `simulate` replays cycle-major

# event rows: [kind, cycle, warp, f0..f7, visit key (G_VKEY: puts SM-major runs' rows in cycle-major order)]
EV_TABLES = 0  # f0 = ST rows, f1 = RT rows (the rows follow)
EV_ST = 1  # f0 blk, f1 off, f2 mask, f3 rpc blk, f4 rpc off, f5 parent RT id, f6 state
EV_RT = 2  # f0 id, f1 blk, f2 off, f3 rpc blk, f4 rpc off, f5 rmask, f6 pending, f7 parent
EV_ISSUE = 3  # f0 blk, f1 off, f2 mask
EV_WIDTH = 12

INF = np.int64(1) << 62
W_ROW = 16  # allocated words per warp-info row (its fields fit the first cache line)
RAN_EPOCH = 0
RAN_MASK = 1

POLICY_LRR = 0
POLICY_GTO = 1



# ------------------------------------------------------------------------------------------------
# scoreboard: per (warp, register) K slots of (ready cycle, thread mask). A pending write carries
# the writing unit's mask, so splits of one warp with disjoint masks never block each other
# (the multi-path paper's concern). Masks in a register's slots are kept disjoint.
#
# Layout (for cache footprint: kernels have hundreds of virtual registers, and every issue writes
# one): slot 0 lives in a compact 4-word entry ``sb[e:e+4]``, e = (w * n_regs + r) * 4, with the
# latest ready cycle written to the overflow record and the union of its masks; slots 1..K-1 live
# in the overflow record ``sbr[rb:rb + 2(K-1)]`` (K-1 ready cycles, then K-1 masks), which is read
# only while it may hold a pending write of one of the reading unit's threads (so the other splits'
# writes, the multi-path case, cost no look at it). With at most one write in flight per register (the
# common case) an issue touches half a cache line. Slot order and the rules are the plain K-slot
# array's: a write takes the first free slot (empty mask or landed), else folds into the first
# slot with the latest ready cycle.
# ------------------------------------------------------------------------------------------------
SB_T0 = 0  # slot 0: ready cycle
SB_M0 = 1  # slot 0: thread mask
SB_RMAX = 2  # latest ready cycle written to the overflow record (<= now: it holds nothing pending)
SB_RUNION = 3  # union of the overflow slots' masks (a superset): a unit outside it skips the record


@inline_helper
def sb_write(sb, sbr, k1, e, rb, mask, ready, now):
    """Record a pending write of ``mask``'s threads, ready at ``ready`` (entry ``e``, record ``rb``;
    ``k1`` = K - 1 overflow slots)."""
    rec_live = sb[e + SB_RMAX] > now
    sb[e + SB_M0] &= ~mask  # this write supersedes older ones for these threads
    if rec_live:
        for j in range(k1):
            sbr[rb + k1 + j] &= ~mask
        sb[e + SB_RUNION] &= ~mask
    if sb[e + SB_M0] == 0 or sb[e + SB_T0] <= now:
        sb[e + SB_T0] = ready
        sb[e + SB_M0] = mask
        return
    if k1 > 0 and not rec_live:
        # every overflow slot has landed: the write takes slot 1; the others are cleared
        sbr[rb] = ready
        sbr[rb + k1] = mask
        for j in range(1, k1):
            sbr[rb + j] = 0
            sbr[rb + k1 + j] = 0
        sb[e + SB_RMAX] = ready
        sb[e + SB_RUNION] = mask
        return
    free = -1
    latest = -1  # -1: slot 0
    latest_t = sb[e + SB_T0]
    for j in range(k1):
        if free < 0 and (sbr[rb + k1 + j] == 0 or sbr[rb + j] <= now):
            free = j
        if sbr[rb + j] > latest_t:
            latest_t = sbr[rb + j]
            latest = j
    if free >= 0:
        sbr[rb + free] = ready
        sbr[rb + k1 + free] = mask
        sb[e + SB_RUNION] |= mask
        if ready > sb[e + SB_RMAX]:
            sb[e + SB_RMAX] = ready
    elif latest < 0:
        # every slot holds another pending write: fold into the latest one (conservative: these
        # threads may wait a little longer, never less). Impossible when K >= warp_size (mimd).
        sb[e + SB_M0] |= mask
        if ready > sb[e + SB_T0]:
            sb[e + SB_T0] = ready
    else:
        sbr[rb + k1 + latest] |= mask
        sb[e + SB_RUNION] |= mask
        if ready > sbr[rb + latest]:
            sbr[rb + latest] = ready
            if ready > sb[e + SB_RMAX]:
                sb[e + SB_RMAX] = ready


@inline_helper
def sb_write_lane(sb, sbr, W, e, rb, lane, ready, now):
    """mimd's scoreboard write: every unit is one thread and K = warp_size slots never fold, so the
    K-slot rules reduce to "a thread's latest write is its only pending one" — one ready cycle per
    lane in the record (whose stale contents are cleared when it next gets a pending write)."""
    if sb[e + SB_RMAX] <= now:
        for j in range(W):
            sbr[rb + j] = 0
    if ready > sb[e + SB_RMAX]:
        sb[e + SB_RMAX] = ready
    sbr[rb + lane] = ready


@jit
def aligned_empty(n):
    """An uninitialised int64 array of n words whose data starts on a 64-byte cache-line boundary
    (numba aligns arrays to less), so rows of 8 or 16 words each begin a line."""
    buf = np.empty(n + 8, np.int64)
    off = ((64 - (buf.ctypes.data & 63)) & 63) // 8
    return buf[off:off + n]


# ------------------------------------------------------------------------------------------------
# debug event log
# ------------------------------------------------------------------------------------------------
@helper
def emit(ev, g, kind, now, wg, f0, f1, f2, f3, f4, f5, f6, f7):
    n = g[G_NEVENTS]
    if n >= ev.shape[0]:
        g[G_EV_OVERFLOW] = 1
        return
    ev[n, 0] = kind
    ev[n, 1] = now
    ev[n, 2] = wg
    ev[n, 3] = f0
    ev[n, 4] = f1
    ev[n, 5] = f2
    ev[n, 6] = f3
    ev[n, 7] = f4
    ev[n, 8] = f5
    ev[n, 9] = f6
    ev[n, 10] = f7
    ev[n, 11] = g[G_VKEY]
    g[G_NEVENTS] = n + 1


@helper
def emit_tables(ev, g, now, st, rt, winfo, w):
    wg = winfo[w, W_GID]
    emit(ev, g, EV_TABLES, now, wg, winfo[w, W_STN], winfo[w, W_RTN], 0, 0, 0, 0, 0, 0)
    for i in range(winfo[w, W_STN]):
        emit(ev, g, EV_ST, now, wg, st[w, i, S_BLK], st[w, i, S_OFF], st[w, i, S_MASK], st[w, i, S_RPCB],
             st[w, i, S_RPCO], st[w, i, S_PAR], st[w, i, S_STATE], 0)
    for k in range(winfo[w, W_RTN]):
        emit(ev, g, EV_RT, now, wg, rt[w, k, R_ID], rt[w, k, R_BLK], rt[w, k, R_OFF], rt[w, k, R_RPCB],
             rt[w, k, R_RPCO], rt[w, k, R_RMASK], rt[w, k, R_PEND], rt[w, k, R_PAR])


# ------------------------------------------------------------------------------------------------
# mechanism dispatch (the only places the core looks at the mechanism code)
# ------------------------------------------------------------------------------------------------
@inline_helper
def schedulable(mech, st, rt, winfo, w, prio, out):
    if mech == SPS:
        return m_sps.schedulable(st, rt, winfo, w, out)
    if mech == DPS:
        return m_dps.schedulable(st, rt, winfo, w, out)
    if mech == FRONTIER:
        return m_frontier.schedulable(st, rt, winfo, w, prio, out)
    return m_mp.schedulable(st, rt, winfo, w, out)  # serial, mp, mp-oer, mimd: every unit


@inline_helper
def track_tables(mech, st, rt, winfo, w, g):
    """High-water marks of the mechanism's structures (DESIGN §5), after any table change."""
    stn = winfo[w, W_STN]
    rtn = winfo[w, W_RTN]
    if mech == SPS:
        splits = 1 if stn > 0 else 0
        depth = stn + rtn
    elif mech == DPS:
        top = rt[w, rtn - 1, R_ID] if rtn > 0 else -1
        splits = 0
        for i in range(stn):
            if st[w, i, S_PAR] == top:
                splits += 1
        depth = rtn + 1
    elif mech == FRONTIER:
        splits = 1 if stn > 0 else 0
        depth = 0
    else:
        splits = stn
        depth = 0
    if splits > g[G_MAX_SPLITS]:
        g[G_MAX_SPLITS] = splits
    if depth > g[G_MAX_STACK]:
        g[G_MAX_STACK] = depth
    if mech == MP or mech == MP_OER:
        if stn > g[G_MAX_ST]:
            g[G_MAX_ST] = stn
        if rtn > g[G_MAX_RT]:
            g[G_MAX_RT] = rtn


@inline_helper
def advance(mech, st, rt, winfo, w, i, now, pos, path, succ_ptr, succ_idx, ipdom, exit_b, prio,
            cta_live, nxt, gblk, gmask, g, ev, syncwarp):
    """Unit ``i`` of warp ``w`` finished its block: move its threads along their paths.

    Threads are grouped by their next block in the CFG's successor order; threads whose next block
    is the virtual exit are done. Then the mechanism updates its tables. Returns 0 or an ERR_ code.
    """
    b = st[w, i, S_BLK]
    mask = st[w, i, S_MASK]
    tbase = winfo[w, W_TBASE]
    first = -2  # the next block of every thread, if they all agree (the common, non-divergent case)
    m = mask
    while m != 0:
        lane = trailing_zeros(m)
        m &= m - 1
        t = tbase + lane
        pos[t] += 1
        nb = path[pos[t]]
        nxt[lane] = nb
        if first == -2:
            first = nb
        elif nb != first:
            first = -1
    ng = 0
    xmask = 0
    seen = 0
    if first >= 0:
        # one group: no need to sort threads by successor (same result as the loop below)
        for e in range(succ_ptr[b], succ_ptr[b + 1]):
            if succ_idx[e] == first:
                seen = mask
                if first == exit_b:
                    xmask = mask
                else:
                    gblk[0] = first
                    gmask[0] = mask
                    ng = 1
                break
    for e in range(succ_ptr[b] if first < 0 else 0, succ_ptr[b + 1] if first < 0 else 0):
        s = succ_idx[e]
        m = 0
        for lane in range(winfo[w, W_NLANES]):
            if (mask >> lane) & 1 and nxt[lane] == s:
                m |= np.int64(1) << lane
        if m == 0 or (seen & m) != 0:
            continue
        seen |= m
        if s == exit_b:
            xmask |= m
        else:
            gblk[ng] = s
            gmask[ng] = m
            ng += 1
    if seen != mask:
        for lane in range(winfo[w, W_NLANES]):
            if (mask >> lane) & 1 and not (seen >> lane) & 1:
                g[G_ERR] = ERR_BAD_EDGE
                g[G_ERR_WARP] = tbase + lane  # reported as a thread id
                g[G_ERR_BLK] = b
                g[G_ERR_NEXT] = nxt[lane]
                g[G_ERR_CYCLE] = now
                return ERR_BAD_EDGE

    if xmask != 0:
        winfo[w, W_LIVE] &= ~xmask
        cta_live[winfo[w, W_CTA]] -= popcount(xmask)

    if mech == SERIAL or mech == FRONTIER or mech == MIMD or mech == STACKLESS:
        # no reconvergence tables: the unit follows its first group, other groups become new units
        first_new = winfo[w, W_STN]
        if ng == 0:
            st_remove(st, winfo, w, i)
            first_new -= 1
        else:
            st[w, i, S_BLK] = gblk[0]
            st[w, i, S_OFF] = 0
            st[w, i, S_MASK] = gmask[0]
            st[w, i, S_T] = now + 1
            for k in range(1, ng):
                if st_append(st, winfo, w, gblk[k], 0, gmask[k], -1, -1, -1, now + 1) < 0:
                    g[G_ERR] = ERR_TABLE_OVERFLOW
                    return ERR_TABLE_OVERFLOW
        if mech == FRONTIER:
            m_frontier.merge_same_pc(st, winfo, w)
        if mech == STACKLESS:
            # stackless (seed 004 §5.2): units entering a syncwarp block wait there; a syncwarp releases
            # once no unit of the warp can issue
            if ng > 0:
                m_stackless.arrive_row(st, winfo, w, i, syncwarp)
            m_stackless.arrive(st, winfo, w, first_new, syncwarp)
            m_stackless.release(st, winfo, w, prio)
    else:
        if ng == 1:
            st[w, i, S_BLK] = gblk[0]
            st[w, i, S_OFF] = 0
            st[w, i, S_MASK] = gmask[0]
            st[w, i, S_T] = now + 1
        elif ng == 0:
            st_remove(st, winfo, w, i)
        elif m_mp.diverge(st, rt, winfo, w, i, ipdom[b], gblk, gmask, ng, now, mech != DPS) < 0:
            g[G_ERR] = ERR_TABLE_OVERFLOW
            g[G_ERR_CYCLE] = now
            g[G_ERR_WARP] = winfo[w, W_GID]
            g[G_ERR_BLK] = b
            return ERR_TABLE_OVERFLOW
        if xmask != 0:
            m_mp.clear_exited(rt, winfo, w, xmask)
        if m_mp.settle(st, rt, winfo, w, now) < 0:
            g[G_ERR] = ERR_TABLE_OVERFLOW
            return ERR_TABLE_OVERFLOW
        if mech == MP_OER:
            n = m_oer.early_reconverge(st, rt, winfo, w)
            if n < 0:
                g[G_ERR] = ERR_TABLE_OVERFLOW
                return ERR_TABLE_OVERFLOW
            g[G_EARLY] += n
    track_tables(mech, st, rt, winfo, w, g)
    if ev.shape[0] > 0:
        emit_tables(ev, g, now, st, rt, winfo, w)
    return 0


@helper
def release_barrier(mech, cta, now, st, rt, winfo, w0, wpc, pos, path, succ_ptr, succ_idx, ipdom, exit_b,
                    prio, cta_live, cta_arr, nxt, gblk, gmask, g, ev, syncwarp):
    """bar.sync: once every live thread of the CTA has arrived, all waiting units move on."""
    while cta_arr[cta] > 0 and cta_arr[cta] == cta_live[cta]:
        cta_arr[cta] = 0
        for w in range(w0, w0 + wpc):
            while True:
                found = -1
                for i in range(winfo[w, W_STN]):
                    if st[w, i, S_STATE] == 1:
                        found = i
                        break
                if found < 0:
                    break
                st[w, found, S_STATE] = 0
                g[G_BARWAIT] += now - st[w, found, S_BART]
                st[w, found, S_T] = now + 1
                err = advance(mech, st, rt, winfo, w, found, now, pos, path, succ_ptr, succ_idx, ipdom, exit_b,
                              prio, cta_live, nxt, gblk, gmask, g, ev, syncwarp)
                if err:
                    return err
    return 0


@jit
def _simulate(mech, W, sw, n_sms, n_sched, cta_lim, tpc, n_ctas, n_regs, K, policy, max_cycles, no_progress,
              block_start, succ_ptr, succ_idx, ipdom, has_bar, prio, op_class, dst_reg, src_reg, lat,
              path_ptr, path, exit_b, syncwarp, ev, occ_hist, q_hist, g, hws, hws_sync, sm_major):
    """Replay every thread's path on ``n_sms`` SMs; fills ``g`` (G_*) and the histograms.

    ``hws`` (sps only, PDOM&HWS): a warp instruction occupies the SIMD unit for its active quarters
    after a lane-aware squeeze; ``hws_sync``: every issue of a cycle takes the widest of them.
    """
    wpc = (tpc + W - 1) // W
    WS = cta_lim * wpc  # warp slots per SM
    n_slots = n_sms * WS
    n_blocks = block_start.shape[0] - 1
    n_q = (W + sw - 1) // sw
    qmask = (np.int64(1) << sw) - 1 if sw < 64 else np.int64(-1)
    occ = 1 if mech == MIMD else n_q  # SIMD cycles of one warp instruction: ceil(width / simd_width)

    # table rows are written in full when appended and read only below their counts: no zeroing
    st = aligned_empty(n_slots * W * S_ROW).reshape((n_slots, W, S_ROW))
    rt = np.empty((n_slots, 2 * W + 2, R_NF), np.int64)
    winfo = aligned_empty(n_slots * W_ROW).reshape((n_slots, W_ROW))
    winfo[:, :] = 0
    winfo[:, W_CTA] = -1
    # scoreboard (see sb_write): compact entries, and overflow records that are initialised on first
    # use (np.empty: untouched pages cost nothing)
    sb = aligned_empty(n_slots * max(n_regs, 1) * 4)
    sb[:] = 0
    k1 = K - 1
    rec_words = (2 * k1 + 7) // 8 * 8  # one overflow record per cache line
    if mech == MIMD:
        rec_words = (W + 7) // 8 * 8  # one ready cycle per lane (sb_write_lane)
    sbr = aligned_empty(n_slots * max(n_regs, 1) * rec_words)
    if mech == MIMD:
        ran = np.zeros((1, 1, 2), np.int64)
    else:
        # per (warp, block): [epoch in which the block last ran, mask of the threads that ran it then]
        ran = np.zeros((n_slots, n_blocks, 2), np.int64)
        ran[:, :, RAN_EPOCH] = -1
    pos = np.zeros(path_ptr.shape[0] - 1, np.int64)
    cta_live = np.zeros(n_ctas, np.int64)
    cta_arr = np.zeros(n_ctas, np.int64)
    simd_free = np.zeros((n_sms, n_sched), np.int64)
    rr = np.full((n_sms, n_sched), -1, np.int64)
    last = np.full((n_sms, n_sched), -1, np.int64)
    sm_next = np.zeros(n_sms, np.int64)
    sm_seen = np.full(n_sms, -1, np.int64)  # the last cycle each SM was visited (idle accounting)
    sm_retire = np.zeros(n_sms, np.int64)  # 1: a CTA of this SM may have finished (scan its CTA slots)
    sm_res = np.zeros(n_sms, np.int64)
    order = np.zeros((n_sms, WS), np.int64)  # resident warp slots, oldest first (gto)
    order_n = np.zeros(n_sms, np.int64)
    nxt = np.zeros(64, np.int64)
    max_succ = 1
    for b in range(n_blocks):
        if succ_ptr[b + 1] - succ_ptr[b] > max_succ:
            max_succ = succ_ptr[b + 1] - succ_ptr[b]
    gblk = np.zeros(max_succ, np.int64)
    gmask = np.zeros(max_succ, np.int64)
    cand = np.zeros(W, np.int64)
    # per-warp cache of the earliest cycle any of its schedulable units can issue: a warp's units only
    # get ready earlier through its own issues or a barrier release, which reset the cache to 0. INF
    # marks an empty warp slot, so the scheduler's walk reads only this dense array for waiting warps.
    wready = np.full(n_slots, INF, np.int64)
    sk_next = np.zeros((n_sms, n_sched), np.int64)  # per-scheduler cache of the same (min over its warps)
    iss_lat = np.zeros((n_sms, n_sched), np.int64)  # hws_sync: latency + 1 of this cycle's issue, 0 = none
    sm_lp = np.zeros(n_sms, np.int64)  # each SM's last issue or CTA retirement
    stop_t = np.full(n_sms, INF, np.int64)  # SM-major: the cycle an SM stopped at (INF: not stopped)
    pend = np.zeros((n_sms, cta_lim), np.bool_)  # freed CTA slots waiting for the next CTAs
    # dep_next[i]: instruction i + 1 reads the register instruction i writes (see `w_next` in `_run`)
    n_instr = dst_reg.shape[0]
    dep_next = np.zeros(n_instr, np.bool_)
    for i in range(n_instr - 1):
        r = dst_reg[i]
        dep_next[i] = r >= 0 and (src_reg[i + 1, 0] == r or src_reg[i + 1, 1] == r or src_reg[i + 1, 2] == r)

    _run(mech, W, sw, n_sms, n_sched, cta_lim, tpc, n_ctas, policy, max_cycles, no_progress, block_start, succ_ptr,
         succ_idx, ipdom, has_bar, prio, op_class, dst_reg, src_reg, lat, path_ptr, path, exit_b, syncwarp, ev,
         occ_hist, q_hist, g, wpc, WS, n_slots, n_q, qmask, occ, st, rt, winfo, sb, sbr, ran, pos,
         cta_live, cta_arr, simd_free, rr, last, sm_next, sm_seen, sm_retire, sm_res, order, order_n, nxt, gblk,
         gmask, cand, wready, sk_next, hws, hws_sync, iss_lat, k1, sm_major, sm_lp, stop_t, pend, dep_next)


@helper
def _run(mech, W, sw, n_sms, n_sched, cta_lim, tpc, n_ctas, policy, max_cycles, no_progress, block_start, succ_ptr,
         succ_idx, ipdom, has_bar, prio, op_class, dst_reg, src_reg, lat, path_ptr, path, exit_b, syncwarp, ev,
         occ_hist, q_hist, g, wpc, WS, n_slots, n_q, qmask, occ, st, rt, winfo, sb, sbr, ran, pos,
         cta_live, cta_arr, simd_free, rr, last, sm_next, sm_seen, sm_retire, sm_res, order, order_n, nxt, gblk,
         gmask, cand, wready, sk_next, hws, hws_sync, iss_lat, k1, sm_major, sm_lp, stop_t, pend, dep_next):
    """The visit loop (NRT-free: it never allocates, so its many helper calls cost no refcounting).

    A visit is one SM at one cycle: issue, retire finished CTAs, hand their slots new CTAs, compute
    the SM's next visit. SMs share only the queue of CTAs waiting for a slot, so the visit order is
    free as long as CTAs are handed out in (cycle, SM) order of the slots freed (docs/core.md):

    - cycle-major (``sm_major`` false): every SM's visits of cycle t before any of cycle t + 1, SMs
      in index order. Needed by ``hws_sync`` (it couples the SMs every cycle) and for the errors,
      whose rules are global (the replay of an SM-major run that ended with ERR_REPLAY).
    - SM-major: one SM runs alone, visit after visit, until it frees a CTA slot while CTAs still
      wait; it stops there. When every SM has stopped (or finished), the one that stopped first
      (lowest cycle, then lowest index) gets the waiting CTAs and runs on: each CTA goes where the
      cycle-major loop sends it, and one SM's warps and scoreboard stay in cache meanwhile. An SM
      that could stall for good, stop for ``no_progress`` cycles or pass ``max_cycles`` ends the
      run with ERR_REPLAY: which error the machine meets first is the cycle-major replay's answer.
    """
    n_regs = sb.shape[0] // (n_slots * 4)
    rec_words = sbr.shape[0] // (n_slots * n_regs)  # words per scoreboard overflow record
    # ---- CTA dispatch: fill every SM up to its CTA limit, in CTA order --------------------------
    next_cta = 0
    for sm in range(n_sms):
        for c in range(cta_lim):
            if next_cta < n_ctas:
                _dispatch(mech, sm, c, next_cta, 0, W, wpc, WS, tpc, path_ptr, path, exit_b, st, winfo, sb, sbr,
                          pos, cta_live, order, order_n, sm_res, g, ev, rt)
                if cta_live[next_cta] == 0:
                    sm_retire[sm] = 1  # a CTA without live threads retires at the SM's next issue
                next_cta += 1
    for w in range(n_slots):
        if winfo[w, W_CTA] >= 0:
            wready[w] = 0

    done = 0
    now = 0
    last_progress = 0
    sm = -1
    while True:
        # ---- the next visit: (sm, now); `resume`: the SM stopped at `now` and gets its CTAs
        # (the visit orders: see the docstring)
        if sm_major:
            sm, now, resume = sm_major_next(sm, sm_res, stop_t, sm_next)
            if sm < 0:
                if done < n_ctas:
                    g[G_ERR] = ERR_REPLAY  # (an SM left with CTAs and no next visit)
                return
        else:
            nxt_sm = cycle_major_next(sm_res, sm_next)
            if nxt_sm < 0 or sm_next[nxt_sm] > now:
                # every visit of cycle `now` is done
                if hws_sync:
                    _sync_widths(simd_free, iss_lat, n_sms, n_sched, now, g)
                if done >= n_ctas:
                    return
                # ---- event skipping: jump to the next cycle at which anything can happen -------
                nxt_t = sm_next[nxt_sm] if nxt_sm >= 0 else INF
                err, err_cycle = cycle_major_error(nxt_t, now, last_progress, no_progress, max_cycles)
                if err:
                    g[G_ERR] = err
                    g[G_ERR_CYCLE] = err_cycle
                    if err != ERR_MAX_CYCLES:
                        _blame(st, winfo, n_slots, g)
                    return
                now = nxt_t
            sm = nxt_sm
            resume = False
        n_pend = 1 if resume else 0  # CTA slots of this SM freed in this visit (a resume: some)
        g[G_VKEY] = (now + 1) * (n_sms + 1) + sm + 1

        if not resume:
            # idle cycles since this SM was last visited: nothing could issue there, so each cycle at or
            # after its SIMD units drained was idle (counted here rather than cycle by cycle)
            if now > sm_seen[sm] + 1:
                busy_until = sm_seen[sm] + 1
                for k in range(n_sched):
                    if mech != MIMD and simd_free[sm, k] > busy_until:
                        busy_until = simd_free[sm, k]
                if now > busy_until:
                    g[G_IDLE] += now - busy_until
            sm_seen[sm] = now
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
                n_w = order_n[sm] + 1 if policy == POLICY_GTO else nk
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
                            w = order[sm, jj - 1]
                            if w == last[sm, k] or (w - sm * WS) % n_sched != k:
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
                    stn = winfo[w, W_STN]
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
                        t = 0
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
                        if hws:
                            # PDOM&HWS (seed 003 §4.1-4.2): squeezed lane-aware, the warp issues only its
                            # non-empty quarters; a lane with k threads needs k, and the squeeze gets there
                            k_width = max_lane_count(np.uint64(mask), n_q, sw)
                            quarters = k_width
                        else:
                            quarters = 0
                            for q in range(n_q):
                                if (mask >> (q * sw)) & qmask:
                                    quarters += 1
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
                        if r >= 0 and mech == MIMD:
                            sb_write_lane(sb, sbr, W, (w * n_regs + r) * 4, (w * n_regs + r) * rec_words,
                                          trailing_zeros(mask), now + latency, now)
                        elif r >= 0:
                            sb_write(sb, sbr, k1, (w * n_regs + r) * 4, (w * n_regs + r) * rec_words, mask,
                                     now + latency, now)
                        done_t = now + (latency if latency > k_width else k_width)
                        iss_lat[sm, k] = latency + 1
                        if done_t > g[G_CYCLES]:
                            g[G_CYCLES] = done_t
                        st[w, i, S_T] = now + 1  # a unit issues at most once per cycle

                        size = block_start[b + 1] - block_start[b]
                        err = 0
                        if off + 1 < size:
                            st[w, i, S_OFF] = off + 1
                            if mech == MP_OER and st[w, i, S_RPCB] == b and st[w, i, S_RPCO] == off + 1:
                                err = _early_arrival(mech, st, rt, winfo, w, now, g, ev)
                            elif dep_next[instr] and (stn_before == 1 or mech == SPS) and mech != MIMD:
                                # The same unit issues next (the only one, or sps' top of stack). If that
                                # instruction reads the register just written, it waits for this write:
                                # the walk may skip the warp until then instead of checking its operands
                                # (a dependent chain issuing faster than its latency, e.g. 1-quarter warps
                                # under PDOM&HWS: nn walked 3.3 slots per visit, mostly such checks).
                                w_next = now + latency
                        else:
                            err = _block_end(mech, st, rt, winfo, w, i, now, b, active, has_bar, pos, path, succ_ptr,
                                             succ_idx, ipdom, exit_b, prio, cta_live, cta_arr, wpc, WS, nxt, gblk,
                                             gmask, g, ev, wready, syncwarp)
                        if err > 0:
                            return
                        if err < 0:
                            # a barrier released units of warps on any scheduler of this SM (from the next
                            # cycle: released units are not-before now + 1), so their caches are stale
                            released = True
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
                        winfo[w, W_CTA] = -1
                        wready[w] = INF
                        row_list_remove(order, order_n, sm, w)
                    sm_res[sm] -= 1
                    done += 1
                    last_progress = now
                    sm_lp[sm] = now
                    pend[sm, c] = True
                    n_pend += 1
            if issued_sm:
                last_progress = now
                sm_lp[sm] = now
            elif _simd_idle(simd_free, sm, n_sched, now):
                g[G_IDLE] += 1
            if n_pend > 0 and sm_major and next_cta < n_ctas:
                stop_t[sm] = now  # which CTAs it gets depends on the SMs not run this far yet
                sm_next[sm] = nt  # (kept for the resume)
                continue
        else:
            nt = sm_next[sm]

        # ---- freed slots take the waiting CTAs, in slot order
        for c in range(cta_lim if n_pend > 0 else 0):
            if pend[sm, c]:
                pend[sm, c] = False
                if next_cta < n_ctas:
                    w0 = sm * WS + c * wpc
                    _dispatch(mech, sm, c, next_cta, now + 1, W, wpc, WS, tpc, path_ptr, path, exit_b, st,
                              winfo, sb, sbr, pos, cta_live, order, order_n, sm_res, g, ev, rt)
                    wready[w0:w0 + wpc] = 0
                    sk_next[sm, :] = 0
                    if cta_live[next_cta] == 0:
                        sm_retire[sm] = 1
                    next_cta += 1
                    nt = now + 1
        sm_next[sm] = nt if sm_res[sm] > 0 else INF
        if sm_major and sm_res[sm] > 0 and (nt >= INF or nt - sm_lp[sm] > no_progress or nt > max_cycles):
            # the SM alone cannot tell what the machine reports (its last progress is no later than
            # the machine's, so this catches every no-progress error, and more)
            g[G_ERR] = ERR_REPLAY
            return


@helper
def _sync_widths(simd_free, iss_lat, n_sms, n_sched, now, g):
    """hws_sync_sms (the thesis simulator, seed 003 §4.2 step 3): every warp issued in this cycle,
    on any SM, takes the largest warp size among them."""
    widest = 0
    for sm in range(n_sms):
        for k in range(n_sched):
            if iss_lat[sm, k] > 0 and simd_free[sm, k] - now > widest:
                widest = simd_free[sm, k] - now
    for sm in range(n_sms):
        for k in range(n_sched):
            if iss_lat[sm, k] > 0:
                simd_free[sm, k] = now + widest
                done_t = now + (iss_lat[sm, k] - 1 if iss_lat[sm, k] - 1 > widest else widest)
                if done_t > g[G_CYCLES]:
                    g[G_CYCLES] = done_t
                iss_lat[sm, k] = 0


@helper
def _simd_idle(simd_free, sm, n_sched, now):
    """An SM-cycle is idle when no SIMD unit of the SM issues or is still executing a warp."""
    for k in range(n_sched):
        if simd_free[sm, k] > now:
            return False
    return True


@helper
def _blame(st, winfo, n_slots, g):
    """Name the first stuck unit for the no-progress error (warp, pc)."""
    for w in range(n_slots):
        if winfo[w, W_CTA] >= 0 and winfo[w, W_STN] > 0:
            g[G_ERR_WARP] = winfo[w, W_GID]
            g[G_ERR_BLK] = st[w, 0, S_BLK]
            g[G_ERR_OFF] = st[w, 0, S_OFF]
            return
    g[G_ERR_WARP] = -1


@helper
def _dispatch(mech, sm, c, cta, now, W, wpc, WS, tpc, path_ptr, path, exit_b, st, winfo, sb, sbr, pos, cta_live,
              order, order_n, sm_res, g, ev, rt):
    """Place CTA ``cta`` in CTA slot ``c`` of ``sm``: its warps start converged at the entry block."""
    live_total = 0
    for i in range(wpc):
        w = sm * WS + c * wpc + i
        lanes = min(W, tpc - i * W)
        tbase = cta * tpc + i * W
        live = 0
        for lane in range(lanes):
            t = tbase + lane
            pos[t] = path_ptr[t]
            if path[pos[t]] != exit_b:  # a thread whose path is only the exit never runs
                live |= np.int64(1) << lane
        winfo[w, W_CTA] = cta
        winfo[w, W_TBASE] = tbase
        winfo[w, W_NLANES] = lanes
        winfo[w, W_LIVE] = live
        winfo[w, W_EPOCH] = g[G_EPOCH]
        g[G_EPOCH] += 1
        winfo[w, W_STN] = 0
        winfo[w, W_RTN] = 0
        winfo[w, W_NEXTID] = 0
        winfo[w, W_AGE] = g[G_AGE]
        g[G_AGE] += 1
        winfo[w, W_CTASLOT] = c
        winfo[w, W_GID] = cta * wpc + i
        rec = sb.shape[0] // winfo.shape[0]  # scoreboard entry words per warp (the records need no reset)
        sb[w * rec:(w + 1) * rec] = 0
        if mech == MIMD:
            for lane in range(lanes):
                if (live >> lane) & 1:
                    st_append(st, winfo, w, 0, 0, np.int64(1) << lane, -1, -1, -1, now)
        elif live != 0:
            st_append(st, winfo, w, 0, 0, live, -1, -1, -1, now)
        live_total += popcount(live)
        order[sm, order_n[sm]] = w
        order_n[sm] += 1
        if ev.shape[0] > 0:
            emit_tables(ev, g, now, st, rt, winfo, w)
    cta_live[cta] = live_total
    sm_res[sm] += 1


@helper
def _early_arrival(mech, st, rt, winfo, w, now, g, ev):
    """mp-oer: the trailing split reached the early reconvergence point inside its block."""
    if m_mp.settle(st, rt, winfo, w, now) < 0:
        g[G_ERR] = ERR_TABLE_OVERFLOW
        g[G_ERR_CYCLE] = now
        return ERR_TABLE_OVERFLOW
    track_tables(mech, st, rt, winfo, w, g)
    if ev.shape[0] > 0:
        emit_tables(ev, g, now, st, rt, winfo, w)
    return 0


@inline_helper
def _block_end(mech, st, rt, winfo, w, i, now, b, active, has_bar, pos, path, succ_ptr, succ_idx, ipdom, exit_b, prio,
               cta_live, cta_arr, wpc, WS, nxt, gblk, gmask, g, ev, wready, syncwarp):
    """Unit ``i`` issued the last instruction of block ``b``: barrier arrival or block-end move.

    Returns an ERR_ code, -1 if a barrier was released (units of other warps, on any scheduler of
    the SM, may issue from the next cycle), or 0.
    """
    cta = winfo[w, W_CTA]
    if has_bar[b]:
        # bar.sync ends its block: the unit waits until every live thread of the CTA arrives
        st[w, i, S_STATE] = 1
        st[w, i, S_BART] = now
        cta_arr[cta] += active
        if mech == STACKLESS:
            m_stackless.release(st, winfo, w, prio)  # threads at a syncwarp must not hold up the barrier
    else:
        err = advance(mech, st, rt, winfo, w, i, now, pos, path, succ_ptr, succ_idx, ipdom, exit_b, prio, cta_live,
                      nxt, gblk, gmask, g, ev, syncwarp)
        if err:
            return err
    if cta_arr[cta] == 0 or cta_arr[cta] != cta_live[cta]:
        return 0  # no barrier to release
    w0 = (w // WS) * WS + winfo[w, W_CTASLOT] * wpc
    for w2 in range(w0, w0 + wpc):
        wready[w2] = 0  # released units become schedulable: recompute these warps
    err = release_barrier(mech, cta, now, st, rt, winfo, w0, wpc, pos, path, succ_ptr, succ_idx, ipdom, exit_b,
                          prio, cta_live, cta_arr, nxt, gblk, gmask, g, ev, syncwarp)
    return err if err else -1
