"""Thread paths and the CFG from an Accel-Sim warp trace (the rules are in docs/trace.md).

Input, per warp: its trace lines in order, each a PC (as an index into the kernel's sorted list
of executed PCs, so the next instruction of ``p`` is ``p + 1``) and a mask. Nothing here reads
files; :mod:`simt_fast.trace.accelsim` parses and calls these functions.

**What a mask says.** A line's mask is the active mask AND the guard predicate. A thread in the
mask executed the instruction with its guard true. A thread missing from it either executed it
with its guard false (it stayed on the path: it is *active* there) or is elsewhere (another
group of the warp, or exited). The recovery decides which, with these rules:

1. *Threads move only when they execute.* Each thread has a current PC (all start at the
   warp's first PC). A line at PC ``p`` is executed by every thread whose current PC is ``p``
   (its *group*, recorded per line). The group's threads in the mask get the instruction's
   effect; the others executed it with a false guard, which never jumps and never exits: they
   continue at ``p + 1``. So between two lines where a thread is in the mask, it runs straight
   through the lines in between (predicated off), never through a jump.
2. *Where a taken jump lands.* A thread in the mask of a branch (BRA, BRX, JMP, CALL, RET, ...)
   goes next to the PC of its next line with it in the mask — its *landing*. For a direct branch
   (one target in the instruction) the target is taken as the lowest landing, other than the
   next instruction, of any thread at any execution of that branch in the kernel; a thread that
   lands later was predicated off on the way, and rule 1 walks it there. If the lines do not
   carry it there, it jumped straight to its landing. A thread in the mask of EXIT (or KILL) ends.
3. *Repairs.* Rule 1 puts a thread into every line at its PC. When two groups of a warp sit at
   one PC and execute it separately (independent thread scheduling), it may be put into the
   wrong one and run ahead; when its own group's line later shows it in the mask at a PC it
   already passed, it is moved back there (the lines after that point lose it). A thread in a
   mask that none of this explains makes the trace inconsistent: :class:`PathError`.

Every thread ends when it executes EXIT with its guard true; one that does not is an error too.
The recovered group of every line is the set of threads that executed it, so the sum of its
popcounts is the trace's ``thread_insts`` and the sum of the masks' popcounts is what
Accel-Sim counts (predicated-off executions are the difference).

**The CFG** (:func:`build_cfg`) comes from the recovered PC sequences: a block ends at a
branch, EXIT or barrier, where the threads' next PCs part (several successors, or one that is
not the next instruction) and before a PC reached from several PCs or from a jump; the last
id is the virtual exit, reached from every PC where a thread ended. Edges no thread took are
unknown and absent, so IPDOMs are those of the executed CFG.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..ir.graph import immediate_postdominators
from .sass import FLOW_DIRECT, FLOW_EXIT, FLOW_INDIRECT, FLOW_NONE

LANES = 32
_LANE_BITS = np.arange(LANES, dtype=np.uint32)


class PathError(Exception):
    """A warp's lines that no set of thread paths explains; the caller names file and line.

    ``what`` completes "thread T ..."; ``{other}`` in it stands for the trace line ``other``
    (a warp line index), which the caller writes as a file line number.
    """

    def __init__(self, line: int, lane: int, what: str, other: int = -1):
        super().__init__(what)
        self.line = line  # index of the warp line at fault
        self.lane = lane
        self.what = what
        self.other = other


# ---------------------------------------------------------------------------------------------
# Landings and direct-branch targets (rule 2)
# ---------------------------------------------------------------------------------------------


def in_mask_matrix(mask: np.ndarray) -> np.ndarray:
    """bool[n_lines, 32]: lane in the line's mask."""
    return ((np.asarray(mask, np.uint32)[:, None] >> _LANE_BITS) & 1).astype(np.bool_)


