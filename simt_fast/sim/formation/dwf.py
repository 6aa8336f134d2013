"""`dwf` and `en-dwf`: dynamic warp formation (Fung, Sham, Yuan, Aamodt, MICRO 2007) and the
hybrid-warp-size thesis' enhanced merge (Jin 2012, §4.4 and Appendix B), on the formation kernel's
warp pool (docs/formation.md; reference model ``simt_fast.sim.reference.dwf``).

At a block end the warp's threads split by next block; each group (the *male* warp) merges into the
forming warps of its SM's pool at that block's entry, oldest first: under DWF a thread joins when its
own slot is free there (lane-aware), under en-DWF a conflicting thread may take another quarter of
its lane. What does not fit opens a new warp. Scheduling: Fung's majority policy (the PC with most
threads), or gto / lrr. A bar.sync keeps its per-CTA meaning: a warp that mixes CTAs waits as one
warp per CTA.
"""

from __future__ import annotations

import numpy as np
from numba.cpython.unsafe.numbers import trailing_zeros

from ..._jit import helper, hot_helper
from ..squeeze import _squeeze_scratch as squeeze_scratch  # (Jin 2012, §4.4 step 1)
from ..mech._tables import popcount
from ..stats import G_LANE_CONFLICTS, G_MERGES
from ..warp_merge import merge_into  # the merge rules (DWF, en-DWF), also the public API's
from .layout import (
    AT_BARRIER, F_BART, F_BLK, F_BOUND, F_CTA, F_MASK, F_N, F_NB, F_OFF, F_STATE, HOLE, INF, P_AGE, P_CNT, P_PC,
    P_RDY,
)
from .pool import alloc, exit_thread, first_succ, new_warp, pool_add, pool_remove, ready, ready_rows, release_warp, \
    rows, step, sync_view


@hot_helper
def took_threads(f, n, nb, bound, wf, wsl, W, reg_ready, tpc, cslot, block_start, src_reg, pl, g):
    """Forming warp ``f`` took ``n`` male threads (now in its slots): it issues no earlier than they may
    (``nb``), its register bound covers theirs, its READY is computed again; one merge."""
    wf[f, F_N] += n
    if nb > wf[f, F_NB]:
        wf[f, F_NB] = nb
    if bound > wf[f, F_BOUND]:
        wf[f, F_BOUND] = bound
    ready(wf, wsl, f, W, reg_ready, tpc, cslot, block_start, src_reg, pl)
    g[G_MERGES] += 1


@hot_helper
def place(enhanced, sm, male, mmask, s, nb, exclude, bound, wf, wsl, pool, pool_n, W, sw, g, reg_ready, tpc,
           cslot, block_start, src_reg, pl):
    """Merge the male group (``mmask``: its occupied slots) into the forming warps at (s, 0), oldest
    first; returns threads left. ``bound``: F_BOUND of the warp the male threads come from; ``nb``:
    the cycle they may issue from (a warp they join waits for it). A forming warp's occupied slots
    are its F_MASK (valid: see `ready`)."""
    left = popcount(mmask)
    any_forming = False
    pc = block_start[s]  # (s, 0); blocks other than the exit are never empty
    for j in range(pool_n[sm]):
        # forming: at (s, 0) and not at a barrier (P_RDY < INF); the pool view is current for all
        # warps but ``exclude`` (the dissolving warp), which is not a candidate anyway
        if pl[sm, P_PC, j] != pc or pl[sm, P_RDY, j] >= INF:
            continue
        f = pool[sm, j]
        if f == exclude:
            continue
        any_forming = True
        fmask = wf[f, F_MASK]
        # en-DWF (Jin 2012, Appendix B): the whole male, conflicting threads moved within their lanes
        if enhanced and merge_into(male, mmask, wsl, f, fmask, W, sw, True):
            took_threads(f, left, nb, bound, wf, wsl, W, reg_ready, tpc, cslot, block_start, src_reg, pl, g)
            return 0
        # DWF (Fung et al. 2007, lane-aware): a thread joins if its own slot is free there
        join = mmask & ~fmask
        joined = popcount(join)
        mmask &= ~join
        while join != 0:
            slot = trailing_zeros(join)
            join &= join - 1
            wsl[f, slot] = male[slot]
            male[slot] = HOLE
        if joined > 0:
            left -= joined
            took_threads(f, joined, nb, bound, wf, wsl, W, reg_ready, tpc, cslot, block_start, src_reg, pl, g)
        if left == 0:
            return 0
    if any_forming:
        g[G_LANE_CONFLICTS] += left
    return left


