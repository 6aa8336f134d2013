"""The warp pool and the row cache: how the formation kernel keeps its warps (docs/formation.md).

A warp is a record ``wf[w]`` with a slot array ``wsl[w, :W]`` (global thread id per slot, HOLE
for none; slot ``s`` sits in SIMD lane ``s % simd_width``). Its *row cache* ``wsl[w, W:2W]``
lists the scoreboard rows of its threads and its *register summary* ``wsl[w, 2W:]`` the latest
ready cycle of recently written registers, so that the common case — an instruction inside a
block — touches only the warp's own threads. Each SM's *pool view* ``pl[sm]`` mirrors the fields
its schedulers and the merge search read, in contiguous rows.
"""

from __future__ import annotations

import numpy as np
from numba.cpython.unsafe.numbers import trailing_zeros

from ..._jit import hot_helper
from ..stats import G_AGE, G_ERR, G_ERR_BLK, G_ERR_CYCLE, G_ERR_NEXT, G_ERR_WARP, G_EXITS, G_N, G_NREL
from ..visits import ERR_BAD_EDGE
from .layout import (
    F_AGE, F_BART, F_BLK, F_BOUND, F_CN, F_CPC, F_CTA, F_EP, F_ID, F_LOOSE, F_MASK, F_N, F_NB, F_NROW, F_OFF,
    F_PIDX, F_QACT, F_READY, F_RUN, F_SM, F_STATE, F_USED, INF, NSUM, P_AGE, P_CNT, P_PC, P_RDY, READY,
    SUM_R_BITS,
)


# ------------------------------------------------------------------------------------------------
@hot_helper
def sync_view(wf, pl, w, block_start):
    """Copy warp ``w``'s scheduling fields into its SM's pool view (after any change to its PC,
    thread count, state, READY or use), and move its threads in the majority counts."""
    j = wf[w, F_PIDX]
    if j < 0:
        return  # not in a pool (yet): `pool_add` syncs it
    sm = wf[w, F_SM]
    pc = block_start[wf[w, F_BLK]] + wf[w, F_OFF]
    live = wf[w, F_USED] != 0 and wf[w, F_STATE] == READY
    pl[sm, P_RDY, j] = wf[w, F_READY] if live else INF
    pl[sm, P_PC, j] = pc
    pl[sm, P_AGE, j] = wf[w, F_AGE]
    cpc = wf[w, F_CPC]
    if cpc >= 0:
        pl[sm, P_CNT, cpc] -= wf[w, F_CN]
    if live:
        wf[w, F_CPC] = pc
        wf[w, F_CN] = wf[w, F_N]
        pl[sm, P_CNT, pc] += wf[w, F_N]
    else:
        wf[w, F_CPC] = -1


@hot_helper
def pool_add(wf, pool, pool_n, pl, sm, w, block_start):
    """Append warp ``w`` (the youngest) to the pool of ``sm``."""
    j = pool_n[sm]
    pool[sm, j] = w
    pool_n[sm] = j + 1
    wf[w, F_PIDX] = j
    sync_view(wf, pl, w, block_start)


@hot_helper
def pool_remove(wf, pool, pool_n, pl, sm, w):
    """Remove warp ``w`` from the pool of ``sm``, keeping the age order of the others."""
    cpc = wf[w, F_CPC]
    if cpc >= 0:
        pl[sm, P_CNT, cpc] -= wf[w, F_CN]
        wf[w, F_CPC] = -1
    n = pool_n[sm]
    for q in range(wf[w, F_PIDX], n - 1):
        v = pool[sm, q + 1]
        pool[sm, q] = v
        wf[v, F_PIDX] = q
        pl[sm, P_RDY, q] = pl[sm, P_RDY, q + 1]
        pl[sm, P_PC, q] = pl[sm, P_PC, q + 1]
        pl[sm, P_AGE, q] = pl[sm, P_AGE, q + 1]
    pool_n[sm] = n - 1
    wf[w, F_PIDX] = -1


