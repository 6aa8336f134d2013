"""The Accel-Sim import in plain Python: the reference the compiled importer is tested against.

Every line goes through :class:`~simt_fast.trace.accelsim_text.LineReader` (the compiled scanner
takes most lines itself); the thread paths come from the rules of
:mod:`simt_fast.trace.accelsim_paths` written with Python loops and numpy per warp, as the first
importer had them; the CFG and the trace arrays are assembled by the shared code of
:mod:`simt_fast.trace.accelsim`. About 3 MB of trace text per second: for tests and small traces.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from . import accelsim
from .accelsim_paths import AFTER_EXIT, LOST, NO_EXIT, NO_LANE, NOT_A_BRANCH, PATH_ERRORS, UNREACHED, PathError
from .accelsim_text import (BYTE0, DONE, K_LIST, K_NONE, K_STRIDE, KIND_BITS, LANES, MASK0, NEW_MASK, NEW_SLOT, ROW0,
                            SLOT0, LineReader, LineStore, ScannedKernel, scanned, text_lines, unzigzag)
from .model import NO_ACCESS, Trace
from .sass import FLOW_DIRECT, FLOW_EXIT, FLOW_INDIRECT, FLOW_NONE

WARP = LANES
_LANE_BITS = np.arange(LANES, dtype=np.uint32)


def read_kernel(path, progress=None) -> ScannedKernel:
    """Every line of a ``.traceg`` / ``.traceg.xz`` through the line reader."""
    path = Path(path)
    reader = LineReader(str(path), LineStore())
    digest = hashlib.sha256()
    for number, text in text_lines(path, progress, digest):
        reader.feed(number, text)
    return scanned(path, reader, digest.hexdigest())


@dataclass
class WarpLines:
    pc: np.ndarray  # PC index per line (int64)
    mask: np.ndarray  # uint32
    has_addr: np.ndarray  # bool: the line lists addresses
    addr_ptr: np.ndarray  # int64: first address of the line in ``addrs``
    addrs: np.ndarray  # uint64: the listed addresses, thread by thread of the mask


def warp_lines(kern: accelsim.RecoveredKernel, key: int) -> WarpLines:
    """Warp ``key``'s lines from the store (accelsim_text, *The store*), in plain Python."""
    k = kern.scanned
    r0, n, si, mi, pos = (int(v) for v in k.warp_info[key, [ROW0, DONE, SLOT0, MASK0, BYTE0]])
    data = k.addr_bytes.tobytes()

    def varint():
        nonlocal pos
        z = shift = 0
        while True:
            b = data[pos]
            pos += 1
            z |= (b & 0x7F) << shift
            shift += 7
            if b < 0x80:
                return z

    pcs, masks, kinds, addrs, addr_ptr = [], [], [], [], []
    slot = mask = prev = 0
    for r in range(r0, r0 + n - 1):
        flags = int(k.row_flags[r])
        if flags & NEW_SLOT:
            slot, si = int(k.slots[si]), si + 1
        else:
            slot += 1
        if flags & NEW_MASK:
            mask, mi = int(k.masks[mi]), mi + 1
        pcs.append(int(kern.pc_of_slot[slot]))
        masks.append(mask)
        kind = flags & KIND_BITS
        kinds.append(kind)
        addr_ptr.append(len(addrs))
        if kind == K_LIST:
            for _ in range(mask.bit_count()):
                prev = (prev + unzigzag(varint())) % 2**64
                addrs.append(prev)
        elif kind == K_STRIDE:
            prev = (prev + unzigzag(varint())) % 2**64
            stride = unzigzag(varint())
            addrs += [(prev + j * stride) % 2**64 for j in range(mask.bit_count())]
    return WarpLines(pc=np.array(pcs, np.int64), mask=np.array(masks, np.uint32),
                     has_addr=np.array(kinds, np.int64) != K_NONE, addr_ptr=np.array(addr_ptr, np.int64),
                     addrs=np.array(addrs, np.uint64))


# ---------------------------------------------------------------------------------------------
# Paths (rules 1-3 of accelsim_paths)
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




def recover_groups(pc: np.ndarray, mask: np.ndarray, flow: np.ndarray, target: np.ndarray, always: np.ndarray,
                   lanes: int, entry: int) -> np.ndarray:
    """The group (uint32 lane mask of the threads that executed it) of every line of one warp.

    ``pc``: int64 PC index per line; ``mask``: the lines' masks; ``flow``: FLOW_* per PC index;
    ``target``: direct-branch targets per PC index (``len(target)`` = unknown); ``always``: per PC
    index, the direct branch there jumps for every thread of its mask; ``lanes``: the warp's threads
    as a lane mask; ``entry``: the PC index every thread starts at.
    """
    pcs = pc.tolist()
    masks = mask.tolist()
    flows = flow.tolist()
    jumps = _jumps(pc, mask, flow, target, always)
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
        raise PathError(last, lane, PATH_ERRORS[NO_EXIT])
    return np.array(groups, np.uint32)


