"""`tbc`: thread block compaction (Fung and Aamodt, HPCA 2011) on the formation kernel
(docs/formation.md; reference model ``simt_fast.sim.reference.tbc``).

A CTA has one reconvergence stack; its top entry runs as up to ``wpc`` warps in the CTA's warp
slots. At a potentially divergent branch every warp of the entry waits until all have arrived;
then the entry goes on together (one target) or waits at the branch's immediate post-dominator
while one new entry per target runs its threads compacted lane-aware (the k-th thread with home
slot s goes to new warp k). An entry whose warps all reach its reconvergence point pops. Warps are
scheduled as the core schedules its warp slots (lrr or gto per scheduler).

A block end runs as `tbc_finish`, then, if it returns RESOLVE, `tbc_resolve`, then, if that returns
CHECK (or `tbc_finish` did), `tbc_check_done`: called one after the other from the cycle loop, not
from each other (docs/formation.md, *Compile time*).
"""

from __future__ import annotations

from ..._jit import helper, hot_helper
from ..stats import G_ERR, G_ERR_CYCLE, G_MAX_STACK
from ..visits import ERR_TABLE_OVERFLOW
from .layout import (
    AT_BRANCH, AT_RPC, F_BASE, F_BLK, F_CS, F_CTA, F_N, F_NB, F_OFF, F_PIDX, F_SM, F_STATE, F_USED, HOLE, INF,
    P_AGE, P_RDY, READY,
)
from .pool import exit_thread, first_succ, new_warp, ready, step, sync_view

RESOLVE = -1  # tbc_finish: the warp waits at a branch; see whether its whole entry does
CHECK = -2  # see whether the top entry is done (every warp at its reconvergence point or empty)


@helper
def tbc_clear(wf, base, wpc, pl):
    """The CTA's warp slots ``base ..`` are emptied (an entry was pushed or popped)."""
    for i in range(wpc):
        w = base + i
        wf[w, F_USED] = 0
        pl[wf[w, F_SM], P_RDY, wf[w, F_PIDX]] = INF


@helper
def tbc_activate(cs, base, cta, nb, wf, wsl, depth, ent_pc, ent_rpc, ent_nw, lay, wpc, W, pos, path, exit_b, g,
                 reg_ready, tpc, cslot, block_start, src_reg, pl):
    """Start or resume the top entry with its layout (minus exited threads); pop finished entries."""
    while depth[cs] > 0:
        d = depth[cs] - 1
        if ent_pc[cs, d] != ent_rpc[cs, d]:
            i = 0
            for k in range(ent_nw[cs, d]):
                n = 0
                for s in range(W):
                    t = lay[cs, d, k, s]
                    if t >= 0 and path[pos[t]] != exit_b:
                        wsl[base + i, s] = t
                        n += 1
                    else:
                        wsl[base + i, s] = HOLE
                if n > 0:
                    new_warp(wf, wsl, base + i, g, ent_pc[cs, d], nb, cta)
                    wf[base + i, F_N] = n
                    wf[base + i, F_CS] = cs
                    wf[base + i, F_BASE] = base
                    ready(wf, wsl, base + i, W, reg_ready, tpc, cslot, block_start, src_reg, pl)
                    i += 1
            if i > 0:
                return
        depth[cs] = d  # nothing left to run, or it is at its reconvergence point already


@helper
def tbc_check_done(w, nb, wf, wsl, depth, ent_pc, ent_rpc, ent_nw, lay, wpc, W, pos, path, exit_b, g, reg_ready,
                   tpc, cslot, block_start, src_reg, pl):
    """Warp ``w`` finished a block: if every warp of its CTA's top entry is at the entry's
    reconvergence point (or empty), the entry pops and the one below resumes, from cycle ``nb``."""
    base = wf[w, F_BASE]
    for i in range(wpc):
        v = base + i
        if wf[v, F_USED] and wf[v, F_N] > 0 and wf[v, F_STATE] != AT_RPC:
            return
    cs = wf[w, F_CS]
    tbc_clear(wf, base, wpc, pl)
    depth[cs] -= 1
    tbc_activate(cs, base, wf[w, F_CTA], nb, wf, wsl, depth, ent_pc, ent_rpc, ent_nw, lay, wpc, W, pos, path,
                 exit_b, g, reg_ready, tpc, cslot, block_start, src_reg, pl)


