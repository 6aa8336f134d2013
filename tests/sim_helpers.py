"""Hand-built traces for the timing-core tests (block lists drawn like the papers' figures)."""

from __future__ import annotations

import numpy as np

from simt_fast.ir.graph import immediate_postdominators
from simt_fast.ir.model import OpClass
from simt_fast.trace.model import Trace

OPS = {"alu": OpClass.ALU, "bra": OpClass.BRANCH, "bar": OpClass.BARRIER, "exit": OpClass.EXIT,
       "gld": OpClass.MEM_GLOBAL, "sfu": OpClass.SFU}


def tiny_trace(blocks, succ, paths, *, barrier=(), chain=False, block=None, labels=None) -> Trace:
    """``blocks``: op names per real block; ``succ``: successor lists (the virtual exit is
    ``len(blocks)``); ``paths``: one block path per thread (ending at the exit).

    ``chain=True`` makes every instruction of a thread read the register the previous one wrote
    (r0, r1 alternating), so each instruction waits the previous one's full latency.
    """
    nb = len(blocks) + 1
    sizes = [len(b) for b in blocks] + [0]
    block_start = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int32)
    ops = [OPS[o] for b in blocks for o in b]
    n = len(ops)
    dst = np.full(n, -1, np.int16)
    src = np.full((n, 3), -1, np.int16)
    if chain:
        for i in range(n):
            dst[i] = i % 2
            if i:
                src[i, 0] = (i - 1) % 2
    succ_full = [list(s) for s in succ] + [[]]
    succ_ptr = np.concatenate([[0], np.cumsum([len(s) for s in succ_full])]).astype(np.int32)
    succ_idx = np.array([t for s in succ_full for t in s], np.int32)
    ipdom = np.asarray(immediate_postdominators(nb, succ_ptr, succ_idx, nb - 1), np.int32).copy()
    ipdom[nb - 1] = -1
    has_barrier = np.zeros(nb, bool)
    has_barrier[list(barrier)] = True
    path_ptr = np.concatenate([[0], np.cumsum([len(p) for p in paths])]).astype(np.int64)
    path = np.concatenate([np.asarray(p) for p in paths]).astype(np.uint16)
    block = block or (len(paths), 1, 1)
    return Trace(kernel="tiny", grid=(len(paths) // int(np.prod(block)), 1, 1), block=block,
                 block_start=block_start, succ_ptr=succ_ptr, succ_idx=succ_idx, ipdom=ipdom,
                 label=labels or [chr(ord("A") + b) for b in range(nb - 1)] + ["<exit>"], has_barrier=has_barrier,
                 op_class=np.asarray(ops, np.uint8), dst_reg=dst, src_reg=src, text=[""] * n, path_ptr=path_ptr,
                 path=path)
