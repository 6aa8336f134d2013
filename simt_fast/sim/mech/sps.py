"""`sps`: single-path IPDOM reconvergence stack (PDOM; Fung et al. 2007, the baseline of ElTantawy et
al. 2014).

On divergence the top entry's PC becomes the reconvergence PC (the IPDOM of the branch block) and
one entry per target is pushed with that RPC; only the top entry issues; it is popped when its PC
reaches its RPC.

Implemented on the multi-path tables (``mp``) with one restriction — only the *newest* split
issues — which is exactly a stack: the RT entry created at a divergence is the stack entry whose
PC became the RPC, the pushed target entries are the newest ST rows, and when the last of them
arrives the RT entry re-enters the ST as the newest row (the entry that is now on top). Stack depth
= ST rows + RT rows.
"""

from ._tables import W_STN, helper


@helper
def schedulable(st, rt, winfo, w, out):
    n = winfo[w, W_STN]
    if n == 0:
        return 0
    out[0] = n - 1  # top of stack
    return 1
