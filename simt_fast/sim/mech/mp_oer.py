"""`mp-oer`: multi-path IPDOM + opportunistic early reconvergence (ElTantawy et al. 2014, the
do-while/break example).

Everything of ``mp``, plus: when two splits of one warp are in the same basic block with the same
RPC and the same RT parent, and the trailing one is at the block's first instruction while the
leading one is at offset k > 0, the leading split leaves the ST and a new RT entry is created with
PC = (block, k) — the leading split's next PC — RPC = their common RPC, reconvergence mask = both
masks, pending mask = the trailing mask. The trailing split's RPC becomes (block, k). When it gets
there its pending bits clear and the merged split moves to the ST (ElTantawy et al. 2014, steps
4b→4a). Two splits both at (block, 0) merge at once. Each such event counts one ``early_reconvergences``.
"""

from ._tables import (
    S_BLK, S_MASK, S_OFF, S_PAR, S_RPCB, S_RPCO, S_STATE, S_T, W_STN, helper, rt_append, st_remove,
)
from .mp import schedulable  # noqa: F401  (every split is schedulable, as in mp)


@helper
def early_reconverge(st, rt, winfo, w):
    """Apply every early-reconvergence opportunity; returns how many (or -1 on RT overflow)."""
    count = 0
    while True:
        found = False
        n = winfo[w, W_STN]
        for i in range(n):  # i = trailing candidate (at its block's first instruction)
            if st[w, i, S_OFF] != 0 or st[w, i, S_STATE] != 0:
                continue
            for v in range(n):  # v = leading split in the same block
                if v == i or st[w, v, S_STATE] != 0 or st[w, v, S_BLK] != st[w, i, S_BLK]:
                    continue
                if st[w, v, S_RPCB] != st[w, i, S_RPCB] or st[w, v, S_RPCO] != st[w, i, S_RPCO] \
                        or st[w, v, S_PAR] != st[w, i, S_PAR]:
                    continue
                if st[w, v, S_OFF] == 0:
                    if v > i:
                        continue  # both at the block entry: merge the newer into the older
                    st[w, v, S_MASK] |= st[w, i, S_MASK]
                    st[w, v, S_T] = max(st[w, v, S_T], st[w, i, S_T])
                    st_remove(st, winfo, w, i)
                else:
                    off = st[w, v, S_OFF]
                    rid = rt_append(rt, winfo, w, st[w, v, S_BLK], off, st[w, v, S_RPCB], st[w, v, S_RPCO],
                                    st[w, v, S_MASK] | st[w, i, S_MASK], st[w, i, S_MASK], st[w, v, S_PAR])
                    if rid < 0:
                        return -1
                    st[w, i, S_RPCO] = off
                    st[w, i, S_RPCB] = st[w, v, S_BLK]
                    st[w, i, S_PAR] = rid
                    st_remove(st, winfo, w, v)  # the leading split waits in the RT entry
                found = True
                break
            if found:
                break
        if not found:
            return count
        count += 1