@hot_helper
def ready(wf, wsl, w, W, reg_ready, tpc, cslot, block_start, src_reg, pl):
    """Warp ``w`` has a new slot array or PC: refresh its row cache and its READY.

    Row cache: ``wsl[w, W:W + F_NROW]`` lists the scoreboard rows of the warp's threads (slot
    order) and F_MASK its occupied slots, so that issuing and the in-block READY update
    (`ready_rows`, the common case) touch only its threads, not every slot. Every change of a
    warp's slots is followed by this call (or by `rows` for a warp that waits at a barrier).
    """
    rows(wf, wsl, w, W, tpc, cslot)
    ready_rows(wf, wsl, w, W, reg_ready, block_start, src_reg, pl, tpc)


@hot_helper
def rows(wf, wsl, w, W, tpc, cslot):
    """Rebuild warp ``w``'s row cache and F_MASK from its slots (see `ready`)."""
    n = 0
    mask = np.int64(0)
    wf[w, F_EP] += 1  # a new thread set: its register summary is void
    wf[w, F_LOOSE] = wf[w, F_BOUND]  # (the caller set F_BOUND for the new thread set)
    for s in range(W):  # (branch-free: which slots hold a thread is unpredictable after a regrouping)
        mask |= np.int64(wsl[w, s] >= 0) << s
    lo = INF
    hi = -1
    m = mask
    while m != 0:
        s = trailing_zeros(m)
        m &= m - 1
        # scoreboard row: its CTA's residency slot * tpc + CTA-local id, kept per thread in
        # ``cslot`` from dispatch so that no hot loop divides
        x = cslot[wsl[w, s]]
        wsl[w, W + n] = x
        lo = x if x < lo else lo
        hi = x if x > hi else hi
        n += 1
    wf[w, F_NROW] = n
    wf[w, F_MASK] = mask
    wf[w, F_QACT] = -1
    wf[w, F_RUN] = lo if hi - lo == n - 1 else -1  # (n distinct rows spanning n: one run)


@hot_helper
def ready_rows(wf, wsl, w, W, reg_ready, block_start, src_reg, pl, tpc):
    """READY of warp ``w``'s next instruction (not before F_NB, operands of all its threads) from
    its row cache (valid: its slots did not change since the last `ready`). Register ``r`` of the
    thread whose row is ``x`` is ``reg_ready[x + r * tpc]`` (layout: see `_simulate`)."""
    instr = block_start[wf[w, F_BLK]] + wf[w, F_OFF]
    t_ready = wf[w, F_NB]
    n = wf[w, F_NROW]
    ep = wf[w, F_EP] << SUM_R_BITS
    for j in range(3):
        r = src_reg[instr, j]
        if r < 0:
            continue
        c = 2 * W + 2 * (r & (NSUM - 1))
        if wsl[w, c] == ep | r:  # the summary knows it: one read instead of one per thread
            rr = wsl[w, c + 1]
        elif wf[w, F_LOOSE] <= t_ready:
            continue  # ready for every thread by a cycle the warp waits for anyway: no gather
        else:
            off = r * tpc
            rr = 0
            run = wf[w, F_RUN]
            if run >= 0:
                for x in reg_ready[run + off:run + off + n]:
                    rr = x if x > rr else rr
            else:
                for k in range(W, W + n):
                    x = reg_ready[wsl[w, k] + off]
                    rr = x if x > rr else rr
            sum_store(wf, wsl, w, c, ep | r, rr)
        if rr > t_ready:
            t_ready = rr
    wf[w, F_READY] = t_ready
    sync_view(wf, pl, w, block_start)


@hot_helper
def sum_store(wf, wsl, w, c, tag, ready):
    """Summary entry ``c`` of warp ``w`` := (tag, ready); an entry of this epoch it evicts folds its
    cycle into F_LOOSE (its register has no entry any more)."""
    old = wsl[w, c]
    if old >> SUM_R_BITS == tag >> SUM_R_BITS and old != tag and wsl[w, c + 1] > wf[w, F_LOOSE]:
        wf[w, F_LOOSE] = wsl[w, c + 1]
    wsl[w, c] = tag
    wsl[w, c + 1] = ready
    if ready > wf[w, F_BOUND]:
        wf[w, F_BOUND] = ready