def _jumps(pc: np.ndarray, mask: np.ndarray, flow: np.ndarray, target: np.ndarray, always: np.ndarray) -> dict:
    """Rule 2 for every branch line: line -> [(destination PC index, lanes)] for the lanes in its
    mask (or the PathError of a lane that never shows up again)."""
    rows, land = landings(pc, mask, (flow[pc] == FLOW_DIRECT) | (flow[pc] == FLOW_INDIRECT))
    if not len(rows):
        return {}
    b = pc[rows]
    t_direct = np.where(flow[b] == FLOW_DIRECT, target[b], len(flow))[:, None]
    nxt = (b + 1)[:, None]
    # landing on the next instruction: not taken (BRA.DIV on a converged warp), nothing skipped; a
    # branch that always jumps went round to it
    dest = np.where((t_direct <= land) & ((land != nxt) | always[b][:, None]), t_direct, land)
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
            out[line] = PathError(line, lane, PATH_ERRORS[LOST])
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
            raise PathError(i, lane, PATH_ERRORS[NO_LANE])
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
                raise PathError(i, lane, PATH_ERRORS[UNREACHED])
            f = flows[pcs[confirmed]]
            if f == FLOW_EXIT:
                raise PathError(i, lane, PATH_ERRORS[AFTER_EXIT], confirmed)
            if f == FLOW_NONE:
                raise PathError(i, lane, PATH_ERRORS[NOT_A_BRANCH], confirmed)
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


# ---------------------------------------------------------------------------------------------
# Threads and the trace
# ---------------------------------------------------------------------------------------------


def _warp_threads(kern: accelsim.RecoveredKernel, w: WarpLines, groups: np.ndarray, n_lanes: int) -> tuple:
    """One warp's block paths and /mem entries: (path lengths, path, mem counts, mem addresses)."""
    pci = w.pc
    lane_of, line_of = lane_sequences(groups)
    seq = pci[line_of]
    lead = kern.cfg.is_leader[seq]
    blocks, block_lanes = kern.cfg.block_of_pc[seq[lead]], lane_of[lead]
    exit_block = kern.cfg.n_blocks - 1
    lanes = np.arange(n_lanes)
    order = np.lexsort((np.concatenate([np.flatnonzero(lead), np.full(n_lanes, len(seq))]),
                        np.concatenate([block_lanes, lanes])))
    path = np.concatenate([blocks, np.full(n_lanes, exit_block)])[order]
    path_len = np.bincount(block_lanes, minlength=WARP)[:n_lanes] + 1

    mem = kern.is_mem[seq]
    lines, mem_lanes = line_of[mem], lane_of[mem].astype(np.uint64)
    masks = w.mask[lines].astype(np.uint64)
    in_mask = ((masks >> mem_lanes) & 1).astype(np.bool_)
    addr = np.where(in_mask, np.uint64(0), NO_ACCESS)  # lines without addresses (LDC, TEX, ...): offset 0
    listed = in_mask & w.has_addr[lines]
    below = masks[listed] & ((np.uint64(1) << mem_lanes[listed]) - np.uint64(1))
    picked = w.addrs[w.addr_ptr[lines[listed]] + np.bitwise_count(below).astype(np.int64)]
    base = kern.addr_base[pci[lines[listed]]]
    # shared/local addresses in the generic window become offsets in the CTA's / thread's window
    addr[listed] = np.where((base > 0) & (picked >= base), picked - base, picked)
    mem_len = np.bincount(mem_lanes.astype(np.int64), minlength=WARP)[:n_lanes]
    return path_len, path, mem_len, addr


def load(path) -> Trace:
    """One kernel trace imported by the reference: the Trace :func:`accelsim.load` must equal."""
    k = read_kernel(path)
    kern = accelsim.prepare(k)
    order = accelsim.file_order(k).tolist()
    lines = {key: warp_lines(kern, key) for key in order}
    inferred = np.full(kern.n_pcs, kern.n_pcs, np.int64)
    for w in lines.values():
        lowest_direct_landings(w.pc, w.mask, kern.flow, inferred)
    tpc = k.header.threads_per_cta
    for flow, target, always in accelsim.branch_rules(kern, inferred):  # the stated targets first, if any
        kern.target, groups, codes, failed = target, {}, [], None
        for key, w in lines.items():
            n_lanes = min(WARP, tpc - (key % k.header.warps_per_cta) * WARP)
            try:
                groups[key] = recover_groups(w.pc, w.mask, flow, target, always, (1 << n_lanes) - 1, kern.entry)
            except PathError as e:
                failed = (key, e)
                break
            codes.append(transitions(w.pc, groups[key], kern.n_pcs))
        if failed is None:
            break
    if failed is not None:
        raise accelsim.path_error(k, *failed) from None
    kern.thread_insts = sum(int(np.bitwise_count(g).sum()) for g in groups.values())
    kern.empty_lines = sum(int((g == 0).sum()) for g in groups.values())
    kern.addressless = sum(int((kern.is_mem[w.pc] & ~w.has_addr).sum()) for w in lines.values())
    accelsim.with_cfg(kern, np.unique(np.concatenate(codes)))
    return accelsim.trace_of(kern, _cta_batches(kern, lines, groups))


def _cta_batches(kern, lines: dict, groups: dict):
    h = kern.scanned.header
    tpc, wpc = h.threads_per_cta, h.warps_per_cta
    for cta in range(h.n_ctas):
        parts = [_warp_threads(kern, lines[cta * wpc + w], groups[cta * wpc + w], min(WARP, tpc - w * WARP))
                 for w in range(wpc)]
        path_ptr = np.concatenate([[0], np.cumsum(np.concatenate([p[0] for p in parts]))]).astype(np.int64)
        mem_ptr = np.concatenate([[0], np.cumsum(np.concatenate([p[2] for p in parts]))]).astype(np.int64)
        yield (path_ptr, np.concatenate([p[1] for p in parts]).astype(np.uint32), mem_ptr,
               np.concatenate([p[3] for p in parts]).astype(np.uint64))
