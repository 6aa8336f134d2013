"""Thread paths and the CFG from an Accel-Sim warp trace (the rules are in docs/trace.md).

Input, per warp: its trace lines in order, each a PC (as an index into the kernel's sorted list
of executed PCs, so the next instruction of ``p`` is ``p + 1``) and a mask. Nothing here reads
files; :mod:`simt_fast.trace.accelsim` scans the text and calls these functions. They are numba
kernels over the scanner's flat line store (every warp in one call); the plain-Python
implementation of the same rules, which the differential tests compare them with, is
:mod:`simt_fast.trace.accelsim_reference`.

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

from .._jit import helper, hot_helper, jit
from ..ir.graph import immediate_postdominators
from .accelsim_scan import popcount32
from .accelsim_text import (BYTE0, DONE, GROUP0, K_LIST, K_NONE, K_STRIDE, KIND_BITS, LANES, MASK0, NEW_GROUP,
                            NEW_MASK, NEW_SLOT, ROW0, SLOT0)
from .model import NO_ACCESS
from .sass import FLOW_DIRECT, FLOW_EXIT, FLOW_INDIRECT, FLOW_NONE


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


# What a PathError says, by code (the compiled recovery reports codes).
NO_LANE, UNREACHED, AFTER_EXIT, NOT_A_BRANCH, LOST, NO_EXIT = range(1, 7)
PATH_ERRORS = {
    NO_LANE: "is in the mask but the CTA has no thread in that lane",
    UNREACHED: "is in the mask, but no line before leads it here from the warp's first instruction",
    AFTER_EXIT: "is in the mask but exited on {other}",
    NOT_A_BRANCH: "is in the mask, but its previous instruction ({other}) is not a branch and the lines in between "
                  "do not lead here",
    LOST: "takes this branch but never appears in a later line's mask, so it never reaches an EXIT",
    NO_EXIT: "never executes an EXIT with its guard true (this is its last line)",
}
ERR_CODE, ERR_KEY, ERR_LINE, ERR_LANE, ERR_OTHER = range(5)  # the ``err`` array of the kernels

_DEBRUIJN = np.array([0, 1, 28, 2, 29, 14, 24, 3, 30, 22, 20, 15, 25, 17, 4, 8, 31, 27, 13, 23, 21, 19, 16, 7, 26, 12,
                      18, 6, 11, 5, 10, 9], np.int64)
_NO_ACCESS = np.uint64(NO_ACCESS)


@hot_helper
def _lane(low):
    """Index of the single set bit of ``low`` (a 32-bit lane mask)."""
    return _DEBRUIJN[((low * 0x077CB531) & 0xFFFFFFFF) >> 27]


@hot_helper
def _varint(buf, pos):
    """(value as int64 bits, next position) of the LEB128 varint at buf[pos:]."""
    z = 0
    shift = 0
    while True:
        b = np.int64(buf[pos])
        pos += 1
        z |= (b & 0x7F) << shift
        if b < 0x80:
            return z, pos
        shift += 7


@hot_helper
def _unzigzag(z):
    return ((z >> 1) & 0x7FFFFFFFFFFFFFFF) ^ -(z & 1)


@helper
def _warp_rows(key, warp_info, row_flags, slots, masks, pc_of_slot, pcs, lmasks):
    """Decode warp ``key``'s lines (accelsim_text, *The store*): the PC index and mask of each into
    ``pcs`` and ``lmasks``; returns their count."""
    r0, n = warp_info[key, ROW0], warp_info[key, DONE] - 1
    si, mi = warp_info[key, SLOT0], warp_info[key, MASK0]
    slot = 0
    m = 0
    for i in range(n):
        f = row_flags[r0 + i]
        if f & NEW_SLOT:
            slot = np.int64(slots[si])
            si += 1
        else:
            slot += 1
        if f & NEW_MASK:
            m = np.int64(masks[mi])
            mi += 1
        pcs[i] = pc_of_slot[slot]
        lmasks[i] = m
    return n


@jit
def _longest_warp(warp_info):
    n = 1
    for key in range(warp_info.shape[0]):
        n = max(n, warp_info[key, DONE] - 1)
    return n


# ---------------------------------------------------------------------------------------------
# Direct-branch targets (rule 2)
# ---------------------------------------------------------------------------------------------


@jit
def direct_targets(row_flags, slots, masks, warp_info, pc_of_slot, flow, target):
    """Lower ``target[b]`` (int64 per PC index, ``n_pcs`` = unknown) to the lowest landing other
    than ``b + 1`` of any thread at any execution of direct branch ``b``, over every warp.

    A lane's landing at a branch line is the PC of its next line with it in the mask: walking a
    warp's lines backwards, ``next_pc[lane]`` holds it."""
    n_max = _longest_warp(warp_info)
    pcs, lmasks = np.zeros(n_max, np.int64), np.zeros(n_max, np.int64)
    next_pc = np.zeros(LANES, np.int64)
    for key in range(warp_info.shape[0]):
        n = _warp_rows(key, warp_info, row_flags, slots, masks, pc_of_slot, pcs, lmasks)
        next_pc[:] = -1
        for i in range(n - 1, -1, -1):
            p = pcs[i]
            m = lmasks[i]
            if flow[p] == FLOW_DIRECT:
                best = target[p]
                mm = m
                while mm:
                    low = mm & -mm
                    mm ^= low
                    land = next_pc[_lane(low)]
                    if land >= 0 and land != p + 1 and land < best:
                        best = land
                target[p] = best
            while m:
                low = m & -m
                m ^= low
                next_pc[_lane(low)] = p


