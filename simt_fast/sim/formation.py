"""Numba timing kernel for the mechanisms whose threads move between warps: dwf, en-dwf, tbc.

Why a kernel of its own: the IPDOM-family core (``core.py``) keeps a warp as a fixed set of lanes
of one CTA (thread = ``tbase + lane``) with a per-warp register scoreboard. Dynamic warp formation
and thread block compaction regroup threads, so here a warp is a *slot array* (``wsl[w, s]`` =
global thread id in slot ``s``, ``-1`` = hole; slot ``s`` sits in lane ``s % simd_width``), and the
scoreboard is per thread (a thread's registers live in its lane's bank and follow it). Everything
else is the core's machine: SIMD occupancy (``ceil(warp_size / simd_width)`` cycles, or the active
quarters under hws), issue scheduling, per-CTA barriers, CTA dispatch/replacement, event skipping
and the same statistics. The rules are in ``docs/formation.md`` and in the plain-Python models
``simt_fast.sim.reference.dwf_mech`` / ``tbc`` that this kernel must match event for event.
"""

from __future__ import annotations

import numpy as np

from .._jit import jit
from . import hws as _hws
from numba.cpython.unsafe.numbers import trailing_zeros

from .mech._tables import helper, inline_helper, popcount
from .visits import ERR_DEADLOCK, ERR_MAX_CYCLES, ERR_NO_PROGRESS  # noqa: F401  (the error codes, shared)
from .visits import cycle_major_error, cycle_major_next, sm_major_next

# Helpers of the cycle loop never allocate, so they are compiled without the numba runtime (the
# core's `helper`; docs/core.md). `_simulate` allocates the state and hands it to the NRT-free `_run`.
# the HWS engineer's squeeze kernel, compiled NRT-free for these loops (same source)
_squeeze_scratch = helper(_hws._squeeze_scratch.py_func)

DWF = 7
EN_DWF = 8
TBC = 9

HOLE = -1
INF = np.int64(1) << 62

# warp fields (wf[w, F_*])
F_USED = 0
F_ID = 1  # id reported in events: SM-local creation index * n_sms + SM (`_new_warp`)
F_AGE = 2  # creation order (round robin, oldest first)
F_BLK = 3
F_OFF = 4
F_NB = 5  # not before: one issue per cycle, new warps from the next cycle
F_STATE = 6  # 0 ready, 1 bar.sync, 2 tbc: at a branch, 3 tbc: at the entry's RPC
F_BART = 7
F_CTA = 8  # tbc: owning CTA
F_N = 9  # threads in the warp
F_READY = 10  # cached earliest issue cycle of its next instruction (F_NB and operands)
F_CS = 11  # tbc: the owning CTA's residency slot (sm * cta_lim + CTA slot)
F_SM = 12  # the SM owning this record (records are allocated per SM; fixed)
F_PIDX = 13  # position in the SM's pool view pl (dwf: pool order, -1 when not in the pool; tbc: fixed)
F_CPC = 14  # dwf majority: the PC this warp's threads are counted at in pl[sm, P_CNT] (-1: not counted)
F_CN = 15  # dwf majority: how many threads it counts there
F_NROW = 16  # threads in the row cache wsl[w, W:W + F_NROW] (see `_ready`)
F_MASK = 17  # occupied slots (bit s), as of the last `_ready`
F_BASE = 18  # tbc: the first warp record of the owning CTA (no divisions at a block end)
F_EP = 19  # epoch of its thread set: +1 at every `_rows` (tags its register summary, see `_ready_rows`)
# Register bounds (dwf, en-dwf; docs/formation.md "Seventh round"): every register of the warp's
# threads is ready by F_BOUND, and every one without a summary entry of the current epoch by F_LOOSE.
# A regrouped warp inherits F_BOUND from the warps its threads came from, so an operand whose entry
# is missing needs no gather over the threads when F_LOOSE is not later than the cycle the warp
# could issue anyway. INF (unknown: always gather) for tbc and for a record until its creator sets it.
F_LOOSE = 20
F_BOUND = 21
# The row cache's shape: F_RUN is its lowest row when its rows are one run of consecutive rows (a warp
# whose threads are consecutive in their CTA, as every warp of converged code), else -1; an issue then
# writes its destination register with one contiguous fill instead of a scatter over the rows
F_RUN = 22
F_QACT = 23  # quarters holding a thread (`_quarters` of F_MASK), -1 until the next issue computes it
F_NF = 24

# Per-warp register summary (wsl[w, 2W:]): NSUM direct-mapped entries (tag, ready) where ready is
# the latest ready cycle of register r over the warp's threads and tag = F_EP << 24 | r. Valid while
# the thread set is unchanged: only the warp holding a thread writes that thread's registers.
# A power of two; 64 rather than 16 since PTX kernels use hundreds of virtual registers (docs/formation.md).
NSUM = 64
SUM_R_BITS = 24  # registers below 2^24 (`simulate` checks)

# The SM's pool view pl[sm, P_*, j], kept in step with wf by `_sync`: the schedulers, the merge search
# and the next-event scan read these contiguous rows instead of chasing pool[sm, j] into wf (an
# SM's pool holds tens of warps on divergent code, ~40 on the bench trace, scanned several times
# per issue). Column j is the pool position under dwf (pool order = age order) and the warp slot
# under tbc.
P_RDY = 0  # earliest issue cycle (F_READY) if the warp can issue (used, state 0), else INF
P_PC = 1  # instruction index of its next instruction (block_start[F_BLK] + F_OFF)
P_AGE = 2  # F_AGE
P_CNT = 3  # indexed by PC, not by j: threads of the SM's state-0 warps at that PC (majority policy)
P_NF = 4

# counters (g[G_*]); the wrapper maps them onto Stats
G_CYCLES = 0
G_WARP_INSTS = 1
G_THREAD_INSTS = 2
G_IDLE = 3
G_MAX_STACK = 4
G_MERGES = 5
G_LANE_CONFLICTS = 6
G_BARWAIT = 7
G_ERR = 8
G_ERR_CYCLE = 9
G_ERR_WARP = 10
G_ERR_BLK = 11
G_ERR_NEXT = 12
G_NEVENTS = 13
G_EV_OVERFLOW = 14
G_AGE = 15
G_NREL = 16  # CTAs queued in the release list
G_EXITS = 17  # threads exited so far (an SM looks for finished CTAs only after exits or a dispatch)
G_N = 18  # then one warp-id counter per SM: g[G_N + sm]

ERR_TABLE_OVERFLOW = 4
ERR_BAD_EDGE = 5
ERR_REPLAY = 6  # SM-major run: some SM may stall, stop or pass max_cycles; `simulate` replays cycle-major

EV_WIDTH = 7  # [cycle, warp id, blk, off, mask, slot checksum, active]


from .reference.formation import slot_checksum  # noqa: E402,F401  (one definition, shared with the reference)


# ------------------------------------------------------------------------------------------------
# small helpers
# ------------------------------------------------------------------------------------------------
@inline_helper
def _sync(wf, pl, w, block_start):
    """Copy warp ``w``'s scheduling fields into its SM's pool view (after any change to its PC,
    thread count, state, READY or use), and move its threads in the majority counts."""
    j = wf[w, F_PIDX]
    if j < 0:
        return  # not in a pool (yet): `_pool_add` syncs it
    sm = wf[w, F_SM]
    pc = block_start[wf[w, F_BLK]] + wf[w, F_OFF]
    live = wf[w, F_USED] != 0 and wf[w, F_STATE] == 0
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