@helper
def tbc_finish(w, now, nb, wf, wsl, W, pos, path, succ_ptr, succ_idx, exit_b, tpc, cta_live, cta_arr, rel, ent_rpc,
               nxt, g, reg_ready, cslot, block_start, src_reg, pl, depth):
    """Warp ``w`` issued the last instruction of its block at ``now``: its threads step; exited ones
    leave; it goes on from cycle ``nb``. Returns an error code, RESOLVE (it waits at a potentially
    divergent branch) or CHECK."""
    err = step(wf, wsl, w, W, pos, path, succ_ptr, succ_idx, g, now, nxt)
    if err:
        return err
    b = wf[w, F_BLK]
    for s in range(W):
        t = wsl[w, s]
        if t >= 0 and nxt[s] == exit_b:
            exit_thread(t, tpc, cta_live, cta_arr, rel, g)
            wsl[w, s] = HOLE
            wf[w, F_N] -= 1
    cs = wf[w, F_CS]
    top = depth[cs] - 1
    lo = succ_ptr[b]
    n_targets = 0
    for e in range(lo, succ_ptr[b + 1]):
        if first_succ(succ_idx, lo, e):
            n_targets += 1
    if n_targets > 1:
        wf[w, F_STATE] = AT_BRANCH  # TBC: the whole entry synchronises at a potentially divergent branch
        if wf[w, F_N] == 0:
            wf[w, F_USED] = 0
        sync_view(wf, pl, w, block_start)
        return RESOLVE
    s = succ_idx[lo]
    if wf[w, F_N] == 0:
        wf[w, F_USED] = 0
        sync_view(wf, pl, w, block_start)
    elif s == ent_rpc[cs, top]:
        wf[w, F_BLK] = s
        wf[w, F_OFF] = 0
        wf[w, F_STATE] = AT_RPC
        sync_view(wf, pl, w, block_start)
    else:
        wf[w, F_BLK] = s
        wf[w, F_OFF] = 0
        wf[w, F_NB] = nb
        ready(wf, wsl, w, W, reg_ready, tpc, cslot, block_start, src_reg, pl)
    return CHECK