def landings(pc: np.ndarray, mask: np.ndarray, is_branch_line: np.ndarray) -> tuple:
    """For every branch line, each lane's landing: the PC of its next line with it in the mask.

    Returns ``(rows, land)``: ``rows`` the branch line indices, ``land`` int64[len(rows), 32]
    (-1 where the lane is not in the mask, or never appears in a mask again).
    """
    rows = np.flatnonzero(is_branch_line)
    land = np.full((len(rows), LANES), -1, np.int64)
    if not len(rows):
        return rows, land
    row_of = np.full(len(pc), -1, np.int64)
    row_of[rows] = np.arange(len(rows))
    lane_of, line_of = np.nonzero(in_mask_matrix(mask).T)  # sorted by lane, then line
    same_lane = lane_of[:-1] == lane_of[1:]
    src, dst, lane = line_of[:-1][same_lane], line_of[1:][same_lane], lane_of[:-1][same_lane]
    keep = is_branch_line[src]
    land[row_of[src[keep]], lane[keep]] = pc[dst[keep]]
    return rows, land


def lowest_direct_landings(pc: np.ndarray, mask: np.ndarray, flow: np.ndarray, target: np.ndarray) -> None:
    """Lower ``target[b]`` (int64 per PC, ``n_pcs`` = unknown) to the lowest landing other than
    ``b + 1`` seen at direct branch ``b`` in this warp (rule 2)."""
    rows, land = landings(pc, mask, flow[pc] == FLOW_DIRECT)
    if not len(rows):
        return
    b = pc[rows]
    big = len(target)
    candidates = np.where((land >= 0) & (land != (b + 1)[:, None]), land, big)
    np.minimum.at(target, b, candidates.min(axis=1))


# ---------------------------------------------------------------------------------------------
# Recovery (rules 1-3)
# ---------------------------------------------------------------------------------------------


def recover_groups(pc: np.ndarray, mask: np.ndarray, flow: np.ndarray, target: np.ndarray,
                   lanes: int, entry: int) -> np.ndarray:
    """The group (uint32 lane mask of the threads that executed it) of every line of one warp.

    ``pc``: int64 PC index per line; ``mask``: the lines' masks; ``flow``: FLOW_* per PC index;
    ``target``: direct-branch targets per PC index (``len(target)`` = unknown); ``lanes``: the
    warp's threads as a lane mask; ``entry``: the PC index every thread starts at.
    """
    pcs = pc.tolist()
    masks = mask.tolist()
    flows = flow.tolist()
    jumps = _jumps(pc, mask, flow, target)
    groups: list = []
    at = {entry: lanes}  # current PC index -> lanes there (n_pcs: fell past the last PC)
    for i, p in enumerate(pcs):
        m = masks[i]
        g = at.pop(p, 0)
        if m & ~g:
            g |= _repair(i, p, m & ~g, pcs, masks, flows, groups, at, lanes)
        groups.append(g)
        f = flows[p]
        if f == FLOW_NONE:
            at[p + 1] = at.get(p + 1, 0) | g
            continue
        rest = g & ~m  # guard false: no jump, no exit
        if rest:
            at[p + 1] = at.get(p + 1, 0) | rest
        if f == FLOW_EXIT:
            continue
        moves = jumps[i]
        if isinstance(moves, PathError):
            raise moves
        for dest, bits in moves:
            at[dest] = at.get(dest, 0) | bits
    left = 0
    for bits in at.values():
        left |= bits
    if left:
        lane = (left & -left).bit_length() - 1
        last = max((k for k, g in enumerate(groups) if (g >> lane) & 1), default=0)
        raise PathError(last, lane, "never executes an EXIT with its guard true (this is its last line)")
    return np.array(groups, np.uint32)