@inline_helper
def _pool_add(wf, pool, pool_n, pl, sm, w, block_start):
    """Append warp ``w`` (the youngest) to the pool of ``sm``."""
    j = pool_n[sm]
    pool[sm, j] = w
    pool_n[sm] = j + 1
    wf[w, F_PIDX] = j
    _sync(wf, pl, w, block_start)


@inline_helper
def _pool_remove(wf, pool, pool_n, pl, sm, w):
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


@inline_helper
def _ready(wf, wsl, w, W, reg_ready, tpc, cslot, block_start, src_reg, pl):
    """Warp ``w`` has a new slot array or PC: refresh its row cache and its READY.

    Row cache: ``wsl[w, W:W + F_NROW]`` lists the scoreboard rows of the warp's threads (slot
    order) and F_MASK its occupied slots, so that issuing and the in-block READY update
    (`_ready_rows`, the common case) touch only its threads, not every slot. Every change of a
    warp's slots is followed by this call (or by `_rows` for a warp that waits at a barrier).
    """
    _rows(wf, wsl, w, W, tpc, cslot)
    _ready_rows(wf, wsl, w, W, reg_ready, block_start, src_reg, pl, tpc)


@inline_helper
def _rows(wf, wsl, w, W, tpc, cslot):
    """Rebuild warp ``w``'s row cache and F_MASK from its slots (see `_ready`)."""
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


