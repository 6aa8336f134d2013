"""What happens at the end of a block in the core: threads move along their paths, the mechanism
updates its tables, barriers release, CTAs arrive (docs/core.md).

Each function here is called from the cycle loop (`loop.py`); only `release_barrier` calls
another one (`advance`, once more per released unit). The `hot_helper`s are inlined by LLVM into
each caller, so each call site is compiled code of its own (docs/core.md, *Compile time*).
"""

from __future__ import annotations

import numpy as np
from numba.cpython.unsafe.numbers import trailing_zeros

from ..._jit import helper, hot_helper
from ..events import EV_RT, EV_ST, EV_TABLES, emit
from ..mech import DPS, FRONTIER, MIMD, MP, MP_OER, SERIAL, SPS, STACKLESS
from ..mech import dps as m_dps
from ..mech import frontier as m_frontier
from ..mech import mp as m_mp
from ..mech import mp_oer as m_oer
from ..mech import sps as m_sps
from ..mech import stackless as m_stackless
from ..mech._tables import (
    R_BLK, R_ID, R_OFF, R_PAR, R_PEND, R_RMASK, R_RPCB, R_RPCO, S_BART, S_BLK, S_MASK, S_OFF, S_PAR, S_RPCB,
    S_RPCO, S_STATE, S_T, W_AGE, W_CTA, W_CTASLOT, W_EPOCH, W_GID, W_LIVE, W_NB, W_NEXTID, W_NLANES, W_RTN, W_STN,
    W_TBASE, popcount, st_append, st_remove,
)
from ..stats import (
    G_AGE, G_BARWAIT, G_EARLY, G_EPOCH, G_ERR, G_ERR_BLK, G_ERR_CYCLE, G_ERR_NEXT, G_ERR_OFF, G_ERR_WARP,
    G_MAX_RT, G_MAX_SPLITS, G_MAX_ST, G_MAX_STACK,
)
from ..visits import ERR_BAD_EDGE, ERR_TABLE_OVERFLOW

READY = 0  # unit states (S_STATE); the stackless mechanism adds its SYNC_WAIT
AT_BARRIER = 1


@hot_helper
def schedulable(mech, st, rt, winfo, w, prio, out):
    """The units of warp ``w`` the mechanism lets issue (written to ``out``; returns how many)."""
    if mech == SPS:
        return m_sps.schedulable(st, rt, winfo, w, out)
    if mech == DPS:
        return m_dps.schedulable(st, rt, winfo, w, out)
    if mech == FRONTIER:
        return m_frontier.schedulable(st, rt, winfo, w, prio, out)
    return m_mp.schedulable(st, rt, winfo, w, out)  # serial, mp, mp-oer, mimd, stackless: every unit


@helper
def emit_tables(ev, g, now, st, rt, winfo, w):
    """Event: warp ``w``'s split and reconvergence tables, after a change."""
    wg = winfo[w, W_GID]
    emit(ev, g, EV_TABLES, now, wg, winfo[w, W_STN], winfo[w, W_RTN], 0, 0, 0, 0, 0, 0)
    for i in range(winfo[w, W_STN]):
        emit(ev, g, EV_ST, now, wg, st[w, i, S_BLK], st[w, i, S_OFF], st[w, i, S_MASK], st[w, i, S_RPCB],
             st[w, i, S_RPCO], st[w, i, S_PAR], st[w, i, S_STATE], 0)
    for k in range(winfo[w, W_RTN]):
        emit(ev, g, EV_RT, now, wg, rt[w, k, R_ID], rt[w, k, R_BLK], rt[w, k, R_OFF], rt[w, k, R_RPCB],
             rt[w, k, R_RPCO], rt[w, k, R_RMASK], rt[w, k, R_PEND], rt[w, k, R_PAR])


@hot_helper
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