def _jumps(pc: np.ndarray, mask: np.ndarray, flow: np.ndarray, target: np.ndarray) -> dict:
    """Rule 2 for every branch line: line -> [(destination PC index, lanes)] for the lanes in its
    mask (or the PathError of a lane that never shows up again)."""
    rows, land = landings(pc, mask, (flow[pc] == FLOW_DIRECT) | (flow[pc] == FLOW_INDIRECT))
    if not len(rows):
        return {}
    b = pc[rows]
    t_direct = np.where(flow[b] == FLOW_DIRECT, target[b], len(flow))[:, None]
    nxt = (b + 1)[:, None]
    # landing on the next instruction: not taken (BRA.DIV on a converged warp), nothing skipped
    dest = np.where((t_direct <= land) & (land != nxt), t_direct, land)
    in_mask = in_mask_matrix(mask[rows])
    lost = in_mask & (land < 0)
    lowest = np.where(in_mask, dest, np.iinfo(np.int64).max).min(axis=1)
    highest = np.where(in_mask, dest, -1).max(axis=1)
    out = {}
    row_masks = mask[rows].tolist()
    any_lost = lost.any(axis=1).tolist()
    for r, (line, lo, hi, m) in enumerate(zip(rows.tolist(), lowest.tolist(), highest.tolist(), row_masks)):
        if any_lost[r]:
            lane = int(np.flatnonzero(lost[r])[0])
            out[line] = PathError(line, lane, "takes this branch but never appears in a later line's mask, "
                                              "so it never reaches an EXIT")
        elif hi < 0:
            out[line] = []
        elif lo == hi:  # the usual case: every taken thread goes to one place
            out[line] = [(lo, m)]
        else:
            by_dest: dict = {}
            for lane in np.flatnonzero(in_mask[r]).tolist():
                d = int(dest[r, lane])
                by_dest[d] = by_dest.get(d, 0) | (1 << lane)
            out[line] = list(by_dest.items())
    return out


def _repair(i, p, stray, pcs, masks, flows, groups, at, lanes) -> int:
    """Rule 3 for the lanes in line ``i``'s mask whose current PC is not ``p``; returns them."""
    fixed = 0
    while stray:
        low = stray & -stray
        stray ^= low
        lane = low.bit_length() - 1
        if not lanes & low:
            raise PathError(i, lane, "is in the mask but the CTA has no thread in that lane")
        back = None  # line where the lane ran past p on a wrong group's lines
        confirmed = None  # the lane's last line with it in the mask
        for k in range(i - 1, -1, -1):
            if not groups[k] & low:
                continue
            if masks[k] & low:
                confirmed = k
                break
            if pcs[k] == p:
                back = k
                break
        if back is None:
            if confirmed is None:
                raise PathError(i, lane, "is in the mask, but no line before leads it here from the warp's "
                                         "first instruction")
            f = flows[pcs[confirmed]]
            if f == FLOW_EXIT:
                raise PathError(i, lane, "is in the mask but exited on {other}", confirmed)
            if f == FLOW_NONE:
                raise PathError(i, lane, "is in the mask, but its previous instruction ({other}) is not a branch "
                                         "and the lines in between do not lead here", confirmed)
            back = confirmed + 1  # a taken jump that landed here directly
        for k in range(back, i):
            groups[k] &= ~low
        for q, bits in at.items():
            if bits & low:
                at[q] = bits & ~low
                break
        fixed |= low
    return fixed


def lane_sequences(groups: np.ndarray) -> tuple:
    """``(lane_of, line_of)``: every (lane, line) execution of a warp, by lane, then line order."""
    return np.nonzero(in_mask_matrix(groups).T)


# ---------------------------------------------------------------------------------------------
# CFG
# ---------------------------------------------------------------------------------------------


def transitions(pc: np.ndarray, groups: np.ndarray, n_pcs: int) -> np.ndarray:
    """Unique codes ``a * (n_pcs + 1) + b`` of every step a -> b of the warp's threads; ``b = n_pcs``
    is the step into the virtual exit (a thread's last PC)."""
    lane_of, line_of = lane_sequences(groups)
    if not len(lane_of):
        return np.zeros(0, np.int64)
    seq = pc[line_of]
    nxt = np.empty_like(seq)
    nxt[:-1] = seq[1:]
    last = np.ones(len(seq), np.bool_)
    last[:-1] = lane_of[:-1] != lane_of[1:]
    nxt[last] = n_pcs
    return np.unique(seq * (n_pcs + 1) + nxt)


@dataclass
class KernelCFG:
    """The recovered CFG in the trace's layout, plus the PC-index -> block/instruction maps."""

    block_start: np.ndarray
    succ_ptr: np.ndarray
    succ_idx: np.ndarray
    ipdom: np.ndarray
    has_barrier: np.ndarray
    instr_pc: np.ndarray  # PC index of every instruction, in instruction order
    is_leader: np.ndarray  # bool per PC index: first instruction of its block
    block_of_pc: np.ndarray  # block id per PC index

    @property
    def n_blocks(self) -> int:
        return len(self.block_start) - 1


