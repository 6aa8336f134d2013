"""The warp instructions a single-path IPDOM stack issues for a trace's thread paths (no timing).

Threads form warps of ``warp_size`` consecutive threads of a CTA. Each warp walks its threads'
block paths through a reconvergence stack (Fung et al. 2007; Wu et al. 2012 §2.2): the top entry
issues its block with its threads; when they leave the block along different CFG edges, the top
entry becomes the reconvergence entry at the branch's immediate post-dominator and one entry per
successor group is pushed, in CFG successor order, so the last successor runs first as in the
``sps`` timing core (docs/core.md); an entry pops when it reaches its reconvergence block or its
threads have all exited. Which (block, thread mask) groups a warp issues, and in which order, does
not depend on timing, so the stream is exactly what the ``sps`` core issues per warp (tested
against its event log).

:func:`issue_stream` (numba kernel ``_walk``) returns, for a range of CTAs, one *issue record* per
(block, mask) issue: the block, the lane mask, whether the mask is every thread of the warp that has
not exited (a *full* issue), and whether the issue happens while the warp is diverged below the
reconvergence entry of a *flagged* branch (Wu et al. 2012's expansion regions, used by
:mod:`simt_fast.dynamic.expansion`). :func:`issue_stream_reference` is the plain-Python model
(lists of dict stack entries, sets of threads). Consumers: the dynamic code-expansion counts and
the Accel-Sim export (:mod:`simt_fast.trace.accelsim_export`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._jit import jit
from .model import Trace, TraceError

__all__ = ["IssueStream", "issue_stream", "issue_stream_reference", "cta_chunks"]

MAX_WARP = 64  # lane masks are one 64-bit word


@dataclass
class IssueStream:
    """Issue records of the warps of CTAs ``cta_start .. cta_stop - 1``, warp by warp (CTA-major).

    Warp ``k`` of the range (``cta_start * warps_per_cta + k`` globally) issued records
    ``warp_ptr[k]:warp_ptr[k+1]``; record ``r`` issued every instruction of ``block[r]`` with the
    lanes of ``mask[r]`` (bit ``l`` = thread ``l`` of the warp)."""

    warp_size: int
    cta_start: int
    cta_stop: int
    warp_ptr: np.ndarray  # int64[n_warps + 1]
    block: np.ndarray  # int64[n_records]
    mask: np.ndarray  # uint64[n_records]
    full: np.ndarray  # bool[n_records]: every thread of the warp that has not exited
    in_region: np.ndarray  # bool[n_records]: diverged, below a flagged branch's reconvergence entry
    max_depth: int = 0  # deepest stack over the range

    @property
    def n_records(self) -> int:
        return int(self.warp_ptr[-1])


@jit
def _walk(W, tpc, cta_start, cta_stop, succ_ptr, succ_idx, ipdom, flag, path_ptr, path, exit_b,
          warp_ptr, rec_block, rec_mask, rec_full, rec_region, out):
    """Fill the records of CTAs ``cta_start..cta_stop-1``; ``out`` = [status, thread, block, max depth,
    records]. Status -1: a path step that is not a CFG edge (thread, block); -2: stack overflow."""
    wpc = (tpc + W - 1) // W
    cap = 2 * W + 4  # each divergence strictly shrinks the top mask: <= W pending paths + W reconv entries
    s_blk = np.zeros(cap, np.int64)
    s_mask = np.zeros(cap, np.int64)
    s_rpc = np.zeros(cap, np.int64)
    s_flag = np.zeros(cap, np.int64)
    pos = np.zeros(64, np.int64)
    nxt = np.zeros(64, np.int64)
    max_succ = 1
    for b in range(succ_ptr.shape[0] - 1):
        if succ_ptr[b + 1] - succ_ptr[b] > max_succ:
            max_succ = succ_ptr[b + 1] - succ_ptr[b]
    gblk = np.zeros(max_succ, np.int64)
    gmask = np.zeros(max_succ, np.int64)
    max_depth = 0
    n_rec = 0
    k = 0
    warp_ptr[0] = 0
    for cta in range(cta_start, cta_stop):
        for wi in range(wpc):
            tbase = cta * tpc + wi * W
            lanes = min(W, tpc - wi * W)
            live = np.int64(0)
            for lane in range(lanes):
                pos[lane] = path_ptr[tbase + lane]
                if path[pos[lane]] != exit_b:
                    live |= np.int64(1) << lane
            sp = 0
            if live != 0:
                s_blk[0] = 0  # every warp starts converged at the entry block
                s_mask[0] = live
                s_rpc[0] = -1
                s_flag[0] = 0
                sp = 1
            n_flag = 0  # flagged reconvergence entries on the stack
            while sp > 0:
                top = sp - 1
                m = s_mask[top] & live
                b = s_blk[top]
                if m == 0 or b == s_rpc[top]:
                    # reached the reconvergence point (or every thread of the entry exited): pop
                    n_flag -= s_flag[top]
                    sp -= 1
                    continue
                s_mask[top] = m
                rec_block[n_rec] = b
                rec_mask[n_rec] = m
                rec_full[n_rec] = m == live
                rec_region[n_rec] = n_flag - s_flag[top] > 0 and m != live
                n_rec += 1
                # ---- move the issued threads along their paths --------------------------------
                for lane in range(lanes):
                    if (m >> lane) & 1:
                        pos[lane] += 1
                        nxt[lane] = path[pos[lane]]
                ng = 0
                seen = np.int64(0)
                for e in range(succ_ptr[b], succ_ptr[b + 1]):
                    s = succ_idx[e]
                    gm = np.int64(0)
                    for lane in range(lanes):
                        if (m >> lane) & 1 and nxt[lane] == s:
                            gm |= np.int64(1) << lane
                    if gm == 0 or (seen & gm) != 0:
                        continue
                    seen |= gm
                    if s == exit_b:
                        live &= ~gm
                    else:
                        gblk[ng] = s
                        gmask[ng] = gm
                        ng += 1
                if seen != m:
                    out[0] = -1
                    out[1] = tbase
                    out[2] = b
                    return
                if ng == 0:
                    n_flag -= s_flag[top]
                    sp -= 1
                elif ng == 1:
                    s_blk[top] = gblk[0]
                    s_mask[top] = gmask[0]
                else:
                    if sp + ng > cap:
                        out[0] = -2
                        return
                    r = ipdom[b]
                    n_flag -= s_flag[top]
                    s_blk[top] = r
                    s_mask[top] = m
                    s_flag[top] = flag[b]
                    n_flag += flag[b]
                    for j in range(ng):
                        s_blk[sp] = gblk[j]
                        s_mask[sp] = gmask[j]
                        s_rpc[sp] = r
                        s_flag[sp] = 0
                        sp += 1
                    if sp > max_depth:
                        max_depth = sp
            k += 1
            warp_ptr[k] = n_rec
    out[0] = 0
    out[3] = max_depth
    out[4] = n_rec


def _check(trace: Trace, warp_size: int) -> None:
    if not (1 <= warp_size <= MAX_WARP):
        raise ValueError(f"warp_size must be between 1 and {MAX_WARP} (got {warp_size})")
    if trace.n_threads != trace.n_ctas * trace.threads_per_cta:
        raise TraceError(f"trace '{trace.kernel}': {trace.n_threads} thread paths but grid x block = "
                         f"{trace.n_ctas * trace.threads_per_cta}")


def _range(trace: Trace, cta_start: int, cta_stop) -> tuple:
    cta_stop = trace.n_ctas if cta_stop is None else int(cta_stop)
    if not 0 <= cta_start <= cta_stop <= trace.n_ctas:
        raise ValueError(f"CTA range {cta_start}..{cta_stop} is not within the trace's {trace.n_ctas} CTAs")
    return int(cta_start), cta_stop


def _ipdom_or_exit(trace: Trace) -> np.ndarray:
    ipdom = np.asarray(trace.ipdom, np.int64).copy()
    ipdom[ipdom < 0] = trace.n_blocks - 1
    return ipdom


def issue_stream(trace: Trace, warp_size: int, cta_start: int = 0, cta_stop=None, flags=None) -> IssueStream:
    """The issue records of CTAs ``cta_start .. cta_stop - 1`` (default: all) under a single-path
    IPDOM stack with warps of ``warp_size``; ``flags`` (bool per block) marks the branches whose
    regions :attr:`IssueStream.in_region` reports (default: none)."""
    _check(trace, warp_size)
    cta_start, cta_stop = _range(trace, cta_start, cta_stop)
    nb = trace.n_blocks
    flags = np.zeros(nb, np.int64) if flags is None else np.asarray(flags, np.bool_).astype(np.int64)
    tpc = trace.threads_per_cta
    wpc = -(-tpc // warp_size)
    path_ptr = np.asarray(trace.path_ptr, np.int64)
    # every record moves at least one thread one step along its path: the range's steps bound them
    cap = int(path_ptr[cta_stop * tpc] - path_ptr[cta_start * tpc])
    warp_ptr = np.zeros((cta_stop - cta_start) * wpc + 1, np.int64)
    rec_block = np.empty(cap, np.int64)
    rec_mask = np.empty(cap, np.int64)
    rec_full = np.empty(cap, np.bool_)
    rec_region = np.empty(cap, np.bool_)
    out = np.zeros(5, np.int64)
    _walk(int(warp_size), tpc, cta_start, cta_stop, np.asarray(trace.succ_ptr, np.int64),
          np.asarray(trace.succ_idx, np.int64), _ipdom_or_exit(trace), flags, path_ptr,
          np.asarray(trace.path, np.int64), nb - 1, warp_ptr, rec_block, rec_mask, rec_full, rec_region, out)
    if out[0] == -2:  # pragma: no cover - the bound in _walk is a proof, this is its guard
        raise RuntimeError("IPDOM walk: reconvergence stack overflow")
    if out[0] < 0:
        raise TraceError(f"trace '{trace.kernel}': a thread of the warp starting at thread {int(out[1])} leaves "
                         f"block {int(out[2])} along a step that is not a CFG edge")
    n = int(out[4])
    return IssueStream(int(warp_size), cta_start, cta_stop, warp_ptr, rec_block[:n].copy(),
                       rec_mask[:n].view(np.uint64).copy(), rec_full[:n].copy(), rec_region[:n].copy(),
                       max_depth=int(out[3]))


def issue_stream_reference(trace: Trace, warp_size: int, cta_start: int = 0, cta_stop=None,
                           flags=None) -> IssueStream:
    """Plain-Python model of :func:`issue_stream`."""
    _check(trace, warp_size)
    cta_start, cta_stop = _range(trace, cta_start, cta_stop)
    nb = trace.n_blocks
    exit_b = nb - 1
    flags = np.zeros(nb, bool) if flags is None else np.asarray(flags, bool)
    sp_, si = np.asarray(trace.succ_ptr), np.asarray(trace.succ_idx)
    succs = [list(map(int, si[sp_[b]:sp_[b + 1]])) for b in range(nb)]
    ipdom = [int(x) if x >= 0 else exit_b for x in trace.ipdom]
    tpc = trace.threads_per_cta
    warp_ptr, blocks, masks, full, region = [0], [], [], [], []
    max_depth = 0
    for cta in range(cta_start, cta_stop):
        for w0 in range(0, tpc, warp_size):
            lanes = range(min(warp_size, tpc - w0))
            paths = {lane: list(map(int, trace.thread_path(cta * tpc + w0 + lane))) for lane in lanes}
            pos = {lane: 0 for lane in lanes}
            live = {lane for lane in lanes if paths[lane][0] != exit_b}
            stack = [dict(pc=0, threads=set(live), rpc=-1, flagged=False)] if live else []
            while stack:
                top = stack[-1]
                top["threads"] &= live
                if not top["threads"] or top["pc"] == top["rpc"]:
                    stack.pop()
                    continue
                b, ts = top["pc"], top["threads"]
                blocks.append(b)
                masks.append(sum(1 << lane for lane in ts))
                full.append(ts == live)
                region.append(ts != live and any(e["flagged"] for e in stack[:-1]))
                groups: dict = {}
                for lane in sorted(ts):
                    pos[lane] += 1
                    groups.setdefault(paths[lane][pos[lane]], set()).add(lane)
                for s in groups:
                    if s not in succs[b]:
                        raise TraceError(f"trace '{trace.kernel}': a thread of the warp starting at thread "
                                         f"{cta * tpc + w0} leaves block {b} along a step that is not a CFG edge")
                live -= groups.pop(exit_b, set())
                order = [s for s in dict.fromkeys(succs[b]) if s in groups]
                if not order:
                    stack.pop()
                elif len(order) == 1:
                    top["pc"], top["threads"] = order[0], groups[order[0]]
                else:
                    r = ipdom[b]
                    top["pc"], top["threads"], top["flagged"] = r, set(ts), bool(flags[b])
                    for s in order:
                        stack.append(dict(pc=s, threads=groups[s], rpc=r, flagged=False))
                    max_depth = max(max_depth, len(stack))
            warp_ptr.append(len(blocks))
    return IssueStream(int(warp_size), cta_start, cta_stop, np.array(warp_ptr, np.int64), np.array(blocks, np.int64),
                       np.array(masks, np.uint64), np.array(full, np.bool_), np.array(region, np.bool_),
                       max_depth=max_depth)


def cta_chunks(trace: Trace, max_steps: int = 1 << 22):
    """Consecutive CTA ranges ``(start, stop)`` whose paths hold at most ``max_steps`` steps (at least
    one CTA each): walking a trace range by range keeps the records' memory bounded."""
    tpc = trace.threads_per_cta
    ends = np.asarray(trace.path_ptr, np.int64)[::tpc]  # path offset at each CTA boundary
    start = 0
    n = trace.n_ctas
    while start < n:
        stop = int(np.searchsorted(ends, ends[start] + max_steps, side="right")) - 1
        stop = min(n, max(stop, start + 1))
        yield start, stop
        start = stop