@hot_helper
def advance(mech, st, rt, winfo, w, i, now, nb, pos, path, succ_ptr, succ_idx, ipdom, exit_b, prio,
            cta_live, nxt, gblk, gmask, g, ev, syncwarp):
    """Unit ``i`` of warp ``w`` finished its block at cycle ``now``: move its threads along their
    paths. The units they end up in issue from cycle ``nb`` on (after a branch: its resolution).

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
        nblk = path[pos[t]]
        nxt[lane] = nblk
        if first == -2:
            first = nblk
        elif nblk != first:
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
            st[w, i, S_T] = nb
            for k in range(1, ng):
                if st_append(st, winfo, w, gblk[k], 0, gmask[k], -1, -1, -1, nb) < 0:
                    g[G_ERR] = ERR_TABLE_OVERFLOW
                    return ERR_TABLE_OVERFLOW
        if mech == FRONTIER:
            m_frontier.merge_same_pc(st, winfo, w)
        if mech == STACKLESS:
            # stackless (Lee et al. 2013 §5.2): units entering a syncwarp block wait there; a syncwarp releases
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
            st[w, i, S_T] = nb
        elif ng == 0:
            st_remove(st, winfo, w, i)
        elif m_mp.diverge(st, rt, winfo, w, i, ipdom[b], gblk, gmask, ng, nb, mech != DPS) < 0:
            g[G_ERR] = ERR_TABLE_OVERFLOW
            g[G_ERR_CYCLE] = now
            g[G_ERR_WARP] = winfo[w, W_GID]
            g[G_ERR_BLK] = b
            return ERR_TABLE_OVERFLOW
        if xmask != 0:
            m_mp.clear_exited(rt, winfo, w, xmask)
        if m_mp.settle(st, rt, winfo, w, nb) < 0:
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
def early_arrival(mech, st, rt, winfo, w, now, nb, g, ev):
    """mp-oer: the trailing split reached the early reconvergence point inside its block (a
    reconverged split issues from ``nb``)."""
    if m_mp.settle(st, rt, winfo, w, nb) < 0:
        g[G_ERR] = ERR_TABLE_OVERFLOW
        g[G_ERR_CYCLE] = now
        return ERR_TABLE_OVERFLOW
    track_tables(mech, st, rt, winfo, w, g)
    if ev.shape[0] > 0:
        emit_tables(ev, g, now, st, rt, winfo, w)
    return 0


@helper
def arrive_at_barrier(mech, st, winfo, w, i, now, active, cta_arr, prio):
    """Unit ``i`` issued a bar.sync, the last instruction of its block: it waits until every live
    thread of its CTA has arrived (`release_barrier`)."""
    st[w, i, S_STATE] = AT_BARRIER
    st[w, i, S_BART] = now
    cta_arr[winfo[w, W_CTA]] += active
    if mech == STACKLESS:
        m_stackless.release(st, winfo, w, prio)  # threads at a syncwarp must not hold up the barrier


@helper
def release_barrier(mech, cta, w0, wpc, st, rt, winfo, now, pos, path, succ_ptr, succ_idx, ipdom, exit_b, prio,
                    cta_live, cta_arr, nxt, gblk, gmask, g, ev, syncwarp):
    """Every live thread of CTA ``cta`` (warp slots ``w0 .. w0 + wpc - 1``) has arrived at its
    barrier (or exited): the units waiting there move on, warps in slot order and the oldest unit
    of a warp first, each marked ready (it waited since its arrival). Advancing a unit may complete
    the barrier again (its threads exit), hence the outer loop. Returns 0 or an ERR_ code.

    A call, not an inline: a barrier completes far less often than a block ends, and inlining
    `advance` a second time into the cycle loop costs compile time for nothing."""
    err = 0
    while err == 0 and cta_arr[cta] > 0 and cta_arr[cta] == cta_live[cta]:
        cta_arr[cta] = 0
        w = w0
        while err == 0 and w < w0 + wpc:
            i = 0
            while i < winfo[w, W_STN] and st[w, i, S_STATE] != AT_BARRIER:
                i += 1
            if i == winfo[w, W_STN]:
                w += 1  # (advancing moves and adds rows: the same warp is searched again after one)
                continue
            st[w, i, S_STATE] = READY
            g[G_BARWAIT] += now - st[w, i, S_BART]
            st[w, i, S_T] = now + 1
            err = advance(mech, st, rt, winfo, w, i, now, now + 1, pos, path, succ_ptr, succ_idx, ipdom, exit_b,
                          prio, cta_live, nxt, gblk, gmask, g, ev, syncwarp)
    return err


@helper
def order_row(order_n, sm_res, sm, WS, w):
    """The row of ``order`` (the GTO age order) that holds warp slot ``w`` of ``sm``: one per scheduler
    (slot % n_sched), so that a scheduler's walk reads its own warps only, not the whole SM's."""
    n_sched = order_n.shape[0] // sm_res.shape[0]
    return sm * n_sched + (w - sm * WS) % n_sched


@helper
def dispatch_cta(mech, sm, c, cta, now, W, wpc, WS, tpc, path_ptr, path, exit_b, st, winfo, sb, pos, cta_live,
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
        winfo[w, W_NB] = 0
        rec = sb.shape[0] // winfo.shape[0]  # scoreboard entry words per warp (the records need no reset)
        sb[w * rec:(w + 1) * rec] = 0
        if mech == MIMD:
            for lane in range(lanes):
                if (live >> lane) & 1:
                    st_append(st, winfo, w, 0, 0, np.int64(1) << lane, -1, -1, -1, now)
        elif live != 0:
            st_append(st, winfo, w, 0, 0, live, -1, -1, -1, now)
        live_total += popcount(live)
        row = order_row(order_n, sm_res, sm, WS, w)
        order[row, order_n[row]] = w
        order_n[row] += 1
        if ev.shape[0] > 0:
            emit_tables(ev, g, now, st, rt, winfo, w)
    cta_live[cta] = live_total
    sm_res[sm] += 1


@helper
def blame(st, winfo, g):
    """Name the first stuck unit for a deadlock or no-progress error (warp, pc)."""
    for w in range(winfo.shape[0]):
        if winfo[w, W_CTA] >= 0 and winfo[w, W_STN] > 0:
            g[G_ERR_WARP] = winfo[w, W_GID]
            g[G_ERR_BLK] = st[w, 0, S_BLK]
            g[G_ERR_OFF] = st[w, 0, S_OFF]
            return
    g[G_ERR_WARP] = -1
