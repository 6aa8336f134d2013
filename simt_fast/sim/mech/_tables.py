"""Per-warp unit tables shared by every mechanism (SoA, int64, numba).

A warp's *issue units* live in its split table ``st[w, i, :]`` (ordered: index 0 is the oldest, the
last row the newest); reconvergence entries live in ``rt[w, k, :]`` (same ordering). The IPDOM
family (sps, dps, mp, mp-oer) uses both; serial, frontier and mimd use only ``st``.

Rows are removed by shifting (order is meaningful: sps issues the newest split, which is exactly
the top of a PDOM stack) and appended at the end. The plain-Python reference keeps Python lists with
the same order, so both models make identical choices.
"""

import numpy as np

from ..._jit import helper, hot_helper

# split-table (ST) fields: one issue unit = PC (block, offset) + lane mask of the warp. The fields the
# issue path reads come first: a row is allocated S_ROW words wide and starts on a cache line, so
# they share one line.
S_BLK = 0  # basic block of the next instruction
S_OFF = 1  # instruction offset inside the block
S_MASK = 2  # lane mask (bit l = lane l of the warp)
S_STATE = 3  # 0 ready, 1 waiting at a barrier
S_T = 4  # earliest cycle the unit may issue (one issue per unit per cycle)
S_EXP = 5  # 1 while this unit re-executes a block the diverged warp already ran
S_RPCB = 6  # reconvergence PC block (-1: none)
S_RPCO = 7  # reconvergence PC offset (0 for IPDOM; >0 for an mp-oer early point)
S_PAR = 8  # id of the RT entry this split reconverges into (-1: none)
S_BART = 9  # cycle the unit arrived at the barrier
S_NF = 10
S_ROW = 16  # allocated words per row (two cache lines; the hot fields in the first)

# reconvergence-table (RT) fields
R_ID = 0  # unique id within the warp (splits point at it through S_PAR)
R_BLK = 1  # reconvergence PC block
R_OFF = 2  # reconvergence PC offset
R_RPCB = 3  # the RPC the reconverged split continues to (its own reconvergence point)
R_RPCO = 4
R_RMASK = 5  # reconvergence mask: threads that continue together at this PC
R_PEND = 6  # pending mask: threads that have not arrived yet
R_PAR = 7  # parent RT id of the reconverged split
R_NF = 8

# per-warp-slot info fields
W_CTA = 0  # global CTA id, -1 if the slot is empty
W_TBASE = 1  # global id of lane 0's thread
W_NLANES = 2
W_LIVE = 3  # mask of threads that have not exited
W_EPOCH = 4  # divergence epoch (expanded_insts bookkeeping)
W_STN = 5  # rows used in st
W_RTN = 6  # rows used in rt
W_NEXTID = 7  # next RT id
W_AGE = 8  # dispatch order (gto)
W_CTASLOT = 9  # CTA slot index on its SM
W_GID = 10  # global warp id (CTA id * warps per CTA + warp index): the id events report
W_NB = 11  # sps, frontier (one PC per warp): no unit issues before this cycle (a branch resolves)
W_MROW = 12  # memory model: the row every thread of the warp takes next, or -1 (`memory.issue.access_mask`)
W_NF = 13


@hot_helper
def popcount(m):
    """Set bits of a lane mask (SWAR; the int64 is reinterpreted as unsigned so lane 63 counts)."""
    x = np.uint64(m)
    x = x - ((x >> np.uint64(1)) & np.uint64(0x5555555555555555))
    x = (x & np.uint64(0x3333333333333333)) + ((x >> np.uint64(2)) & np.uint64(0x3333333333333333))
    x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return np.int64((x * np.uint64(0x0101010101010101)) >> np.uint64(56))


@helper
def st_append(st, winfo, w, blk, off, mask, rpcb, rpco, par, t):
    i = winfo[w, W_STN]
    if i >= st.shape[1]:
        return -1  # caller reports table overflow
    st[w, i, S_BLK] = blk
    st[w, i, S_OFF] = off
    st[w, i, S_MASK] = mask
    st[w, i, S_RPCB] = rpcb
    st[w, i, S_RPCO] = rpco
    st[w, i, S_PAR] = par
    st[w, i, S_STATE] = 0
    st[w, i, S_T] = t
    st[w, i, S_BART] = 0
    st[w, i, S_EXP] = 0
    winfo[w, W_STN] = i + 1
    return i


@helper
def st_remove(st, winfo, w, i):
    n = winfo[w, W_STN]
    for j in range(i, n - 1):
        for f in range(S_NF):
            st[w, j, f] = st[w, j + 1, f]
    winfo[w, W_STN] = n - 1


@helper
def rt_append(rt, winfo, w, blk, off, rpcb, rpco, rmask, pend, par):
    k = winfo[w, W_RTN]
    if k >= rt.shape[1]:
        return -1
    rid = winfo[w, W_NEXTID]
    winfo[w, W_NEXTID] = rid + 1
    rt[w, k, R_ID] = rid
    rt[w, k, R_BLK] = blk
    rt[w, k, R_OFF] = off
    rt[w, k, R_RPCB] = rpcb
    rt[w, k, R_RPCO] = rpco
    rt[w, k, R_RMASK] = rmask
    rt[w, k, R_PEND] = pend
    rt[w, k, R_PAR] = par
    winfo[w, W_RTN] = k + 1
    return rid


@helper
def rt_find(rt, winfo, w, rid):
    for k in range(winfo[w, W_RTN]):
        if rt[w, k, R_ID] == rid:
            return k
    return -1


@helper
def rt_remove(rt, winfo, w, k):
    n = winfo[w, W_RTN]
    for j in range(k, n - 1):
        for f in range(R_NF):
            rt[w, j, f] = rt[w, j + 1, f]
    winfo[w, W_RTN] = n - 1


@helper
def row_list_remove(lists, counts, row, value):
    """Remove ``value`` from the packed list ``lists[row, :counts[row]]``, keeping the order
    (per-SM warp orders in the core, per-SM warp pools in the formation kernel)."""
    n = counts[row]
    for j in range(n):
        if lists[row, j] == value:
            for q in range(j, n - 1):
                lists[row, q] = lists[row, q + 1]
            counts[row] = n - 1
            return