# ---------------------------------------------------------------------------------------------
# Recovery of one warp (rules 1-3)
# ---------------------------------------------------------------------------------------------


@helper
def _fail(err, code, line, lane, other):
    err[ERR_CODE] = code
    err[ERR_LINE] = line
    err[ERR_LANE] = lane
    err[ERR_OTHER] = other
    return False


@hot_helper
def _put(at_pc, at_bits, n_at, pc, bits):
    """Add ``bits`` to the lanes at ``pc``; returns the new entry count."""
    for k in range(n_at):
        if at_pc[k] == pc:
            at_bits[k] |= bits
            return n_at
    at_pc[n_at] = pc
    at_bits[n_at] = bits
    return n_at + 1


@helper
def _branch_lanes(pcs, lmasks, n, flow):
    """Upper bound of the move entries of a warp: the lanes in its branch lines' masks."""
    total = 0
    for i in range(n):
        f = flow[pcs[i]]
        if f == FLOW_DIRECT or f == FLOW_INDIRECT:
            total += popcount32(lmasks[i])
    return total


@helper
def _moves(pcs, lmasks, n, flow, target, always, next_pc, move_first, move_count, move_dest, move_bits):
    """Rule 2 for every branch line of the warp: where the lanes of its mask go, as entries
    (destination PC index, lanes) at ``move_first[i]``, ``move_count[i]`` of them; one entry with
    destination -1 and the lowest such lane when a lane never shows up in a later mask.
    ``always[p]``: the direct branch at ``p`` jumps for every lane of its mask (its target stated)."""
    for lane in range(LANES):
        next_pc[lane] = -1
    used = 0
    for i in range(n - 1, -1, -1):
        p = pcs[i]
        m = lmasks[i]
        f = flow[p]
        move_first[i] = used
        move_count[i] = 0
        if (f == FLOW_DIRECT or f == FLOW_INDIRECT) and m:
            start = used
            lost = 0
            mm = m
            while mm:
                low = mm & -mm
                mm ^= low
                land = next_pc[_lane(low)]
                if land < 0:
                    lost |= low
                    continue
                dest = land
                # a direct branch lands at its target; a later landing was predicated off on the way;
                # landing on the next instruction means not taken (BRA.DIV on a converged warp), unless
                # the branch always jumps (then the lane went round to it predicated off)
                if f == FLOW_DIRECT and target[p] <= land and (land != p + 1 or always[p]):
                    dest = target[p]
                k = start
                while k < used and move_dest[k] != dest:
                    k += 1
                if k == used:
                    move_dest[used] = dest
                    move_bits[used] = low
                    used += 1
                else:
                    move_bits[k] |= low
            if lost:
                used = start
                move_dest[used] = -1
                move_bits[used] = lost & -lost
                used += 1
            move_count[i] = used - start
        while m:
            low = m & -m
            m ^= low
            next_pc[_lane(low)] = p