@helper
def dwf_finish(enhanced, squeeze, sm, w, now, nb, wf, wsl, pool, pool_n, free, free_n, W, sw, pos, path, succ_ptr,
                succ_idx, exit_b, tpc, cta_live, cta_arr, rel, orig, male, sq, counts, order, nxt, g, reg_ready,
                cslot, block_start, src_reg, pl):
    err = step(wf, wsl, w, W, pos, path, succ_ptr, succ_idx, g, now, nxt)
    if err:
        return err
    b = wf[w, F_BLK]
    for slot in range(W):
        orig[slot] = wsl[w, slot]
    bound = wf[w, F_BOUND]  # every group of its threads inherits it
    keep = True  # the first group that opens a warp keeps this warp's record, id and age
    lo = succ_ptr[b]
    for e in range(lo, succ_ptr[b + 1]):
        s = succ_idx[e]
        if not first_succ(succ_idx, lo, e):
            continue
        mmask = np.int64(0)  # the group: slots whose thread goes to s (branch-free, vectorised)
        for slot in range(W):
            mmask |= np.int64((orig[slot] >= 0) & (nxt[slot] == s)) << slot
        if mmask == 0:
            continue
        if s == exit_b:
            m = mmask
            while m != 0:
                slot = trailing_zeros(m)
                m &= m - 1
                exit_thread(orig[slot], tpc, cta_live, cta_arr, rel, g)
            continue
        for slot in range(W):
            male[slot] = orig[slot] if (mmask >> slot) & 1 else HOLE
        if squeeze:
            # Jin 2012, §4.4 step 1: squeeze the male warp before it meets the pool
            squeeze_scratch(male, sq, sw, counts, order)
            mmask = np.int64(0)
            for slot in range(W):
                male[slot] = sq[slot]
                mmask |= np.int64(sq[slot] >= 0) << slot
        left = place(enhanced, sm, male, mmask, s, nb, w, bound, wf, wsl, pool, pool_n, W, sw, g, reg_ready, tpc,
                      cslot, block_start, src_reg, pl)
        if left == 0:
            continue
        if keep:
            nw = w
            wf[w, F_BLK] = s
            wf[w, F_OFF] = 0
            wf[w, F_NB] = nb
            keep = False
            if left == wf[w, F_N] and not squeeze:
                # the whole warp goes on together (no thread exited, left or merged): same slots,
                # so its row cache stays valid
                ready_rows(wf, wsl, w, W, reg_ready, block_start, src_reg, pl, tpc)
                continue
        else:
            nw = alloc(wf, free, free_n, sm)
            new_warp(wf, wsl, nw, g, s, nb, -1)
            wf[nw, F_BOUND] = bound
            pool_add(wf, pool, pool_n, pl, sm, nw, block_start)
        for slot in range(W):
            wsl[nw, slot] = male[slot]
        wf[nw, F_N] = left
        ready(wf, wsl, nw, W, reg_ready, tpc, cslot, block_start, src_reg, pl)
    if keep:
        pool_remove(wf, pool, pool_n, pl, sm, w)
        release_warp(wf, free, free_n, sm, w)
    return 0