@helper
def tbc_resolve(w, now, nb, wf, wsl, W, wpc, pos, path, succ_ptr, succ_idx, exit_b, ipdom, depth, ent_pc, ent_rpc,
                ent_nw, lay, cnt, g, reg_ready, tpc, cslot, block_start, src_reg, pl):
    """Warp ``w`` waits at the branch ending its block. Once every warp of the top entry does: go on
    together (returns CHECK), or compact per target (returns 0, or an error code); either way the
    entry's warps issue from cycle ``nb`` (the branch of the last one resolved)."""
    cs = wf[w, F_CS]
    base = wf[w, F_BASE]
    cta = wf[w, F_CTA]
    b = wf[w, F_BLK]
    for i in range(wpc):
        v = base + i
        if wf[v, F_USED] and wf[v, F_N] > 0 and wf[v, F_STATE] != AT_BRANCH:
            return 0
    top = depth[cs] - 1
    lo = succ_ptr[b]
    n_groups = 0
    only = -1
    for e in range(lo, succ_ptr[b + 1]):
        s = succ_idx[e]
        if s == exit_b or not first_succ(succ_idx, lo, e):
            continue
        found = False
        for i in range(wpc):
            v = base + i
            if wf[v, F_USED] and wf[v, F_N] > 0:
                for sl in range(W):
                    t = wsl[v, sl]
                    if t >= 0 and path[pos[t]] == s:
                        found = True
                        break
            if found:
                break
        if found:
            n_groups += 1
            only = s
    if n_groups <= 1:
        for i in range(wpc):
            v = base + i
            if not wf[v, F_USED]:
                continue
            if wf[v, F_N] == 0:
                wf[v, F_USED] = 0
                sync_view(wf, pl, v, block_start)
            elif only == ent_rpc[cs, top]:
                wf[v, F_BLK] = only
                wf[v, F_OFF] = 0
                wf[v, F_STATE] = AT_RPC
                sync_view(wf, pl, v, block_start)
            else:
                wf[v, F_BLK] = only
                wf[v, F_OFF] = 0
                wf[v, F_STATE] = READY
                wf[v, F_NB] = nb
                ready(wf, wsl, v, W, reg_ready, tpc, cslot, block_start, src_reg, pl)
        return CHECK
    r = ipdom[b]
    if r == ent_rpc[cs, top]:
        # the entry would resume at its own RPC and pop at once: the new entries replace it
        depth[cs] = top
    else:
        # the entry waits at the IPDOM; its current warps are the layout restored there
        ent_pc[cs, top] = r
        k = 0
        for i in range(wpc):
            v = base + i
            if wf[v, F_USED] and wf[v, F_N] > 0:
                for sl in range(W):
                    lay[cs, top, k, sl] = wsl[v, sl]
                k += 1
        ent_nw[cs, top] = k
    for e in range(lo, succ_ptr[b + 1]):
        s = succ_idx[e]
        if s == exit_b or s == r or not first_succ(succ_idx, lo, e):
            continue
        # lane-aware compaction: the k-th thread with home slot sl (warp order) goes to new warp k
        for sl in range(W):
            cnt[sl] = 0
        nw = 0
        d = depth[cs]
        n_new = 0
        for i in range(wpc):
            v = base + i
            if wf[v, F_USED] and wf[v, F_N] > 0:
                for sl in range(W):
                    t = wsl[v, sl]
                    if t >= 0 and path[pos[t]] == s:
                        n_new += 1
        if n_new == 0:
            continue
        if d > 0 and ent_pc[cs, d - 1] == s and ent_rpc[cs, d - 1] == r:
            # the entry below waits to run the same PC to the same RPC (a loop's break path left it
            # there on an earlier iteration): join it — its threads first, slot by slot, stably
            d -= 1
            nw = ent_nw[cs, d]
            for sl in range(W):
                j = 0
                for k in range(nw):
                    t = lay[cs, d, k, sl]
                    if t >= 0:
                        lay[cs, d, k, sl] = HOLE
                        lay[cs, d, j, sl] = t
                        j += 1
                cnt[sl] = j
            depth[cs] = d  # re-pushed below with the merged layout
        elif d >= ent_pc.shape[1]:
            g[G_ERR] = ERR_TABLE_OVERFLOW
            g[G_ERR_CYCLE] = now
            return ERR_TABLE_OVERFLOW
        for i in range(wpc):
            v = base + i
            if not (wf[v, F_USED] and wf[v, F_N] > 0):
                continue
            for sl in range(W):
                t = wsl[v, sl]
                if t >= 0 and path[pos[t]] == s:
                    if cnt[sl] >= nw:
                        for sl2 in range(W):
                            lay[cs, d, nw, sl2] = HOLE
                        nw += 1
                    lay[cs, d, cnt[sl], sl] = t
                    cnt[sl] += 1
        nw = 0
        for sl in range(W):
            if cnt[sl] > nw:
                nw = cnt[sl]
        ent_pc[cs, d] = s
        ent_rpc[cs, d] = r
        ent_nw[cs, d] = nw
        depth[cs] = d + 1
    if depth[cs] > g[G_MAX_STACK]:
        g[G_MAX_STACK] = depth[cs]
    tbc_clear(wf, base, wpc, pl)
    tbc_activate(cs, base, cta, nb, wf, wsl, depth, ent_pc, ent_rpc, ent_nw, lay, wpc, W, pos, path, exit_b, g,
                 reg_ready, tpc, cslot, block_start, src_reg, pl)
    return 0


@hot_helper
def pick_tbc(gto, sm, k, now, wf, WS, n_sched, rr, last, pl):
    """tbc scheduling, as the core: warp slots bound to schedulers, lrr or gto (the SM's pool view
    column j is warp slot j)."""
    nk = WS if n_sched == 1 else (WS - k + n_sched - 1) // n_sched  # slots of scheduler k
    rdy = pl[sm, P_RDY]
    if gto:
        lw = last[sm, k]
        if lw >= 0 and rdy[lw] <= now:
            return sm * WS + lw
        best = -1
        for j in range(nk):
            i = k + j * n_sched
            if i == lw or rdy[i] > now:
                continue
            if best < 0 or pl[sm, P_AGE, i] < pl[sm, P_AGE, best]:
                best = i
        if best >= 0:
            last[sm, k] = best
            return sm * WS + best
        return -1
    # round robin: the first ready slot after the last one issued, wrapping around (two plain
    # scans rather than one with a wrap test per slot)
    start = rr[sm, k] + 1
    for j in range(start, nk):
        if rdy[k + j * n_sched] <= now:
            rr[sm, k] = j
            return sm * WS + k + j * n_sched
    for j in range(min(start, nk)):
        if rdy[k + j * n_sched] <= now:
            rr[sm, k] = j
            return sm * WS + k + j * n_sched
    return -1