@inline_helper
def _ready_rows(wf, wsl, w, W, reg_ready, block_start, src_reg, pl, tpc):
    """READY of warp ``w``'s next instruction (not before F_NB, operands of all its threads) from
    its row cache (valid: its slots did not change since the last `_ready`). Register ``r`` of the
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
            _sum_store(wf, wsl, w, c, ep | r, rr)
        if rr > t_ready:
            t_ready = rr
    wf[w, F_READY] = t_ready
    _sync(wf, pl, w, block_start)


@inline_helper
def _sum_store(wf, wsl, w, c, tag, ready):
    """Summary entry ``c`` of warp ``w`` := (tag, ready); an entry of this epoch it evicts folds its
    cycle into F_LOOSE (its register has no entry any more)."""
    old = wsl[w, c]
    if old >> SUM_R_BITS == tag >> SUM_R_BITS and old != tag and wsl[w, c + 1] > wf[w, F_LOOSE]:
        wf[w, F_LOOSE] = wsl[w, c + 1]
    wsl[w, c] = tag
    wsl[w, c + 1] = ready
    if ready > wf[w, F_BOUND]:
        wf[w, F_BOUND] = ready


@inline_helper
def _new_warp(wf, wsl, w, g, blk, nb, cta):
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
    wf[w, F_STATE] = 0
    wf[w, F_BART] = 0
    wf[w, F_CTA] = cta
    wf[w, F_N] = 0
    wf[w, F_BOUND] = INF  # unknown registers: the creator lowers it when it knows better


@inline_helper
def _quarters(mask, W, sw, n_q):
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


@inline_helper
def _step(wf, wsl, w, W, pos, path, succ_ptr, succ_idx, g, now, nxt):
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


@inline_helper
def _exit_thread(t, tpc, cta_live, cta_arr, rel, g):
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


@inline_helper
def _first_succ(succ_idx, lo, e):
    """Is successor edge ``e`` the first edge of its block to target ``succ_idx[e]`` (brx duplicates)?"""
    for e2 in range(lo, e):
        if succ_idx[e2] == succ_idx[e]:
            return False
    return True


# ------------------------------------------------------------------------------------------------
# dwf / en-dwf: the warp pool
# ------------------------------------------------------------------------------------------------


@inline_helper
def _alloc(wf, free, free_n, sm):
    """A free warp record of ``sm`` (records are never short: a warp holds at least one thread)."""
    free_n[sm] -= 1
    return free[sm, free_n[sm]]


@inline_helper
def _release_warp(wf, free, free_n, sm, w):
    wf[w, F_USED] = 0
    free[sm, free_n[sm]] = w
    free_n[sm] += 1


@inline_helper
def _en_dwf_merge(male, f, mmask, fmask, wsl, W, sw):
    """en-DWF (seed 003 Appendix B) of the male group into warp ``f``, from the occupied-slot masks;
    False (and ``f`` untouched) when some lane cannot hold its threads. The kernel's form of
    `dwf._merge_into` (the public function and the reference model use that one; the differential
    tests compare them): a conflict of lane l needs a position of l that is a hole in both warps, so
    the merge succeeds exactly when every lane holds at most W / sw threads of the two warps together;
    then, lane by lane, the conflicts in quarter order take the holes in quarter order (what the
    Appendix's scan, first free other quarter for each conflict in turn, gives)."""
    n_q = W // sw  # (en-dwf needs sw to divide W: `check_config`)
    lane0 = np.int64(0)
    for q in range(n_q):
        lane0 |= np.int64(1) << (q * sw)
    for lane in range(sw):
        lb = lane0 << lane
        if popcount(mmask & lb) + popcount(fmask & lb) > n_q:
            return False
    full = np.int64(-1) if W == 64 else (np.int64(1) << W) - 1
    holes = ~(mmask | fmask) & full
    conf = mmask & fmask
    rest = mmask & ~fmask
    while conf != 0:
        s = trailing_zeros(conf)  # lowest slot first: within a lane, the lowest quarter first
        conf &= conf - 1
        h = trailing_zeros(holes & (lane0 << (s % sw)))
        holes &= ~(np.int64(1) << h)
        wsl[f, h] = male[s]
    while rest != 0:
        s = trailing_zeros(rest)
        rest &= rest - 1
        wsl[f, s] = male[s]
    return True


@inline_helper
def _place(enhanced, sm, male, mmask, s, now, exclude, bound, wf, wsl, pool, pool_n, W, sw, g, reg_ready, tpc,
           cslot, block_start, src_reg, pl):
    """Merge the male group (``mmask``: its occupied slots) into the forming warps at (s, 0), oldest
    first; returns threads left. ``bound``: F_BOUND of the warp the male threads come from. A forming
    warp's occupied slots are its F_MASK (valid: see `_ready`)."""
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
        if enhanced:
            # seed 003 Appendix B: the whole male fits when every conflict finds a hole of its lane
            if mmask & fmask == 0:  # no conflict: the union (what `_merge_into` returns then)
                ok = True
                for slot in range(W):
                    if male[slot] >= 0:
                        wsl[f, slot] = male[slot]
            else:
                ok = _en_dwf_merge(male, f, mmask, fmask, wsl, W, sw)
            if ok:
                wf[f, F_N] += left
                if now + 1 > wf[f, F_NB]:
                    wf[f, F_NB] = now + 1
                if bound > wf[f, F_BOUND]:
                    wf[f, F_BOUND] = bound
                _ready(wf, wsl, f, W, reg_ready, tpc, cslot, block_start, src_reg, pl)
                g[G_MERGES] += 1
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
            wf[f, F_N] += joined
            left -= joined
            if now + 1 > wf[f, F_NB]:
                wf[f, F_NB] = now + 1
            if bound > wf[f, F_BOUND]:
                wf[f, F_BOUND] = bound
            _ready(wf, wsl, f, W, reg_ready, tpc, cslot, block_start, src_reg, pl)
            g[G_MERGES] += 1
        if left == 0:
            return 0
    if any_forming:
        g[G_LANE_CONFLICTS] += left
    return left


@helper
def _dwf_finish(enhanced, hws, sm, w, now, wf, wsl, pool, pool_n, free, free_n, W, sw, pos, path, succ_ptr,
                succ_idx, exit_b, tpc, cta_live, cta_arr, rel, orig, male, sq, counts, order, nxt, g, reg_ready,
                cslot, block_start, src_reg, pl):
    err = _step(wf, wsl, w, W, pos, path, succ_ptr, succ_idx, g, now, nxt)
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
        if not _first_succ(succ_idx, lo, e):
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
                _exit_thread(orig[slot], tpc, cta_live, cta_arr, rel, g)
            continue
        for slot in range(W):
            male[slot] = orig[slot] if (mmask >> slot) & 1 else HOLE
        if hws:
            # seed 003 §4.4 step 1: squeeze the male warp before it meets the pool
            _squeeze_scratch(male, sq, sw, counts, order)
            mmask = np.int64(0)
            for slot in range(W):
                male[slot] = sq[slot]
                mmask |= np.int64(sq[slot] >= 0) << slot
        left = _place(enhanced, sm, male, mmask, s, now, w, bound, wf, wsl, pool, pool_n, W, sw, g, reg_ready, tpc,
                      cslot, block_start, src_reg, pl)
        if left == 0:
            continue
        if keep:
            nw = w
            wf[w, F_BLK] = s
            wf[w, F_OFF] = 0
            wf[w, F_NB] = now + 1
            keep = False
            if left == wf[w, F_N] and not hws:
                # the whole warp goes on together (no thread exited, left or merged): same slots,
                # so its row cache stays valid
                _ready_rows(wf, wsl, w, W, reg_ready, block_start, src_reg, pl, tpc)
                continue
        else:
            nw = _alloc(wf, free, free_n, sm)
            _new_warp(wf, wsl, nw, g, s, now + 1, -1)
            wf[nw, F_BOUND] = bound
            _pool_add(wf, pool, pool_n, pl, sm, nw, block_start)
        for slot in range(W):
            wsl[nw, slot] = male[slot]
        wf[nw, F_N] = left
        _ready(wf, wsl, nw, W, reg_ready, tpc, cslot, block_start, src_reg, pl)
    if keep:
        _pool_remove(wf, pool, pool_n, pl, sm, w)
        _release_warp(wf, free, free_n, sm, w)
    return 0


@helper
def _dwf_barrier(sm, w, now, wf, wsl, pool, pool_n, free, free_n, W, tpc, cta_arr, tmp, ctas, g, pl,
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
            part = _alloc(wf, free, free_n, sm)
            _new_warp(wf, wsl, part, g, wf[w, F_BLK], wf[w, F_NB], -1)
            wf[part, F_BOUND] = wf[w, F_BOUND]
            wf[part, F_OFF] = wf[w, F_OFF]
            _pool_add(wf, pool, pool_n, pl, sm, part, block_start)
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
        _rows(wf, wsl, part, W, tpc, cslot)  # its slots changed: a released part may go on whole
        wf[part, F_STATE] = 1
        wf[part, F_BART] = now
        wf[part, F_CTA] = cta
        _sync(wf, pl, part, block_start)
        cta_arr[cta] += n
    return n_ctas


# ------------------------------------------------------------------------------------------------
# tbc: one reconvergence stack per CTA
# ------------------------------------------------------------------------------------------------
@helper
def _tbc_clear(wf, base, wpc, pl):
    for i in range(wpc):
        w = base + i
        wf[w, F_USED] = 0
        pl[wf[w, F_SM], P_RDY, wf[w, F_PIDX]] = INF


@helper
def _tbc_activate(cs, base, cta, nb, wf, wsl, depth, ent_pc, ent_rpc, ent_nw, lay, wpc, W, pos, path, exit_b, g,
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
                    _new_warp(wf, wsl, base + i, g, ent_pc[cs, d], nb, cta)
                    wf[base + i, F_N] = n
                    wf[base + i, F_CS] = cs
                    wf[base + i, F_BASE] = base
                    _ready(wf, wsl, base + i, W, reg_ready, tpc, cslot, block_start, src_reg, pl)
                    i += 1
            if i > 0:
                return
        depth[cs] = d  # nothing left to run, or it is at its reconvergence point already


@helper
def _tbc_check_done(cs, base, cta, now, wf, wsl, depth, ent_pc, ent_rpc, ent_nw, lay, wpc, W, pos, path, exit_b,
                    g, reg_ready, tpc, cslot, block_start, src_reg, pl):
    for i in range(wpc):
        w = base + i
        if wf[w, F_USED] and wf[w, F_N] > 0 and wf[w, F_STATE] != 3:
            return
    _tbc_clear(wf, base, wpc, pl)
    depth[cs] -= 1
    _tbc_activate(cs, base, cta, now + 1, wf, wsl, depth, ent_pc, ent_rpc, ent_nw, lay, wpc, W, pos, path, exit_b,
                  g, reg_ready, tpc, cslot, block_start, src_reg, pl)


@helper
def _tbc_finish(w, now, wf, wsl, W, wpc, pos, path, succ_ptr, succ_idx, exit_b, ipdom, tpc, cta_live, cta_arr, rel,
                depth, ent_pc,
                ent_rpc, ent_nw, lay, cnt, nxt, g, reg_ready, cslot, block_start, src_reg, pl, WS):
    err = _step(wf, wsl, w, W, pos, path, succ_ptr, succ_idx, g, now, nxt)
    if err:
        return err
    b = wf[w, F_BLK]
    for s in range(W):
        t = wsl[w, s]
        if t >= 0 and nxt[s] == exit_b:
            _exit_thread(t, tpc, cta_live, cta_arr, rel, g)
            wsl[w, s] = HOLE
            wf[w, F_N] -= 1
    cta = wf[w, F_CTA]
    cs = wf[w, F_CS]
    base = wf[w, F_BASE]
    top = depth[cs] - 1
    lo = succ_ptr[b]
    n_targets = 0
    for e in range(lo, succ_ptr[b + 1]):
        if _first_succ(succ_idx, lo, e):
            n_targets += 1
    if n_targets > 1:
        wf[w, F_STATE] = 2  # TBC: the whole entry synchronises at a potentially divergent branch
        if wf[w, F_N] == 0:
            wf[w, F_USED] = 0
        _sync(wf, pl, w, block_start)
        return _tbc_resolve(cs, base, cta, b, now, wf, wsl, W, wpc, pos, path, succ_ptr, succ_idx, exit_b, ipdom,
                            depth, ent_pc, ent_rpc, ent_nw, lay, cnt, g, reg_ready, tpc, cslot, block_start, src_reg, pl)
    s = succ_idx[lo]
    if wf[w, F_N] == 0:
        wf[w, F_USED] = 0
        _sync(wf, pl, w, block_start)
    elif s == ent_rpc[cs, top]:
        wf[w, F_BLK] = s
        wf[w, F_OFF] = 0
        wf[w, F_STATE] = 3
        _sync(wf, pl, w, block_start)
    else:
        wf[w, F_BLK] = s
        wf[w, F_OFF] = 0
        wf[w, F_NB] = now + 1
        _ready(wf, wsl, w, W, reg_ready, tpc, cslot, block_start, src_reg, pl)
    _tbc_check_done(cs, base, cta, now, wf, wsl, depth, ent_pc, ent_rpc, ent_nw, lay, wpc, W, pos, path, exit_b, g,
                    reg_ready, tpc, cslot, block_start, src_reg, pl)
    return 0


@helper
def _tbc_resolve(cs, base, cta, b, now, wf, wsl, W, wpc, pos, path, succ_ptr, succ_idx, exit_b, ipdom, depth, ent_pc,
                 ent_rpc, ent_nw, lay, cnt, g, reg_ready, tpc, cslot, block_start, src_reg, pl):
    """Once every warp of the top entry waits at the branch: go on together, or compact per target."""
    for i in range(wpc):
        w = base + i
        if wf[w, F_USED] and wf[w, F_N] > 0 and wf[w, F_STATE] != 2:
            return 0
    top = depth[cs] - 1
    lo = succ_ptr[b]
    n_groups = 0
    only = -1
    for e in range(lo, succ_ptr[b + 1]):
        s = succ_idx[e]
        if s == exit_b or not _first_succ(succ_idx, lo, e):
            continue
        found = False
        for i in range(wpc):
            w = base + i
            if wf[w, F_USED] and wf[w, F_N] > 0:
                for sl in range(W):
                    t = wsl[w, sl]
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
            w = base + i
            if not wf[w, F_USED]:
                continue
            if wf[w, F_N] == 0:
                wf[w, F_USED] = 0
                _sync(wf, pl, w, block_start)
            elif only == ent_rpc[cs, top]:
                wf[w, F_BLK] = only
                wf[w, F_OFF] = 0
                wf[w, F_STATE] = 3
                _sync(wf, pl, w, block_start)
            else:
                wf[w, F_BLK] = only
                wf[w, F_OFF] = 0
                wf[w, F_STATE] = 0
                wf[w, F_NB] = now + 1
                _ready(wf, wsl, w, W, reg_ready, tpc, cslot, block_start, src_reg, pl)
        _tbc_check_done(cs, base, cta, now, wf, wsl, depth, ent_pc, ent_rpc, ent_nw, lay, wpc, W, pos, path, exit_b,
                        g, reg_ready, tpc, cslot, block_start, src_reg, pl)
        return 0
    r = ipdom[b]
    if r == ent_rpc[cs, top]:
        # the entry would resume at its own RPC and pop at once: the new entries replace it
        depth[cs] = top
    else:
        # the entry waits at the IPDOM; its current warps are the layout restored there
        ent_pc[cs, top] = r
        k = 0
        for i in range(wpc):
            w = base + i
            if wf[w, F_USED] and wf[w, F_N] > 0:
                for sl in range(W):
                    lay[cs, top, k, sl] = wsl[w, sl]
                k += 1
        ent_nw[cs, top] = k
    for e in range(lo, succ_ptr[b + 1]):
        s = succ_idx[e]
        if s == exit_b or s == r or not _first_succ(succ_idx, lo, e):
            continue
        # lane-aware compaction: the k-th thread with home slot sl (warp order) goes to new warp k
        for sl in range(W):
            cnt[sl] = 0
        nw = 0
        d = depth[cs]
        n_new = 0
        for i in range(wpc):
            w = base + i
            if wf[w, F_USED] and wf[w, F_N] > 0:
                for sl in range(W):
                    t = wsl[w, sl]
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
            w = base + i
            if not (wf[w, F_USED] and wf[w, F_N] > 0):
                continue
            for sl in range(W):
                t = wsl[w, sl]
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
    _tbc_clear(wf, base, wpc, pl)
    _tbc_activate(cs, base, cta, now + 1, wf, wsl, depth, ent_pc, ent_rpc, ent_nw, lay, wpc, W, pos, path, exit_b, g,
                  reg_ready, tpc, cslot, block_start, src_reg, pl)
    return 0


# ------------------------------------------------------------------------------------------------
# issue, barriers, scheduling
# ------------------------------------------------------------------------------------------------
@helper
def _finish(mech, hws, sm, w, now, wf, wsl, pool, pool_n, free, free_n, W, sw, wpc, WS, pos, path, succ_ptr,
            succ_idx, exit_b, ipdom, tpc, cta_live, cta_arr, depth, ent_pc, ent_rpc, ent_nw, lay, scr, sq_i, g, reg_ready,
            cslot, block_start, src_reg, pl):
    if mech == TBC:
        return _tbc_finish(w, now, wf, wsl, W, wpc, pos, path, succ_ptr, succ_idx, exit_b, ipdom, tpc, cta_live,
                           cta_arr, sq_i[3], depth, ent_pc, ent_rpc, ent_nw, lay, scr[0], scr[4], g, reg_ready, cslot, block_start, src_reg, pl, WS)
    # one quarter (simd_width >= warp_size) leaves no other position in a lane: en-DWF is DWF there
    enhanced = (mech == EN_DWF) & (sw < W)
    return _dwf_finish(enhanced, hws, sm, w, now, wf, wsl, pool, pool_n, free, free_n, W, sw, pos, path,
                       succ_ptr, succ_idx, exit_b, tpc, cta_live, cta_arr, sq_i[3], scr[0], scr[1], scr[3], sq_i[0], sq_i[1], scr[4], g,
                       reg_ready, cslot, block_start, src_reg, pl)


@helper
def _release(mech, hws, sm, cta, now, wf, wsl, pool, pool_n, free, free_n, W, sw, wpc, WS, pos, path, succ_ptr,
             succ_idx, exit_b, ipdom, tpc, cta_live, cta_arr, depth, ent_pc, ent_rpc, ent_nw, lay, scr, sq_i, g,
             reg_ready, cslot, block_start, src_reg, pl):
    """bar.sync: once every live thread of the CTA has arrived, its waiting warps move on (oldest first)."""
    NW = wf.shape[0] // (pool.shape[0])
    while cta_arr[cta] > 0 and cta_arr[cta] == cta_live[cta]:
        cta_arr[cta] = 0
        while True:
            best = -1
            if mech == TBC:  # the CTA's warp slots (few)
                for j in range(NW):
                    w = sm * NW + j
                    if wf[w, F_USED] and wf[w, F_STATE] == 1 and wf[w, F_CTA] == cta:
                        if best < 0 or wf[w, F_AGE] < wf[best, F_AGE]:
                            best = w
            else:  # dwf: waiting warps stay in the pool, whose order is age order: the first is the oldest
                for j in range(pool_n[sm]):  # (not every record of the SM: there are tpc * CTAs of them)
                    w = pool[sm, j]
                    if wf[w, F_STATE] == 1 and wf[w, F_CTA] == cta:
                        best = w
                        break
            if best < 0:
                break
            wf[best, F_STATE] = 0
            g[G_BARWAIT] += now - wf[best, F_BART]
            wf[best, F_NB] = now + 1
            err = _finish(mech, hws, sm, best, now, wf, wsl, pool, pool_n, free, free_n, W, sw, wpc, WS, pos, path,
                          succ_ptr, succ_idx, exit_b, ipdom, tpc, cta_live, cta_arr, depth, ent_pc, ent_rpc, ent_nw, lay, scr,
                          sq_i, g, reg_ready, cslot, block_start, src_reg, pl)
            if err:
                return err
    return 0


@inline_helper
def _issue(hws, w, now, wf, wsl, W, sw, n_q, g, reg_ready, tpc, block_start, op_class, dst_reg, lat, occ_hist,
           q_hist, ev):
    """Issue warp ``w``'s next instruction (statistics, events, its destination register); returns
    its SIMD occupancy in cycles. The caller moves the warp on (`_ready` or `_block_end`): the
    common case, an instruction inside a block, then needs no helper with the whole state."""
    active = wf[w, F_N]
    q_act = wf[w, F_QACT]
    if q_act < 0:  # (its slots changed since its last issue)
        q_act = _quarters(wf[w, F_MASK], W, sw, n_q)
        wf[w, F_QACT] = q_act
    width = q_act if hws else n_q  # seed 003 §4.2: only the active quarter-warps go down the pipe
    b = wf[w, F_BLK]
    off = wf[w, F_OFF]
    g[G_WARP_INSTS] += 1
    g[G_THREAD_INSTS] += active
    occ_hist[active] += 1
    q_hist[q_act] += 1
    if ev.shape[0] > 0:
        n = g[G_NEVENTS]
        if n >= ev.shape[0]:
            g[G_EV_OVERFLOW] = 1
        else:
            mask = np.int64(0)
            csum = np.int64(0)
            for s in range(W):
                t = wsl[w, s]
                if t >= 0:
                    mask |= np.int64(1) << s
                    csum += (t + 1) * (s + 1)
            ev[n, 0] = now
            ev[n, 1] = wf[w, F_ID]
            ev[n, 2] = b
            ev[n, 3] = off
            ev[n, 4] = mask
            ev[n, 5] = csum
            ev[n, 6] = active
            g[G_NEVENTS] = n + 1
    instr = block_start[b] + off
    latency = lat[op_class[instr]]
    r = dst_reg[instr]
    if r >= 0:
        off = r * tpc
        run = wf[w, F_RUN]
        if run >= 0:
            reg_ready[run + off:run + off + wf[w, F_NROW]] = now + latency
        else:
            for k in range(W, W + wf[w, F_NROW]):  # the row cache (see `_ready`)
                reg_ready[wsl[w, k] + off] = now + latency
        c = 2 * W + 2 * (r & (NSUM - 1))  # every thread of the warp: the summary is exact (see NSUM)
        _sum_store(wf, wsl, w, c, (wf[w, F_EP] << SUM_R_BITS) | r, now + latency)
    done_t = now + (latency if latency > width else width)
    if done_t > g[G_CYCLES]:
        g[G_CYCLES] = done_t
    wf[w, F_NB] = now + 1
    return width


@helper
def _block_end(mech, hws, sm, w, now, wf, wsl, pool, pool_n, free, free_n, W, sw, wpc, WS, pos, path, succ_ptr,
               succ_idx, exit_b, ipdom, tpc, cta_live, cta_arr, depth, ent_pc, ent_rpc, ent_nw, lay, scr, sq_i, g,
               reg_ready, cslot, block_start, src_reg, pl):
    """Warp ``w`` issued the last instruction of its block, a bar.sync: wait there, and release the
    barriers that completes (then those that exits completed). Returns an error code (0: none).
    Blocks without a barrier do not come here: the cycle loop calls `_dwf_finish` / `_tbc_finish`
    directly."""
    if mech == TBC:
        cta = wf[w, F_CTA]
        wf[w, F_STATE] = 1
        wf[w, F_BART] = now
        _sync(wf, pl, w, block_start)
        cta_arr[cta] += wf[w, F_N]
        err = _release(mech, hws, sm, cta, now, wf, wsl, pool, pool_n, free, free_n, W, sw, wpc, WS, pos, path,
                       succ_ptr, succ_idx, exit_b, ipdom, tpc, cta_live, cta_arr, depth, ent_pc, ent_rpc, ent_nw,
                       lay, scr, sq_i, g, reg_ready, cslot, block_start, src_reg, pl)
    else:
        ctas = sq_i[2]
        n_c = _dwf_barrier(sm, w, now, wf, wsl, pool, pool_n, free, free_n, W, tpc, cta_arr, scr[0], ctas, g, pl,
                           block_start, cslot)
        err = 0
        for ci in range(n_c):  # release in CTA order
            cta = ctas[ci]
            if cta_arr[cta] > 0 and cta_arr[cta] == cta_live[cta]:
                err = _release(mech, hws, sm, cta, now, wf, wsl, pool, pool_n, free, free_n, W, sw, wpc, WS, pos,
                               path, succ_ptr, succ_idx, exit_b, ipdom, tpc, cta_live, cta_arr, depth, ent_pc,
                               ent_rpc, ent_nw, lay, scr, sq_i, g, reg_ready, cslot, block_start, src_reg, pl)
                if err:
                    break
    if err or g[G_NREL] == 0:
        return err
    return _drain(mech, hws, sm, now, wf, wsl, pool, pool_n, free, free_n, W, sw, wpc, WS, pos, path, succ_ptr,
                  succ_idx, exit_b, ipdom, tpc, cta_live, cta_arr, depth, ent_pc, ent_rpc, ent_nw, lay, scr, sq_i, g,
                  reg_ready, cslot, block_start, src_reg, pl)


@helper
def _drain(mech, hws, sm, now, wf, wsl, pool, pool_n, free, free_n, W, sw, wpc, WS, pos, path, succ_ptr, succ_idx,
           exit_b, ipdom, tpc, cta_live, cta_arr, depth, ent_pc, ent_rpc, ent_nw, lay, scr, sq_i, g, reg_ready, cslot,
           block_start, src_reg, pl):
    """Release the barriers that exits completed, first queued first (releases may queue more)."""
    rel = sq_i[3]
    while g[G_NREL] > 0:
        cta = rel[0]
        for i in range(g[G_NREL] - 1):
            rel[i] = rel[i + 1]
        g[G_NREL] -= 1
        err = _release(mech, hws, sm, cta, now, wf, wsl, pool, pool_n, free, free_n, W, sw, wpc, WS, pos, path,
                       succ_ptr, succ_idx, exit_b, ipdom, tpc, cta_live, cta_arr, depth, ent_pc, ent_rpc, ent_nw, lay,
                       scr, sq_i, g, reg_ready, cslot, block_start, src_reg, pl)
        if err:
            return err
    return 0


@inline_helper
def _simd_idle(simd_free, sm, n_sched, now):
    for k in range(n_sched):
        if simd_free[sm, k] > now:
            return False
    return True


@inline_helper
def _pick_dwf(majority, gto, sm, now, wf, pool, pool_n, last_age, pl):
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


@inline_helper
def _pick_tbc(gto, sm, k, now, wf, WS, n_sched, rr, last, pl):
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


@helper
def _dispatch(mech, sm, c, cta, now, W, wpc, WS, tpc, cta_lim, path_ptr, path, exit_b, wf, wsl, pos, cta_live, cslot,
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
            w = _alloc(wf, free, free_n, sm)
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
                _new_warp(wf, wsl, w, g, 0, now, -1)
                wf[w, F_BOUND] = 0  # a dispatched CTA's registers are all ready (its block is cleared)
                wf[w, F_N] = n
                _pool_add(wf, pool, pool_n, pl, sm, w, block_start)
                _ready(wf, wsl, w, W, reg_ready, tpc, cslot, block_start, src_reg, pl)
            else:
                free_n[sm] += 1  # give the record back
    cta_live[cta] = live_total
    if mech == TBC:
        if 1 > g[G_MAX_STACK]:
            g[G_MAX_STACK] = 1
        _tbc_activate(cs, sm * WS + c * wpc, cta, now, wf, wsl, depth, ent_pc, ent_rpc, ent_nw, lay, wpc, W, pos,
                      path, exit_b, g, reg_ready, tpc, cslot, block_start, src_reg, pl)


@jit
def _simulate(mech, hws, sync, sm_major, majority, gto, W, sw, n_sms, n_sched, cta_lim, tpc, n_ctas, reg_ready,
              wsl_buf,
              max_cycles,
              no_progress, max_depth, block_start, succ_ptr, succ_idx, ipdom, has_bar, op_class, dst_reg, src_reg,
              lat, path_ptr, path, exit_b, ev, occ_hist, q_hist, g):
    """Replay every thread's path under dwf / en-dwf / tbc on ``n_sms`` SMs; fills ``g`` and histograms.

    ``reg_ready`` is the per-thread scoreboard (int32 or int64: `_scoreboard_dtype`), all zero:
    ready cycle of register r of CTA-local
    thread lt of CTA residency slot cs at ``cs * n_regs * tpc + r * tpc + lt``. Slot-major, so that
    a dispatch clears one contiguous block, and allocated by the caller with ``np.zeros`` (calloc:
    pages nobody touches are never faulted in; PTX kernels have hundreds of virtual registers, and
    zeroing the whole table took up to 40% of a short run). Big tables below are uninitialised for
    the same reason: every row is written before it is read (warp slots when a record is taken,
    TBC layouts when an entry is pushed)."""
    wpc = (tpc + W - 1) // W
    WS = cta_lim * wpc  # tbc warp slots per SM
    n_q = (W + sw - 1) // sw
    NW = WS if mech == TBC else cta_lim * tpc + 1  # dwf: every warp holds >= 1 thread
    wf = np.zeros((n_sms * NW, F_NF), np.int64)
    # slots, the row cache (`_ready`), the register summary (NSUM; zero: no entry matches an epoch >= 1),
    # in a zeroed buffer from the caller (calloc: records never taken are never touched)
    wsl = wsl_buf[:n_sms * NW * (2 * W + 2 * NSUM)].reshape((n_sms * NW, 2 * W + 2 * NSUM))
    pool = np.zeros((n_sms, NW), np.int64)
    pool_n = np.zeros(n_sms, np.int64)
    free = np.zeros((n_sms, NW), np.int64)
    free_n = np.zeros(n_sms, np.int64)
    for sm in range(n_sms):
        for j in range(NW):
            free[sm, j] = sm * NW + NW - 1 - j  # lowest record first
        free_n[sm] = NW
    n_pc = block_start[-1] + 1
    km = 1
    while km < max(NW, n_pc):
        km *= 2  # a power of two: the majority pick takes its key apart with a mask
    pl = np.zeros((n_sms, P_NF, km), np.int64)
    pl[:, P_RDY, :] = INF
    for w in range(n_sms * NW):
        wf[w, F_SM] = w // NW
        wf[w, F_BOUND] = INF  # (tbc keeps it: its regroupings always gather)
        wf[w, F_LOOSE] = INF
        wf[w, F_CPC] = -1
        # tbc: warp slot j of an SM is column j of its pool view, all WS columns scanned
        wf[w, F_PIDX] = w % NW if mech == TBC else -1
    if mech == TBC:
        pool_n[:] = NW
    n_cs = n_sms * cta_lim
    D = max_depth if mech == TBC else 1
    depth = np.zeros(n_cs, np.int64)
    ent_pc = np.zeros((n_cs, D), np.int64)
    ent_rpc = np.zeros((n_cs, D), np.int64)
    ent_nw = np.zeros((n_cs, D), np.int64)
    lay = np.empty((n_cs if mech == TBC else 1, D, wpc, W), np.int64)
    sb_used = np.zeros(n_cs, np.bool_)  # CTA slots whose scoreboard block was ever used
    cslot = np.zeros(path_ptr.shape[0] - 1, np.int64)  # thread -> scoreboard row
    pos = np.zeros(path_ptr.shape[0] - 1, np.int64)
    cta_live = np.zeros(n_ctas, np.int64)
    cta_arr = np.zeros(n_ctas, np.int64)
    res_cta = np.full((n_sms, cta_lim), -1, np.int64)
    simd_free = np.zeros((n_sms, n_sched), np.int64)
    rr = np.full((n_sms, n_sched), -1, np.int64)
    last = np.full((n_sms, n_sched), -1, np.int64)
    last_age = np.full(n_sms, -1, np.int64)
    sm_next = np.zeros(n_sms, np.int64)
    sm_res = np.zeros(n_sms, np.int64)
    smr = np.zeros(n_sms, np.int64)  # cached earliest READY of the SM's issuable warps
    dirty = np.ones(n_sms, np.bool_)
    chk = np.ones(n_sms, np.bool_)  # look for finished CTAs at the next visit (after a dispatch)
    acc = np.zeros(n_sms, np.int64)  # idle cycles are counted up to here
    scr = np.zeros((5, W), np.int64)  # orig, male, (unused), squeezed, next block per slot
    sq_i = np.zeros((4, max(W, n_q, n_cs) + 1), np.int64)  # squeeze counts/order, CTA list, release queue

    iss_sm = np.zeros(n_sms * n_sched, np.int64)  # hws_sync_sms: this cycle's issues
    iss_k = np.zeros(n_sms * n_sched, np.int64)
    iss_lat = np.zeros(n_sms * n_sched, np.int64)
    sm_lp = np.zeros(n_sms, np.int64)  # each SM's last issue or CTA completion
    stop_t = np.full(n_sms, INF, np.int64)  # SM-major: the cycle an SM stopped at (INF: not stopped)
    pend = np.zeros((n_sms, cta_lim), np.bool_)  # freed CTA slots waiting for the next CTAs

    _run(mech, hws, sync, sm_major, majority, gto, W, sw, n_sms, n_sched, cta_lim, tpc, n_ctas, max_cycles,
         no_progress, block_start, succ_ptr, succ_idx, ipdom, has_bar, op_class, dst_reg, src_reg, lat, path_ptr,
         path, exit_b, ev, occ_hist, q_hist, g, wpc, WS, n_q, NW, wf, wsl, pool, pool_n, free, free_n,
         depth, ent_pc, ent_rpc, ent_nw, lay, reg_ready, cslot, pos, cta_live, cta_arr, res_cta,
         simd_free, rr, last, last_age, sm_next, sm_res, smr, dirty, scr, sq_i, iss_sm, iss_k,
         iss_lat, pl, chk, acc, sb_used, sm_lp, stop_t, pend)


@helper
def _run(mech, hws, sync, sm_major, majority, gto, W, sw, n_sms, n_sched, cta_lim, tpc, n_ctas, max_cycles,
         no_progress, block_start, succ_ptr, succ_idx, ipdom, has_bar, op_class, dst_reg, src_reg, lat, path_ptr,
         path, exit_b, ev, occ_hist, q_hist, g, wpc, WS, n_q, NW, wf, wsl, pool, pool_n, free, free_n,
         depth, ent_pc, ent_rpc, ent_nw, lay, reg_ready, cslot, pos, cta_live, cta_arr, res_cta,
         simd_free, rr, last, last_age, sm_next, sm_res, smr, dirty, scr, sq_i, iss_sm, iss_k,
         iss_lat, pl, chk, acc, sb_used, sm_lp, stop_t, pend):
    """The visit loop (NRT-free: it never allocates, so its helper calls cost no refcounting).

    A visit is one SM at one cycle: issue, find finished CTAs, hand their slots new CTAs, compute
    the SM's next visit. SMs share nothing but the queue of CTAs waiting for a slot, so the order
    of visits is free as long as CTAs are handed out in (cycle, SM) order of the slots freed:

    - cycle-major (``sm_major`` false): every SM's visits of cycle t before any of cycle t + 1, SMs
      in index order. Needed by ``sync`` (hws_sync_sms couples the SMs every cycle) and for the
      errors, whose rules are global (the replay of an SM-major run that raised ERR_REPLAY).
    - SM-major: one SM runs alone, visit after visit, until it frees a CTA slot while CTAs still
      wait; it stops there. When every SM has stopped (or finished), the one that stopped first
      (lowest cycle, then lowest index) gets the waiting CTAs and runs on. No other SM can free a
      slot earlier, so each CTA goes where the cycle-major loop sends it, and every visit does what
      it does there. One SM's warps, pool and scoreboard stay in cache for thousands of cycles
      instead of being evicted by the other SMs between two of its issues (docs/formation.md).
      An SM that could stall for good, stop for ``no_progress`` cycles or pass ``max_cycles``
      ends the run with ERR_REPLAY: which error the whole machine reports first, and at which
      cycle, is decided by the cycle-major replay.
    """

    next_cta = 0
    for sm in range(n_sms):
        for c in range(cta_lim):
            if next_cta < n_ctas:
                _dispatch(mech, sm, c, next_cta, 0, W, wpc, WS, tpc, cta_lim, path_ptr, path, exit_b, wf, wsl, pos,
                          cta_live, cslot, reg_ready, sb_used, pool, pool_n, free, free_n, depth, ent_pc, ent_rpc,
                          ent_nw, lay, g, block_start, src_reg, pl)
                res_cta[sm, c] = next_cta
                sm_res[sm] += 1
                next_cta += 1
    done = 0
    now = 0
    last_progress = 0
    n_iss = 0  # sync: this cycle's issues
    max_w = 0
    sm = -1
    while True:
        # ---- the next visit: (sm, now); `resume`: the SM stopped at `now` and gets its CTAs
        if sm_major:
            sm, now, resume = sm_major_next(sm, sm_res, stop_t, sm_next)
            if sm < 0:
                if done < n_ctas:
                    g[G_ERR] = ERR_REPLAY  # (an SM left with CTAs and no next visit)
                return
        else:
            nxt = cycle_major_next(sm_res, sm_next)
            if nxt < 0 or sm_next[nxt] > now:
                # every visit of cycle `now` is done
                if sync:
                    # seed 003 §4.2 step 3 (the thesis simulator): every warp issued in this cycle, on
                    # any SM, takes the largest warp size among them
                    for j in range(n_iss):
                        simd_free[iss_sm[j], iss_k[j]] = now + max_w
                        done_t = now + (iss_lat[j] if iss_lat[j] > max_w else max_w)
                        if done_t > g[G_CYCLES]:
                            g[G_CYCLES] = done_t
                    n_iss = 0
                    max_w = 0
                if done >= n_ctas:
                    return
                nxt_t = sm_next[nxt] if nxt >= 0 else INF
                err, err_cycle = cycle_major_error(nxt_t, now, last_progress, no_progress, max_cycles)
                if err:
                    g[G_ERR] = err
                    g[G_ERR_CYCLE] = err_cycle
                    return
                now = nxt_t  # skipped cycles: nothing issues anywhere (idle cycles are counted at the next visit)
            sm = nxt
            resume = False
        n_pend = 1 if resume else 0  # CTA slots of this SM freed in this visit (a resume: some)

        if not resume:
            # idle cycles since this SM's last visit (the core's definition: no issue and every SIMD
            # unit drained), counted now rather than cycle by cycle: its units change only when it
            # issues, so they are idle from the cycle the last one drains
            busy_until = acc[sm]
            for k in range(n_sched):
                if simd_free[sm, k] > busy_until:
                    busy_until = simd_free[sm, k]
            if now > busy_until:
                g[G_IDLE] += now - busy_until
            acc[sm] = now + 1
            issued_sm = False
            exits = g[G_EXITS]
            for k in range(n_sched):
                if simd_free[sm, k] > now:
                    continue
                if mech == TBC:
                    w = _pick_tbc(gto, sm, k, now, wf, WS, n_sched, rr, last, pl)
                else:
                    w = _pick_dwf(majority, gto, sm, now, wf, pool, pool_n, last_age, pl)
                if w < 0:
                    continue
                latency = lat[op_class[block_start[wf[w, F_BLK]] + wf[w, F_OFF]]]
                width = _issue(hws, w, now, wf, wsl, W, sw, n_q, g, reg_ready, tpc, block_start, op_class, dst_reg,
                               lat, occ_hist, q_hist, ev)
                b = wf[w, F_BLK]
                off = wf[w, F_OFF]
                if off + 1 < block_start[b + 1] - block_start[b]:
                    wf[w, F_OFF] = off + 1
                    _ready_rows(wf, wsl, w, W, reg_ready, block_start, src_reg, pl, tpc)  # same threads
                elif not has_bar[b]:
                    # a block end without a barrier: the mechanism's finish called directly (one
                    # whole-state call instead of two through `_block_end`, which handles barriers)
                    if mech == TBC:
                        err = _tbc_finish(w, now, wf, wsl, W, wpc, pos, path, succ_ptr, succ_idx, exit_b, ipdom, tpc,
                                          cta_live, cta_arr, sq_i[3], depth, ent_pc, ent_rpc, ent_nw, lay, scr[0],
                                          scr[4], g, reg_ready, cslot, block_start, src_reg, pl, WS)
                    else:
                        err = _dwf_finish((mech == EN_DWF) & (sw < W), hws, sm, w, now, wf, wsl, pool, pool_n, free,
                                          free_n, W, sw, pos, path, succ_ptr, succ_idx, exit_b, tpc, cta_live,
                                          cta_arr, sq_i[3], scr[0], scr[1], scr[3], sq_i[0], sq_i[1], scr[4],
                                          g, reg_ready, cslot, block_start, src_reg, pl)
                    if err or (g[G_NREL] > 0 and _drain(mech, hws, sm, now, wf, wsl, pool, pool_n, free, free_n, W,
                                                        sw, wpc, WS, pos, path, succ_ptr, succ_idx, exit_b, ipdom,
                                                        tpc, cta_live, cta_arr, depth, ent_pc, ent_rpc, ent_nw, lay,
                                                        scr, sq_i, g, reg_ready, cslot, block_start, src_reg, pl)):
                        return
                elif _block_end(mech, hws, sm, w, now, wf, wsl, pool, pool_n, free, free_n, W, sw, wpc, WS, pos, path,
                                succ_ptr, succ_idx, exit_b, ipdom, tpc, cta_live, cta_arr, depth, ent_pc, ent_rpc,
                                ent_nw, lay, scr, sq_i, g, reg_ready, cslot, block_start, src_reg, pl):
                    return
                issued_sm = True
                simd_free[sm, k] = now + width
                if sync:
                    iss_sm[n_iss] = sm
                    iss_k[n_iss] = k
                    iss_lat[n_iss] = latency
                    n_iss += 1
                    if width > max_w:
                        max_w = width
            # a resident CTA finishes when its last thread exits (or at once if none ever runs); its
            # slot waits in `pend` for the next CTA
            for c in range(cta_lim if (g[G_EXITS] != exits or chk[sm]) else 0):
                if c == 0:
                    chk[sm] = False
                cta = res_cta[sm, c]
                if cta >= 0 and cta_live[cta] == 0:
                    if mech == TBC:
                        depth[sm * cta_lim + c] = 0
                        _tbc_clear(wf, sm * WS + c * wpc, wpc, pl)
                    res_cta[sm, c] = -1
                    sm_res[sm] -= 1
                    done += 1
                    last_progress = now
                    sm_lp[sm] = now
                    pend[sm, c] = True
                    n_pend += 1
            if issued_sm:
                last_progress = now
                sm_lp[sm] = now
                dirty[sm] = True  # (its warps changed: rescan below)
            elif _simd_idle(simd_free, sm, n_sched, now):
                g[G_IDLE] += 1  # the core's definition: no issue and every SIMD unit drained
            if n_pend > 0 and sm_major and next_cta < n_ctas:
                stop_t[sm] = now  # which CTAs it gets depends on the SMs not run this far yet
                continue

        # ---- freed slots take the waiting CTAs, in slot order
        for c in range(cta_lim if n_pend > 0 else 0):
            if pend[sm, c]:
                pend[sm, c] = False
                if next_cta < n_ctas:
                    _dispatch(mech, sm, c, next_cta, now + 1, W, wpc, WS, tpc, cta_lim, path_ptr, path, exit_b,
                              wf, wsl, pos, cta_live, cslot, reg_ready, sb_used, pool, pool_n, free, free_n, depth,
                              ent_pc, ent_rpc, ent_nw, lay, g, block_start, src_reg, pl)
                    res_cta[sm, c] = next_cta
                    sm_res[sm] += 1
                    next_cta += 1
                    dirty[sm] = True
                    chk[sm] = True

        # ---- the next cycle this SM can issue: a SIMD unit is free and some warp is ready (only its
        # own issues and new CTAs change its warps, so nothing can happen here before that cycle)
        if dirty[sm]:
            # warps change only when this SM issues or gets a new CTA: rescan only then
            dirty[sm] = False
            min_ready = INF
            rdy = pl[sm, P_RDY]  # the pool view: INF for warps that cannot issue
            if mech == TBC:
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
        if sm_major and sm_res[sm] > 0 and (nt >= INF or nt - sm_lp[sm] > no_progress or nt > max_cycles):
            # The SM alone cannot tell what the machine reports (its last progress is no later than
            # the machine's, so this catches every no-progress error, and more)
            g[G_ERR] = ERR_REPLAY
            return


# ------------------------------------------------------------------------------------------------
# Python wrapper
# ------------------------------------------------------------------------------------------------
MAX_EVENTS = 2_000_000
_CODES = {"dwf": DWF, "en-dwf": EN_DWF, "tbc": TBC}


def simulate(trace, config, *, events: list | None = None, sm_major: bool = True):
    """``simt_fast.sim.simulate`` for dwf, en-dwf and tbc (called through it; same contract).

    ``sm_major=False`` forces the cycle-major visit order (tests compare the two; see `_run`)."""
    from . import SimulationError, latencies
    from .reference.formation import cta_limit, check_config
    from .stats import Stats

    check_config(config)
    if config.mechanism not in _CODES:
        raise ValueError(f"formation kernel does not simulate '{config.mechanism}'")
    W = config.warp_size
    tpc = trace.threads_per_cta
    cta_lim = cta_limit(config, tpc)
    n_regs = int(max(np.max(trace.dst_reg, initial=-1), np.max(trace.src_reg, initial=-1))) + 1
    if n_regs > 1 << SUM_R_BITS:
        raise ValueError(f"trace uses {n_regs} registers; the formation kernel supports at most {1 << SUM_R_BITS}")
    succ_ptr = np.asarray(trace.succ_ptr, np.int64)
    max_succ = int(np.max(np.diff(succ_ptr), initial=1))
    max_depth = int(min(trace.n_blocks * max(1, max_succ) + 2, 512))
    n_sms = config.n_sms
    shape = (W, config.simd_width, n_sms, config.n_schedulers, cta_lim, tpc, trace.n_ctas)
    tables = (
        config.max_cycles, config.no_progress_cycles, max_depth,
        np.asarray(trace.block_start, np.int64), succ_ptr, np.asarray(trace.succ_idx, np.int64),
        np.asarray(trace.ipdom, np.int64), np.asarray(trace.has_barrier, np.bool_),
        np.asarray(trace.op_class, np.int64), np.asarray(trace.dst_reg, np.int64),
        np.asarray(trace.src_reg, np.int64).reshape(-1, 3), latencies(config),
        np.asarray(trace.path_ptr, np.int64), np.asarray(trace.path, np.int32), trace.n_blocks - 1,
    )
    sync = bool(config.hws_sync_sms)
    policy = config.effective_issue_policy
    for order in ((True, False) if sm_major and not sync else (False,)):
        ev = np.zeros((MAX_EVENTS if events is not None else 0, EV_WIDTH), np.int64)
        g = np.zeros(G_N + n_sms, np.int64)
        occ_hist = np.zeros(W + 1, np.int64)
        q_hist = np.zeros(config.n_quarters + 1, np.int64)
        _simulate(
            _CODES[config.mechanism], bool(config.hws), sync, order, policy == "majority", policy == "gto", *shape,
            np.zeros(n_sms * cta_lim * max(n_regs, 1) * tpc, _scoreboard_dtype(config)),  # calloc: see `_simulate`
            np.zeros(n_sms * (cta_lim * tpc + 1) * (2 * W + 2 * NSUM), np.int64),  # >= every warp record
            *tables, ev, occ_hist, q_hist, g,
        )
        if not g[G_ERR]:
            break
        # SM-major stopped early (ERR_REPLAY, or an error an SM met on its own): the cycle-major
        # replay finds the error the machine meets first, as the reference does
    if g[G_ERR]:
        raise SimulationError(_error_message(config, g))
    if events is not None:
        if g[G_EV_OVERFLOW]:
            raise SimulationError(f"the debug event log exceeded {MAX_EVENTS} rows; use a smaller trace with events=")
        rows = ev[:int(g[G_NEVENTS])]
        # cycle-major order (SM-major logs each SM's run in turn): by cycle, then SM (= id mod
        # n_sms, `_new_warp`); lexsort is stable, which keeps each visit's issues in order
        rows = rows[np.lexsort((rows[:, 1] % n_sms, rows[:, 0]))]
        events.extend(dict(kind="issue", cycle=int(r[0]), warp=int(r[1]), pc=(int(r[2]), int(r[3])),
                           mask=int(r[4]) & 0xFFFF_FFFF_FFFF_FFFF,  # slot 63 is the int64 sign bit
                           checksum=int(r[5])) for r in rows)
    return Stats(
        cycles=int(g[G_CYCLES]), warp_insts=int(g[G_WARP_INSTS]), thread_insts=int(g[G_THREAD_INSTS]),
        idle_cycles=int(g[G_IDLE]), max_stack_depth=int(g[G_MAX_STACK]), merges=int(g[G_MERGES]),
        lane_conflicts=int(g[G_LANE_CONFLICTS]), barrier_wait_cycles=int(g[G_BARWAIT]),
        occupancy_hist=occ_hist, quarter_hist=q_hist,
    ).finalize(W)


def _scoreboard_dtype(config):
    """int32 ready cycles when every one fits (the run stops past ``max_cycles``, and an issue at
    cycle <= max_cycles writes at most max_cycles + the longest latency), else int64. The gathers
    of regrouped warps' operands are the kernel's largest memory cost; half the bytes halve the
    scoreboard's cache footprint (docs/formation.md). A larger ``max_cycles`` than the default
    compiles the kernel a second time, for int64."""
    from . import latencies

    longest = int(np.max(latencies(config)))
    return np.int32 if config.max_cycles + longest < np.iinfo(np.int32).max else np.int64


def _error_message(config, g) -> str:
    m = config.mechanism
    code, cycle = int(g[G_ERR]), int(g[G_ERR_CYCLE])
    if code == ERR_DEADLOCK:
        return (f"mechanism {m} deadlocked: no warp can ever issue again at cycle {cycle}; typically a bar.sync "
                f"that some threads of the CTA cannot reach under {m}")
    if code == ERR_NO_PROGRESS:
        return f"mechanism {m} made no progress for {config.no_progress_cycles} cycles at cycle {cycle}"
    if code == ERR_MAX_CYCLES:
        return f"mechanism {m} exceeded max_cycles = {config.max_cycles} at cycle {cycle}"
    if code == ERR_TABLE_OVERFLOW:
        return f"mechanism {m}: a CTA's reconvergence stack overflowed at cycle {cycle}"
    if code == ERR_BAD_EDGE:
        return (f"trace path of thread {int(g[G_ERR_WARP])} steps from block {int(g[G_ERR_BLK])} to block "
                f"{int(g[G_ERR_NEXT])}, which is not a CFG edge")
    return f"mechanism {m}: simulation failed with code {code}"
