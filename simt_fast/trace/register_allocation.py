"""Physical registers for a trace's registers: liveness over its CFG, then greedy colouring.

A PTX trace numbers hundreds of virtual registers (``%r``, ``%rd``, ``%f``, ``%p``, ...; up to 600
in the shipped workloads); an Accel-Sim trace line names ``R0``..``R254`` (``R255`` is the zero
register) and Accel-Sim sizes a CTA's register file from the header's ``-nregs``. :func:`allocate`
gives every register a physical number such that **every true dependency stays one and no new one
appears**: two registers share a number only if they are never live at the same point of the CFG
(standard interference: a definition interferes with everything live after it). So the most recent
writer of a register a thread reads is, on every path, the writer of the register it had; the
``sps`` stats of a trace whose registers are renamed this way are unchanged (tested).

Liveness is the usual backward data flow over the trace's blocks with the trace's registers: the
destination ``dst_reg`` and the sources ``src_reg`` (the guard predicate and up to two operands,
DESIGN §2); a register read without a recorded definition is live from the entry, which only adds
interference. Colours are handed out greedily in order of first appearance (the lowest colour no
already-coloured neighbour holds), which is how a linear-scan allocator numbers them. If a kernel
needs more than ``n_physical`` colours, colours fold modulo ``n_physical`` and the result says so:
those registers then share numbers and may add dependencies.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .model import Trace

N_PHYSICAL = 255  # R0..R254; R255 is RZ, the zero register


@dataclass
class Allocation:
    dst_reg: np.ndarray  # int16[n_instrs]: physical register, -1 none
    src_reg: np.ndarray  # int16[n_instrs, 3]
    n_registers: int  # physical registers used (max number + 1)
    needed: int  # colours the interference graph took (> n_physical: folded)
    folded: bool


def _liveness(trace: Trace, dst: np.ndarray, src: np.ndarray) -> list:
    """live-out bitset (Python int over dense register indices) of every block."""
    nb = trace.n_blocks
    starts = np.asarray(trace.block_start)
    sp, si = np.asarray(trace.succ_ptr), np.asarray(trace.succ_idx)
    use, kill = [0] * nb, [0] * nb
    for b in range(nb):
        u = k = 0
        for i in range(int(starts[b]), int(starts[b + 1])):
            for r in src[i]:
                if r >= 0 and not (k >> int(r)) & 1:
                    u |= 1 << int(r)
            if dst[i] >= 0:
                k |= 1 << int(dst[i])
        use[b], kill[b] = u, k
    live_in, live_out = [0] * nb, [0] * nb
    changed = True
    while changed:
        changed = False
        for b in range(nb - 1, -1, -1):
            out = 0
            for s in si[sp[b]:sp[b + 1]]:
                out |= live_in[int(s)]
            inn = use[b] | (out & ~kill[b])
            if out != live_out[b] or inn != live_in[b]:
                live_out[b], live_in[b] = out, inn
                changed = True
    return live_out


def _bits(x: int):
    while x:
        low = x & -x
        yield low.bit_length() - 1
        x ^= low


def allocate(trace: Trace, n_physical: int = N_PHYSICAL) -> Allocation:
    """Physical register numbers for ``trace``'s registers (module doc)."""
    dst_in = np.asarray(trace.dst_reg, np.int64)
    src_in = np.asarray(trace.src_reg, np.int64).reshape(-1, 3)
    # dense indices in order of first appearance (instruction order, destination before sources)
    appearances = np.stack([dst_in, *src_in.T], axis=1).ravel()
    appearances = appearances[appearances >= 0]
    used, first = np.unique(appearances, return_index=True)
    by_appearance = used[np.argsort(first)]
    lookup = np.full(int(used.max()) + 1 if len(used) else 1, -1, np.int64)
    lookup[by_appearance] = np.arange(len(by_appearance))
    dst = np.where(dst_in >= 0, lookup[np.maximum(dst_in, 0)], -1)
    src = np.where(src_in >= 0, lookup[np.maximum(src_in, 0)], -1)
    n = len(by_appearance)
    neighbours = [0] * n
    starts = np.asarray(trace.block_start)
    for b, out in enumerate(_liveness(trace, dst, src)):
        live = out
        for i in range(int(starts[b + 1]) - 1, int(starts[b]) - 1, -1):
            d = int(dst[i])
            if d >= 0:
                others = live & ~(1 << d)
                neighbours[d] |= others
                for r in _bits(others):
                    neighbours[r] |= 1 << d
                live &= ~(1 << d)
            for r in src[i]:
                if r >= 0:
                    live |= 1 << int(r)
    colour = [-1] * n
    for k in range(n):  # first appearance first
        taken = {colour[r] for r in _bits(neighbours[k]) if colour[r] >= 0}
        c = 0
        while c in taken:
            c += 1
        colour[k] = c
    needed = max(colour) + 1 if n else 0
    folded = needed > n_physical
    phys = np.array([c % n_physical for c in colour] + [-1], np.int64)  # index -1 -> no register
    return Allocation(dst_reg=phys[dst].astype(np.int16), src_reg=phys[src].astype(np.int16),
                      n_registers=min(needed, n_physical), needed=needed, folded=folded)