@helper
def _repair(i, p, stray, pcs, lmasks, flow, groups, lanes, at_pc, at_bits, n_at, err):
    """Rule 3 for the lanes of line ``i``'s mask whose current PC is not ``p``. Returns (ok, the
    lanes moved back here, the new entry count)."""
    fixed = 0
    while stray:
        low = stray & -stray
        stray ^= low
        lane = _lane(low)
        if not lanes & low:
            return _fail(err, NO_LANE, i, lane, -1), 0, n_at
        back = -1  # line where the lane ran past p on a wrong group's lines
        confirmed = -1  # the lane's last line with it in the mask
        for k in range(i - 1, -1, -1):
            if not groups[k] & low:
                continue
            if lmasks[k] & low:
                confirmed = k
                break
            if pcs[k] == p:
                back = k
                break
        if back < 0:
            if confirmed < 0:
                return _fail(err, UNREACHED, i, lane, -1), 0, n_at
            f = flow[pcs[confirmed]]
            if f == FLOW_EXIT:
                return _fail(err, AFTER_EXIT, i, lane, confirmed), 0, n_at
            if f == FLOW_NONE:
                return _fail(err, NOT_A_BRANCH, i, lane, confirmed), 0, n_at
            back = confirmed + 1  # a taken jump that landed here directly
        for k in range(back, i):
            groups[k] &= ~low
        for k in range(n_at):
            if at_bits[k] & low:
                at_bits[k] &= ~low
                if at_bits[k] == 0:
                    n_at -= 1
                    at_pc[k] = at_pc[n_at]
                    at_bits[k] = at_bits[n_at]
                break
        fixed |= low
    return True, fixed, n_at


@helper
def _recover_warp(pcs, lmasks, n, lanes, entry, flow, groups, move_first, move_count, move_dest, move_bits, at_pc,
                  at_bits, err):
    """The group (lanes that executed it) of each of the warp's ``n`` lines, into ``groups``;
    False with ``err`` filled when no set of paths explains the lines (``_moves`` ran first)."""
    at_pc[0] = entry
    at_bits[0] = lanes
    n_at = 1  # the lanes waiting at each PC index (n_pcs: fell past the last PC)
    for i in range(n):
        p = pcs[i]
        m = lmasks[i]
        g = 0
        for k in range(n_at):
            if at_pc[k] == p:
                g = at_bits[k]
                n_at -= 1
                at_pc[k] = at_pc[n_at]
                at_bits[k] = at_bits[n_at]
                break
        if m & ~g:
            ok, fixed, n_at = _repair(i, p, m & ~g, pcs, lmasks, flow, groups, lanes, at_pc, at_bits, n_at, err)
            if not ok:
                return False
            g |= fixed
        groups[i] = g
        f = flow[p]
        if f == FLOW_NONE:
            if g:
                n_at = _put(at_pc, at_bits, n_at, p + 1, g)
            continue
        rest = g & ~m  # guard false: no jump, no exit
        if rest:
            n_at = _put(at_pc, at_bits, n_at, p + 1, rest)
        if f == FLOW_EXIT:
            continue
        for k in range(move_first[i], move_first[i] + move_count[i]):
            if move_dest[k] < 0:
                return _fail(err, LOST, i, _lane(move_bits[k]), -1)
            n_at = _put(at_pc, at_bits, n_at, move_dest[k], move_bits[k])
    left = 0
    for k in range(n_at):
        left |= at_bits[k]
    if left:
        low = left & -left
        last = 0
        for k in range(n - 1, -1, -1):
            if groups[k] & low:
                last = k
                break
        return _fail(err, NO_EXIT, last, _lane(low), -1)
    return True