@helper
def dwf_barrier(sm, w, now, wf, wsl, pool, pool_n, free, free_n, W, tpc, cta_arr, tmp, ctas, g, pl,
                 block_start, cslot):
    """bar.sync keeps its per-CTA meaning: a warp that mixes CTAs waits as one warp per CTA.

    Writes the CTAs found (ascending) to ``ctas``; returns how many.
    """
    for slot in range(W):
        tmp[slot] = wsl[w, slot]
    n_ctas = 0
    while True:
        cta = -1
        for slot in range(W):  # the lowest CTA id still in tmp
            t = tmp[slot]
            if t >= 0 and (cta < 0 or t // tpc < cta):
                cta = t // tpc
        if cta < 0:
            break
        if n_ctas == 0:
            part = w
        else:
            part = alloc(wf, free, free_n, sm)
            new_warp(wf, wsl, part, g, wf[w, F_BLK], wf[w, F_NB], -1)
            wf[part, F_BOUND] = wf[w, F_BOUND]
            wf[part, F_OFF] = wf[w, F_OFF]
            pool_add(wf, pool, pool_n, pl, sm, part, block_start)
        ctas[n_ctas] = cta
        n_ctas += 1
        n = 0
        for slot in range(W):
            t = tmp[slot]
            if t >= 0 and t // tpc == cta:
                wsl[part, slot] = t
                tmp[slot] = HOLE
                n += 1
            else:
                wsl[part, slot] = HOLE
        wf[part, F_N] = n
        rows(wf, wsl, part, W, tpc, cslot)  # its slots changed: a released part may go on whole
        wf[part, F_STATE] = AT_BARRIER
        wf[part, F_BART] = now
        wf[part, F_CTA] = cta
        sync_view(wf, pl, part, block_start)
        cta_arr[cta] += n
    return n_ctas


# ------------------------------------------------------------------------------------------------
# tbc: one reconvergence stack per CTA
# ------------------------------------------------------------------------------------------------


@hot_helper
def pick_dwf(majority, gto, sm, now, wf, pool, pool_n, last_age, pl):
    """dwf scheduling: ``majority`` (the PC with most threads first), ``gto`` (the last warp while
    ready, else the oldest) or ``lrr`` (by age, round robin). Reads only the SM's pool view."""
    n = pool_n[sm]
    rdy = pl[sm, P_RDY]
    age = pl[sm, P_AGE]
    la = last_age[sm]
    if gto:
        first = -1
        for j in range(n):
            if rdy[j] > now:
                continue
            if age[j] == la:
                return pool[sm, j]
            if first < 0:
                first = j
        if first >= 0:
            last_age[sm] = age[first]
            return pool[sm, first]
        return -1
    if majority:
        # Fung's majority policy as one key maximised over the ready warps, without branches (the
        # ready test is unpredictable) so that it vectorises: most threads at the PC (kept per PC
        # in P_CNT), ties to the lower PC, then round robin at that PC: a warp younger than the
        # last issued first, and the first of those (pool order is age order), else the first.
        # km (a power of two) > every PC and every pool position; the key stays below 2 km^3 (no
        # overflow for any km up to 2^20).
        pcs = pl[sm, P_PC]
        cnt = pl[sm, P_CNT]
        km = pl.shape[2]
        kb = 0  # km = 2^kb: shifts, not multiplies (a vector int64 multiply is several µops)
        while (1 << kb) < km:
            kb += 1
        one_key = km <= 1 << 20  # else (over a million PCs or warps per SM) two steps, no overflow
        best = -1
        for j in range(n):
            i = pcs[j]
            key = (cnt[i] << kb) + (km - 1 - i)
            if one_key:
                key = (((key << 1) + (age[j] > la)) << kb) + (km - 1 - j)
            if rdy[j] > now:
                key = -1
            best = key if key > best else best  # (not `max`: numba calls it out of line here)
        if best < 0:
            return -1
        if one_key:
            pick = km - 1 - (best & (km - 1))
        else:  # the round robin at the chosen PC, as a second scan
            best_i = km - 1 - (best & (km - 1))
            pick = -1
            for j in range(n):
                if pcs[j] == best_i and rdy[j] <= now and (pick < 0 or (age[j] > la >= age[pick])):
                    pick = j
        last_age[sm] = age[pick]
        return pool[sm, pick]
    first = -1
    for j in range(n):  # pool order is age order
        if rdy[j] > now:
            continue
        if first < 0:
            first = j
        if age[j] > la:
            last_age[sm] = age[j]
            return pool[sm, j]
    if first >= 0:
        last_age[sm] = age[first]
        return pool[sm, first]
    return -1