def build_cfg(codes: np.ndarray, n_pcs: int, ends_block: np.ndarray, is_barrier: np.ndarray, entry: int) -> KernelCFG:
    """Blocks and edges from the step codes of :func:`transitions` (all warps).

    A PC that has trace lines but that no recovered thread executed (every line there had an
    empty mask and no thread at that PC) owns no instruction; the others keep their order.
    """
    src, dst = np.divmod(np.asarray(codes, np.int64), n_pcs + 1)
    kept = np.flatnonzero(np.bincount(src, minlength=n_pcs) > 0)  # executed PC indices
    new_of = np.full(n_pcs + 1, -1, np.int64)
    new_of[kept] = np.arange(len(kept))
    n = len(kept)
    new_of[n_pcs] = n  # the virtual exit
    src, dst = new_of[src], new_of[dst]
    ends_block = np.asarray(ends_block, np.bool_)[kept]
    entry = int(new_of[entry])

    n_succ = np.bincount(src, minlength=n)
    n_pred = np.bincount(dst[dst < n], minlength=n)
    falls = np.zeros(n, np.bool_)  # the one successor is the next instruction
    falls[src[(dst == src + 1) & (dst < n)]] = True
    boundary = ends_block | (n_succ != 1) | ~falls  # a block ends after PC a
    boundary[:-1] |= n_pred[1:] != 1
    if entry:
        boundary[entry - 1] = True
    leader = np.zeros(n, np.bool_)
    leader[0] = True
    leader[1:] = boundary[:-1]
    leaders = np.flatnonzero(leader)
    run_of = np.cumsum(leader) - 1  # runs in PC order
    n_runs = len(leaders)
    entry_run = int(run_of[entry])
    order = [entry_run] + [r for r in range(n_runs) if r != entry_run]  # block id -> run
    block_of_run = np.empty(n_runs, np.int64)
    block_of_run[order] = np.arange(n_runs)
    run_end = np.append(leaders[1:], n)
    instr = np.concatenate([np.arange(leaders[r], run_end[r]) for r in order])
    block_start = np.zeros(n_runs + 2, np.int32)
    block_start[1:-1] = np.cumsum((run_end - leaders)[order])
    block_start[-1] = block_start[-2]
    exit_block = n_runs
    block_of = block_of_run[run_of]

    succs: list = [[] for _ in range(n_runs + 1)]
    for a, b in zip(src[boundary[src]].tolist(), dst[boundary[src]].tolist()):
        succs[int(block_of[a])].append(b)
    succ_lists = []
    for blk in range(n_runs + 1):
        last = int(instr[block_start[blk + 1] - 1]) if blk < n_runs else -1
        # taken targets in PC order, then the exit, then the fall-through (PTX's [L, fall-through])
        ordered = sorted(succs[blk], key=lambda b: (b == last + 1, b == n, b))
        succ_lists.append([exit_block if b == n else int(block_of[b]) for b in ordered])
    succ_ptr = np.zeros(n_runs + 2, np.int32)
    succ_ptr[1:] = np.cumsum([len(s) for s in succ_lists])
    succ_idx = np.array([b for s in succ_lists for b in s], np.int32)
    ipdom = immediate_postdominators(n_runs + 1, succ_ptr, succ_idx, exit_block)
    has_barrier = np.zeros(n_runs + 1, np.bool_)
    has_barrier[:n_runs] = np.asarray(is_barrier, np.bool_)[kept[instr[block_start[1:-1] - 1]]]

    is_leader = np.zeros(n_pcs, np.bool_)
    is_leader[kept[leader]] = True
    block_of_pc = np.full(n_pcs, -1, np.int64)
    block_of_pc[kept] = block_of
    return KernelCFG(block_start=block_start, succ_ptr=succ_ptr, succ_idx=succ_idx,
                     ipdom=np.asarray(ipdom, np.int32), has_barrier=has_barrier, instr_pc=kept[instr],
                     is_leader=is_leader, block_of_pc=block_of_pc)