@jit
def recover_warps(order, row_flags, slots, masks, warp_info, wpc, tpc, entry, pc_of_slot, flow, target, always, is_mem,
                  n_pcs, group_stream, err):
    """Recover every warp, in the order of the keys ``order`` (the file's); the totals and the CFG's
    steps. The groups are kept as the masks are (accelsim_text, *The store*): a changed one goes to
    ``group_stream`` (room for one per line) and its line's flags get NEW_GROUP; ``warp_info``'s
    GROUP0 column says where each warp's start. Returns (groups kept; step codes ``a * (n_pcs + 1)
    + b``, unique and sorted, ``b = n_pcs`` the step into the virtual exit; thread instructions;
    lines no thread executed; memory lines without addresses). On failure ``err`` holds the code,
    warp key, line, lane and other line, and the codes are empty."""
    n_max = _longest_warp(warp_info)
    pcs, lmasks, groups = np.zeros(n_max, np.int64), np.zeros(n_max, np.int64), np.zeros(n_max, np.int64)
    move_first, move_count = np.zeros(n_max, np.int64), np.zeros(n_max, np.int64)
    move_dest, move_bits = np.zeros(LANES, np.int64), np.zeros(LANES, np.int64)
    next_pc = np.zeros(LANES, np.int64)
    at_pc = np.zeros(LANES + 1, np.int64)
    at_bits = np.zeros(LANES + 1, np.int64)
    last = np.zeros(LANES, np.int64)
    falls = np.zeros(n_pcs + 1, np.bool_)  # step a -> a + 1 seen (the common one, kept out of the set)
    ends = np.zeros(n_pcs + 1, np.bool_)  # a thread's last PC
    table = np.full(1 << 10, -1, np.int64)  # other steps: an open-addressing set of codes
    n_table = 0
    thread_insts = empty = addressless = n_groups = 0
    for key in order:
        n = _warp_rows(key, warp_info, row_flags, slots, masks, pc_of_slot, pcs, lmasks)
        lanes = (1 << min(LANES, tpc - (key % wpc) * LANES)) - 1
        need = _branch_lanes(pcs, lmasks, n, flow)
        if need > len(move_dest):
            move_dest = np.zeros(2 * need, np.int64)
            move_bits = np.zeros(2 * need, np.int64)
        _moves(pcs, lmasks, n, flow, target, always, next_pc, move_first, move_count, move_dest, move_bits)
        if not _recover_warp(pcs, lmasks, n, lanes, entry, flow, groups, move_first, move_count, move_dest, move_bits,
                             at_pc, at_bits, err):
            err[ERR_KEY] = key
            return 0, np.zeros(0, np.int64), 0, 0, 0
        r0 = warp_info[key, ROW0]
        warp_info[key, GROUP0] = n_groups
        last[:] = -1
        for i in range(n):
            p = pcs[i]
            g = groups[i]
            if i == 0 or g != groups[i - 1]:
                row_flags[r0 + i] |= NEW_GROUP
                group_stream[n_groups] = g
                n_groups += 1
            else:
                row_flags[r0 + i] &= ~NEW_GROUP
            thread_insts += popcount32(g)
            if g == 0:
                empty += 1
            if is_mem[p] and (row_flags[r0 + i] & KIND_BITS) == K_NONE:
                addressless += 1
            while g:
                low = g & -g
                g ^= low
                lane = _lane(low)
                a = last[lane]
                last[lane] = p
                if a < 0:
                    continue
                if p == a + 1:
                    falls[a] = True
                    continue
                code = a * (n_pcs + 1) + p
                if 2 * (n_table + 1) > len(table):
                    old = table
                    table = np.full(2 * len(old), -1, np.int64)
                    for c in old:
                        if c >= 0:
                            b = (c * 0x9E3779B1) & (len(table) - 1)
                            while table[b] >= 0:
                                b = (b + 1) & (len(table) - 1)
                            table[b] = c
                b = (code * 0x9E3779B1) & (len(table) - 1)
                while table[b] >= 0 and table[b] != code:
                    b = (b + 1) & (len(table) - 1)
                if table[b] < 0:
                    table[b] = code
                    n_table += 1
        for lane in range(LANES):
            if last[lane] >= 0:
                ends[last[lane]] = True
    codes = np.empty(n_table + 2 * (n_pcs + 1), np.int64)
    k = 0
    for c in table:
        if c >= 0:
            codes[k] = c
            k += 1
    for a in range(n_pcs + 1):
        if falls[a]:
            codes[k] = a * (n_pcs + 1) + a + 1
            k += 1
        if ends[a]:
            codes[k] = a * (n_pcs + 1) + n_pcs
            k += 1
    return n_groups, np.sort(codes[:k]), thread_insts, empty, addressless


@hot_helper
def _next_group(row_flags, r, group_stream, gi, g):
    """The group of line ``r`` given the previous line's ``g`` and the stream position ``gi``."""
    if row_flags[r] & NEW_GROUP:
        return np.int64(group_stream[gi]), gi + 1
    return g, gi