@hot_helper
def new_warp(wf, wsl, w, g, blk, nb, cta):
    wf[w, F_USED] = 1
    # Event ids count per SM (the SM is the id modulo n_sms): they do not depend on the order in
    # which `_run` visits SMs. Ages are global but only ever compared within one SM.
    sm = wf[w, F_SM]
    n_sms = g.shape[0] - G_N
    wf[w, F_ID] = g[G_N + sm] * n_sms + sm
    g[G_N + sm] += 1
    wf[w, F_AGE] = g[G_AGE]
    g[G_AGE] += 1
    wf[w, F_BLK] = blk
    wf[w, F_OFF] = 0
    wf[w, F_NB] = nb
    wf[w, F_STATE] = READY
    wf[w, F_BART] = 0
    wf[w, F_CTA] = cta
    wf[w, F_N] = 0
    wf[w, F_BOUND] = INF  # unknown registers: the creator lowers it when it knows better


@hot_helper
def quarters(mask, W, sw, n_q):
    """Quarters (issue sub-groups of ``sw`` slots, ``n_q`` of them) holding a thread, from an
    occupied-slot mask."""
    if sw >= W:
        return 1 if mask != 0 else 0
    lanes = (np.int64(1) << sw) - 1
    q_act = 0
    for q in range(n_q):
        if (mask >> (q * sw)) & lanes:
            q_act += 1
    return q_act


@hot_helper
def step(wf, wsl, w, W, pos, path, succ_ptr, succ_idx, g, now, nxt):
    """Every thread of warp ``w`` finished its block: advance its path cursor (checking the edge).
    ``nxt[s]`` receives the next block of the thread in slot ``s`` (one read of its path)."""
    b = wf[w, F_BLK]
    occ = np.int64(0)
    for s in range(W):  # (branch-free: holes are unpredictable after a regrouping)
        occ |= np.int64(wsl[w, s] >= 0) << s
    # Every cursor first, the edge checks after: a thread's path read misses the cache once every
    # 16 blocks (a new line), and with no branch between them these misses overlap
    m = occ
    while m != 0:
        s = trailing_zeros(m)
        m &= m - 1
        t = wsl[w, s]
        p = pos[t] + 1
        pos[t] = p
        nxt[s] = path[p]
    lo = succ_ptr[b]
    hi = succ_ptr[b + 1]
    m = occ
    while m != 0:
        s = trailing_zeros(m)
        m &= m - 1
        n = nxt[s]
        ok = False
        for e in range(lo, hi):
            ok |= succ_idx[e] == n  # no early exit: which edge a thread takes is unpredictable
        if not ok:  # (the first bad thread in slot order, as the reference reports it)
            g[G_ERR] = ERR_BAD_EDGE
            g[G_ERR_WARP] = wsl[w, s]
            g[G_ERR_BLK] = b
            g[G_ERR_NEXT] = n
            g[G_ERR_CYCLE] = now
            return ERR_BAD_EDGE
    return 0


@hot_helper
def exit_thread(t, tpc, cta_live, cta_arr, rel, g):
    """Thread ``t`` exits; queue its CTA if that completes a bar.sync its other threads wait at."""
    cta = t // tpc
    cta_live[cta] -= 1
    g[G_EXITS] += 1
    if cta_arr[cta] > 0 and cta_arr[cta] == cta_live[cta]:
        for i in range(g[G_NREL]):
            if rel[i] == cta:
                return
        rel[g[G_NREL]] = cta
        g[G_NREL] += 1


@hot_helper
def first_succ(succ_idx, lo, e):
    """Is successor edge ``e`` the first edge of its block to target ``succ_idx[e]`` (brx duplicates)?"""
    for e2 in range(lo, e):
        if succ_idx[e2] == succ_idx[e]:
            return False
    return True


# ------------------------------------------------------------------------------------------------
# dwf / en-dwf: the warp pool
# ------------------------------------------------------------------------------------------------


@hot_helper
def alloc(wf, free, free_n, sm):
    """A free warp record of ``sm`` (records are never short: a warp holds at least one thread)."""
    free_n[sm] -= 1
    return free[sm, free_n[sm]]


@hot_helper
def release_warp(wf, free, free_n, sm, w):
    wf[w, F_USED] = 0
    free[sm, free_n[sm]] = w
    free_n[sm] += 1


