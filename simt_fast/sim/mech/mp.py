"""`mp`: multi-path IPDOM (ElTantawy, Ma, O'Connor, Aamodt, HPCA 2014).

Rules, as implemented on the shared tables (``_tables``):

* Every split in the warp-split table (ST: PC, RPC, active mask) is schedulable, so paths that are
  control-independent fill each other's latency stalls.
* A divergence of split S (at the end of block P) removes S and adds one reconvergence-table (RT)
  entry: PC = IPDOM(P), RPC = S's RPC, reconvergence mask = pending mask = S's mask. Each target
  group becomes a new ST split whose RPC is IPDOM(P); a group whose target *is* IPDOM(P) has
  already arrived, so its bits are cleared from the pending mask at once.
* A split reaching its RPC leaves the ST and clears its bits in its RT entry's pending mask; when
  the pending mask is all zeros the RT entry moves to the ST as one reconverged split (ElTantawy
  et al. 2014: "upon each update to the pending mask ... checked if it is all zeros").
* Exiting threads are cleared from every RT entry of their warp (they will never arrive).
* A divergence whose IPDOM is the diverging split's own RPC creates no new RT entry (``diverge``'s
  ``collapse``): its targets reconverge into the split's RT entry directly.

``sps`` and ``dps`` reuse these tables with a narrower schedulable set (see their modules).
"""

from ._tables import (
    R_BLK, R_OFF, R_PAR, R_PEND, R_RMASK, R_RPCB, R_RPCO, S_BLK, S_MASK, S_OFF, S_PAR, S_RPCB, S_RPCO,
    S_STATE, W_LIVE, W_RTN, W_STN, helper, rt_append, rt_find, rt_remove, st_append, st_remove,
)


@helper
def schedulable(st, rt, winfo, w, out):
    n = winfo[w, W_STN]
    for i in range(n):
        out[i] = i
    return n


@helper
def diverge(st, rt, winfo, w, i, r, gblk, gmask, ng, nb, collapse):
    """Split ``i`` branches to ``ng`` groups (``gblk``/``gmask``), which issue from cycle ``nb``;
    ``r`` = IPDOM of its block.

    With ``collapse``, a divergence whose IPDOM equals the split's own RPC adds no RT entry: the
    new entry would reconverge at the very PC where it hands its threads to its parent, so the
    target splits reconverge into the parent directly (as GPGPU-Sim's stack skips a redundant
    reconvergence entry). Without it, a loop whose body diverges and re-merges (mp-oer) before
    its IPDOM would nest one more entry per iteration. Returns 0, or -1 if a table overflowed.
    """
    mask = st[w, i, S_MASK]
    if collapse and st[w, i, S_RPCB] == r and st[w, i, S_RPCO] == 0:
        par = st[w, i, S_PAR]
        k = rt_find(rt, winfo, w, par)
        st_remove(st, winfo, w, i)
        for g in range(ng):
            if gblk[g] == r:
                rt[w, k, R_PEND] &= ~gmask[g]
            elif st_append(st, winfo, w, gblk[g], 0, gmask[g], r, 0, par, nb) < 0:
                return -1
        return 0
    rid = rt_append(rt, winfo, w, r, 0, st[w, i, S_RPCB], st[w, i, S_RPCO], mask, mask, st[w, i, S_PAR])
    if rid < 0:
        return -1
    st_remove(st, winfo, w, i)
    k = winfo[w, W_RTN] - 1
    for g in range(ng):
        if gblk[g] == r:
            # already at the reconvergence point: these threads have arrived
            rt[w, k, R_PEND] &= ~gmask[g]
        elif st_append(st, winfo, w, gblk[g], 0, gmask[g], r, 0, rid, nb) < 0:
            return -1
    return 0


@helper
def clear_exited(rt, winfo, w, xmask):
    """Exited threads never reach any reconvergence point: drop them from every RT entry."""
    for k in range(winfo[w, W_RTN]):
        rt[w, k, R_PEND] &= ~xmask
        rt[w, k, R_RMASK] &= ~xmask


@helper
def settle(st, rt, winfo, w, nb):
    """Apply arrivals and RT→ST moves until nothing changes (deterministic scan order). A
    reconverged split issues from cycle ``nb`` (its last threads to arrive may have just branched).

    Returns the number of arrivals plus moves (0 = the tables were already settled), or -1 on overflow.
    """
    changes = 0
    while True:
        changed = False
        # a split whose PC equals its RPC has arrived: leave the ST, clear its pending bits
        for i in range(winfo[w, W_STN]):
            if st[w, i, S_STATE] == 0 and st[w, i, S_RPCB] >= 0 and st[w, i, S_BLK] == st[w, i, S_RPCB] \
                    and st[w, i, S_OFF] == st[w, i, S_RPCO]:
                k = rt_find(rt, winfo, w, st[w, i, S_PAR])
                rt[w, k, R_PEND] &= ~st[w, i, S_MASK]
                st_remove(st, winfo, w, i)
                changed = True
                break
        if changed:
            changes += 1
            continue
        # an all-zero pending mask moves the RT entry to the ST as one reconverged split
        for k in range(winfo[w, W_RTN]):
            if rt[w, k, R_PEND] == 0:
                mask = rt[w, k, R_RMASK] & winfo[w, W_LIVE]
                if mask != 0:
                    if st_append(st, winfo, w, rt[w, k, R_BLK], rt[w, k, R_OFF], mask, rt[w, k, R_RPCB],
                                 rt[w, k, R_RPCO], rt[w, k, R_PAR], nb) < 0:
                        return -1
                rt_remove(rt, winfo, w, k)
                changed = True
                break
        if not changed:
            return changes
        changes += 1
