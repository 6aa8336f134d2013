"""`dps`: dual-path stack (Rhu & Erez, HPCA 2013).

Each stack entry holds the two paths of one divergence, and both may issue, interleaved. A nested
divergence of one path pushes a new entry (its two paths) and pauses the sibling path until the
new entry reconverges.

Implemented on the multi-path tables (``mp``): the stack entries are the RT rows, and the paths of
the top entry are the ST splits whose parent is the newest RT row (or the single converged split
when there is no RT row). A nested divergence creates a newer RT row, which pauses the sibling;
when it reconverges the merged split re-joins its sibling under the older entry. Stack depth =
RT rows + 1. (A branch with more than two targets puts all its groups in the one entry.)
"""

from ._tables import R_ID, S_PAR, W_RTN, W_STN, helper


@helper
def schedulable(st, rt, winfo, w, out):
    top = rt[w, winfo[w, W_RTN] - 1, R_ID] if winfo[w, W_RTN] > 0 else -1
    n = 0
    for i in range(winfo[w, W_STN]):
        if st[w, i, S_PAR] == top:
            out[n] = i
            n += 1
    return n