@jit
def emit_threads(ctas, row_flags, slots, masks, addr_bytes, group_stream, warp_info, wpc, tpc, pc_of_slot, is_mem,
                 addr_base, is_leader, block_of_pc, exit_block):
    """Every thread of the CTAs ``ctas`` (consecutive, CTA linear order): its block path and its
    /mem entries, from the groups :func:`recover_warps` kept. Returns (path_ptr, path, mem_ptr,
    mem) with local CSR offsets from 0."""
    n_max = 1
    for c in ctas:
        for w in range(wpc):
            n_max = max(n_max, warp_info[c * wpc + w, DONE] - 1)
    pcs, lmasks = np.zeros(n_max, np.int64), np.zeros(n_max, np.int64)
    n_threads = len(ctas) * tpc
    path_len = np.ones(n_threads, np.int64)  # the virtual exit ends every path
    mem_len = np.zeros(n_threads, np.int64)
    for ci in range(len(ctas)):
        for w in range(wpc):
            key = ctas[ci] * wpc + w
            n = _warp_rows(key, warp_info, row_flags, slots, masks, pc_of_slot, pcs, lmasks)
            r0, gi, g = warp_info[key, ROW0], warp_info[key, GROUP0], 0
            t0 = ci * tpc + w * LANES
            for i in range(n):
                g, gi = _next_group(row_flags, r0 + i, group_stream, gi, g)
                p = pcs[i]
                if not is_leader[p] and not is_mem[p]:
                    continue
                gg = g
                while gg:
                    low = gg & -gg
                    gg ^= low
                    t = t0 + _lane(low)
                    path_len[t] += is_leader[p]
                    mem_len[t] += is_mem[p]
    path_ptr = np.zeros(n_threads + 1, np.int64)
    mem_ptr = np.zeros(n_threads + 1, np.int64)
    path_ptr[1:] = np.cumsum(path_len)
    mem_ptr[1:] = np.cumsum(mem_len)
    path = np.empty(path_ptr[-1], np.uint32)
    mem = np.empty(mem_ptr[-1], np.uint64)
    path_at = path_ptr[:-1].copy()
    mem_at = mem_ptr[:-1].copy()
    listed = np.zeros(LANES, np.int64)  # the current line's addresses, thread by thread of its mask
    for ci in range(len(ctas)):
        for w in range(wpc):
            key = ctas[ci] * wpc + w
            n = _warp_rows(key, warp_info, row_flags, slots, masks, pc_of_slot, pcs, lmasks)
            r0, gi, g = warp_info[key, ROW0], warp_info[key, GROUP0], 0
            t0 = ci * tpc + w * LANES
            pos = warp_info[key, BYTE0]
            prev = 0
            for i in range(n):
                g, gi = _next_group(row_flags, r0 + i, group_stream, gi, g)
                p = pcs[i]
                m = lmasks[i]
                kind = row_flags[r0 + i] & KIND_BITS
                if kind == K_LIST:
                    for k in range(popcount32(m)):
                        z, pos = _varint(addr_bytes, pos)
                        prev += _unzigzag(z)
                        listed[k] = prev
                elif kind == K_STRIDE:
                    z, pos = _varint(addr_bytes, pos)
                    prev += _unzigzag(z)
                    z, pos = _varint(addr_bytes, pos)
                    stride = _unzigzag(z)
                    for k in range(popcount32(m)):
                        listed[k] = prev + k * stride
                if not is_leader[p] and not is_mem[p]:
                    continue
                base = addr_base[p]
                rank = 0  # lanes of the mask below the current one (the group holds the mask; lanes in order)
                gg = g
                while gg:
                    low = gg & -gg
                    gg ^= low
                    t = t0 + _lane(low)
                    if is_leader[p]:
                        path[path_at[t]] = block_of_pc[p]
                        path_at[t] += 1
                    if is_mem[p]:
                        if not m & low:
                            a_out = _NO_ACCESS  # executed with a false guard
                        elif kind == K_NONE:
                            a_out = np.uint64(0)  # the line lists no address (LDC, texture, ...): offset 0
                        else:
                            a_out = np.uint64(listed[rank])
                            # shared/local addresses in the generic window become offsets in it
                            if base > np.uint64(0) and a_out >= base:
                                a_out -= base
                        mem[mem_at[t]] = a_out
                        mem_at[t] += 1
                    if m & low:
                        rank += 1
    for t in range(n_threads):
        path[path_at[t]] = exit_block
    return path_ptr, path, mem_ptr, mem


# ---------------------------------------------------------------------------------------------
# CFG
# ---------------------------------------------------------------------------------------------


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
