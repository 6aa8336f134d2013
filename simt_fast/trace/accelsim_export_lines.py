"""The lines of an Accel-Sim warp trace from IPDOM issue records: which instruction, which mask, which
addresses (the hot loop of :mod:`simt_fast.trace.accelsim_export`).

Each issue record (:mod:`simt_fast.trace.ipdom_walk`) issues every instruction of its block with
its lanes. A line's mask is the lanes that executed the instruction with a true guard, as far as
the trace knows the guard (the NVBit tracer writes ``active & guard``):

* a memory instruction: the lanes whose ``/mem`` entry is an address (``NO_ACCESS`` = guard false);
  the addresses follow, lane by lane, plus the space's window base (shared, local);
* the branch or exit that ends a block: the lanes that leave it for anywhere but the next block in
  code order (a lane that falls through executed ``@p bra`` / ``@p ret`` with ``p`` false). The
  importer's path recovery (docs/trace.md) reads exactly this: a thread in a branch's mask jumps, a
  thread outside it continues at the next instruction;
* an indirect branch (``BRX``) and everything else: every lane of the record.

For each memory line the kernel also chooses the NVBit tracer's address compression: mode 1
(``base stride``) when the mask is one run of at least two lanes whose addresses have one 32-bit
stride, else mode 2 (``base delta...``); an empty mask is mode 1 with base 0 and stride 0, as the
tracer writes it. :func:`warp_lines_reference` is the plain-Python model.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._jit import jit
from .model import NO_ACCESS

# instruction kinds
PLAIN, MEMORY, DIRECT, EXIT, INDIRECT = 0, 1, 2, 3, 4
# memory line address modes (the tracer's), NONE for lines without addresses
MODE_NONE, MODE_STRIDE, MODE_DELTA = 0, 1, 2
_INT32 = 1 << 31


@dataclass
class WarpLines:
    """The lines of the warps of one issue stream, warp by warp (``warp_ptr`` as the stream's)."""

    warp_ptr: np.ndarray  # int64[n_warps + 1] into the lines
    instr: np.ndarray  # int64[n_lines]
    mask: np.ndarray  # uint64[n_lines]
    mode: np.ndarray  # int64[n_lines]: MODE_*
    stride: np.ndarray  # int64[n_lines]: mode 1's stride
    addr_ptr: np.ndarray  # int64[n_lines + 1] into addr
    addr: np.ndarray  # uint64: the addresses of memory lines, lane order


@jit
def _lines(W, tpc, cta_start, cta_stop, block_start, kind, addr_base, fall, path_ptr, path, mem_ptr, mem_addr,
           rec_ptr, rec_block, rec_mask, warp_ptr, l_instr, l_mask, l_mode, l_stride, addr_ptr, addr):
    wpc = (tpc + W - 1) // W
    pos = np.zeros(64, np.int64)
    mcur = np.zeros(64, np.int64)
    nl = 0
    na = 0
    w = 0
    warp_ptr[0] = 0
    for cta in range(cta_start, cta_stop):
        for wi in range(wpc):
            t0 = cta * tpc + wi * W
            lanes = min(W, tpc - wi * W)
            for lane in range(lanes):
                pos[lane] = path_ptr[t0 + lane]
                mcur[lane] = mem_ptr[t0 + lane]
            for r in range(rec_ptr[w], rec_ptr[w + 1]):
                b = rec_block[r]
                m = rec_mask[r]
                last = block_start[b + 1] - 1
                for i in range(block_start[b], block_start[b + 1]):
                    k = kind[i]
                    lm = m
                    addr_ptr[nl] = na
                    l_mode[nl] = 0
                    l_stride[nl] = 0
                    if k == 1:
                        lm = np.int64(0)
                        first = na
                        for lane in range(lanes):
                            if (m >> lane) & 1:
                                a = mem_addr[mcur[lane]]
                                mcur[lane] += 1
                                if a != NO_ACCESS:
                                    lm |= np.int64(1) << lane
                                    addr[na] = a + addr_base[i]
                                    na += 1
                        n = na - first
                        mode = 2
                        if n == 0:
                            mode = 1
                        elif n >= 2:
                            low = lm & -lm
                            run = lm // low  # the mask shifted down to its first lane
                            if (run & (run + 1)) == 0:  # one run of lanes
                                d = np.int64(addr[first + 1] - addr[first])
                                if -2147483648 <= d < 2147483648:
                                    mode = 1
                                    for j in range(first + 2, na):
                                        if np.int64(addr[j] - addr[j - 1]) != d:
                                            mode = 2
                                            break
                                    if mode == 1:
                                        l_stride[nl] = d
                        l_mode[nl] = mode
                    elif (k == 2 or k == 3) and i == last:
                        lm = np.int64(0)
                        for lane in range(lanes):
                            if (m >> lane) & 1 and path[pos[lane] + 1] != fall[b]:
                                lm |= np.int64(1) << lane
                    l_instr[nl] = i
                    l_mask[nl] = lm
                    nl += 1
                for lane in range(lanes):
                    if (m >> lane) & 1:
                        pos[lane] += 1
            w += 1
            warp_ptr[w] = nl
    addr_ptr[nl] = na
    return nl, na


def warp_lines(stream, trace, kind: np.ndarray, addr_base: np.ndarray, fall: np.ndarray) -> WarpLines:
    """The lines of ``stream``'s warps. ``kind`` (per instruction) is PLAIN/MEMORY/DIRECT/EXIT/INDIRECT,
    ``addr_base`` (uint64 per instruction) is added to its addresses, ``fall[b]`` is the block that
    follows ``b`` in code order (-1 for none)."""
    block_start = np.asarray(trace.block_start, np.int64)
    sizes = np.diff(block_start)
    before = np.concatenate(([0], np.cumsum(kind == MEMORY)))
    n_mem_in_block = before[block_start[1:]] - before[block_start[:-1]]
    n_lines = int(sizes[stream.block].sum())
    n_addr = int((n_mem_in_block[stream.block] * np.bitwise_count(stream.mask).astype(np.int64)).sum())
    out = WarpLines(np.zeros(len(stream.warp_ptr), np.int64), np.empty(n_lines, np.int64), np.empty(n_lines, np.int64),
                    np.empty(n_lines, np.int64), np.empty(n_lines, np.int64), np.empty(n_lines + 1, np.int64),
                    np.empty(n_addr, np.uint64))
    nl, na = _lines(stream.warp_size, trace.threads_per_cta, stream.cta_start, stream.cta_stop,
                    block_start, kind.astype(np.int64), addr_base.astype(np.uint64),
                    fall.astype(np.int64), np.asarray(trace.path_ptr, np.int64), np.asarray(trace.path, np.int64),
                    np.asarray(trace.mem_ptr, np.int64), np.asarray(trace.mem_addr, np.uint64), stream.warp_ptr,
                    stream.block, stream.mask.view(np.int64), out.warp_ptr, out.instr, out.mask, out.mode, out.stride,
                    out.addr_ptr, out.addr)
    out.mask = out.mask.view(np.uint64)
    out.addr = out.addr[:na]
    return out


def warp_lines_reference(stream, trace, kind, addr_base, fall) -> WarpLines:
    """Plain-Python model of :func:`warp_lines`."""
    tpc, W = trace.threads_per_cta, stream.warp_size
    warp_ptr, instr, masks, modes, strides, addr_ptr, addrs = [0], [], [], [], [], [], []
    w = 0
    for cta in range(stream.cta_start, stream.cta_stop):
        for w0 in range(0, tpc, W):
            lanes = range(min(W, tpc - w0))
            threads = [cta * tpc + w0 + lane for lane in lanes]
            pos = {lane: int(trace.path_ptr[t]) for lane, t in zip(lanes, threads)}
            mcur = {lane: int(trace.mem_ptr[t]) for lane, t in zip(lanes, threads)}
            for r in range(int(stream.warp_ptr[w]), int(stream.warp_ptr[w + 1])):
                b, m = int(stream.block[r]), int(stream.mask[r])
                active = [lane for lane in lanes if m >> lane & 1]
                first_i, end_i = int(trace.block_start[b]), int(trace.block_start[b + 1])
                for i in range(first_i, end_i):
                    addr_ptr.append(len(addrs))
                    mode, stride, lm = MODE_NONE, 0, m
                    if kind[i] == MEMORY:
                        got = []
                        for lane in active:
                            a = int(trace.mem_addr[mcur[lane]])
                            mcur[lane] += 1
                            if a != int(NO_ACCESS):
                                got.append((lane, (a + int(addr_base[i])) % (1 << 64)))
                        lm = sum(1 << lane for lane, _ in got)
                        values = [a for _, a in got]
                        addrs += values
                        diffs = [(y - x + (1 << 63)) % (1 << 64) - (1 << 63) for x, y in zip(values, values[1:])]
                        one_run = bool(got) and [lane for lane, _ in got] == list(range(got[0][0], got[0][0] + len(got)))
                        if not got:
                            mode = MODE_STRIDE
                        elif len(got) >= 2 and one_run and len(set(diffs)) == 1 and -_INT32 <= diffs[0] < _INT32:
                            mode, stride = MODE_STRIDE, diffs[0]
                        else:
                            mode = MODE_DELTA
                    elif kind[i] in (DIRECT, EXIT) and i == end_i - 1:
                        lm = sum(1 << lane for lane in active
                                 if int(trace.path[pos[lane] + 1]) != int(fall[b]))
                    instr.append(i)
                    masks.append(lm)
                    modes.append(mode)
                    strides.append(stride)
                for lane in active:
                    pos[lane] += 1
            w += 1
            warp_ptr.append(len(instr))
    addr_ptr.append(len(addrs))
    return WarpLines(np.array(warp_ptr, np.int64), np.array(instr, np.int64), np.array(masks, np.uint64),
                     np.array(modes, np.int64), np.array(strides, np.int64), np.array(addr_ptr, np.int64),
                     np.array(addrs, np.uint64))
