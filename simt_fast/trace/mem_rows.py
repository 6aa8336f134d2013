"""A trace's addresses as rows of 32 threads: how ``/mem`` is stored and what the timing loops read.

Row j of a group of ``2**shift`` consecutive threads holds entry j of each of its threads (`/mem`'s
entry j of a thread is its j-th memory instruction, DESIGN §3). Most rows are affine in the lane
(``base + lane * stride``: a coalesced access, a broadcast, a strided one, with some lanes
NO_ACCESS for a false guard): such a row is two words, its base and ``stride << 32 | void`` (bit l
of ``void``: lane l has NO_ACCESS, or no entry j). A row that is not (``NOT_AFFINE`` in its second
word) keeps its lanes' addresses in ``full``, from its first word on. ``row0[g]`` is group g's first
row; a group has as many rows as its thread with the most entries.

The encoding is exact: ``decode`` gives back every thread's entries. Files store ``/mem`` this way
when it is compact (docs/trace.md, *Addresses on disk*): a replicated-CTA Accel-Sim trace's 447 MB
of addresses are 28 MB of rows, all affine, so loading it and starting a simulation no longer
decompresses half a gigabyte. The timing loops read the same rows (`sim.memory.program`).
"""

from __future__ import annotations

import hashlib

import numpy as np

from .._jit import jit
from .schema import NO_ACCESS, TraceError

GROUP_SHIFT = 5  # 32 threads per group (the lanes' void bits fill the low word of a row's second word)
NOT_AFFINE = -1  # a row's second word when its lanes are in `full` (an affine row's is never -1: a row
# with stride -1 has an address, so not every lane is void)
MAX_PADDING = 2  # groups of 32 pay off if `full` takes at most this many times the entries
NO_ADDRESS = -1  # NO_ACCESS as the int64 the rows hold


def as_int64(mem_addr: np.ndarray) -> np.ndarray:
    """``/mem/mem_addr`` (uint64, NO_ACCESS = 2**64 - 1) as int64 (a view: NO_ACCESS reads as -1)."""
    return np.asarray(mem_addr, np.uint64).view(np.int64)


def group_rows(mem_ptr: np.ndarray, shift: int) -> np.ndarray:
    """``row0`` (int64[n_groups + 1]): each group's first row, the total last."""
    size = 1 << shift
    n = len(mem_ptr) - 1
    counts = np.zeros(-(-max(n, 1) // size) * size, np.int64)
    counts[:n] = np.diff(np.asarray(mem_ptr, np.int64))
    row0 = np.zeros(counts.shape[0] // size + 1, np.int64)
    np.cumsum(counts.reshape(-1, size).max(axis=1), out=row0[1:])
    return row0


@jit
def _row_records(mem_ptr, addr, shift, row0, rows):
    """Fill ``rows`` (module doc) with ``full`` offsets left 0; returns how many rows are not affine."""
    n = mem_ptr.shape[0] - 1
    size = 1 << shift
    not_affine = 0
    for g in range(row0.shape[0] - 1):
        for j in range(row0[g + 1] - row0[g]):
            r = row0[g] + j
            void = 0
            first = -1  # the first lane with an address, and that address
            a0 = 0
            stride = 0
            have_stride = False  # set by the second lane with an address
            affine = True
            for lane in range(size):
                t = (g << shift) + lane
                a = addr[mem_ptr[t] + j] if t < n and mem_ptr[t] + j < mem_ptr[t + 1] else NO_ADDRESS
                if a == NO_ADDRESS:
                    void |= 1 << lane
                elif first < 0:
                    first = lane
                    a0 = a
                elif not have_stride:
                    have_stride = True
                    stride = (a - a0) // (lane - first)
                    affine = affine and a == a0 + (lane - first) * stride
                elif a != a0 + (lane - first) * stride:
                    affine = False
            if affine and -(1 << 31) <= stride < (1 << 31):
                rows[2 * r] = a0 - first * stride if first >= 0 else 0
                rows[2 * r + 1] = (stride << 32) | void
            else:
                rows[2 * r] = 0
                rows[2 * r + 1] = NOT_AFFINE
                not_affine += 1
    return not_affine


@jit
def _fill_full(mem_ptr, addr, shift, row0, rows, full):
    """Copy the lanes of every row that is not affine into ``full`` and point the row at them."""
    n = mem_ptr.shape[0] - 1
    size = 1 << shift
    at = 0
    for g in range(row0.shape[0] - 1):
        for j in range(row0[g + 1] - row0[g]):
            r = row0[g] + j
            if rows[2 * r + 1] != NOT_AFFINE:
                continue
            rows[2 * r] = at
            for lane in range(size):
                t = (g << shift) + lane
                full[at + lane] = addr[mem_ptr[t] + j] if t < n and mem_ptr[t] + j < mem_ptr[t + 1] else NO_ADDRESS
            at += size


def encode(mem_ptr: np.ndarray, addr: np.ndarray, shift: int = GROUP_SHIFT) -> tuple:
    """(row0, rows, full) of the threads ``mem_ptr`` (CSR from 0) and their int64 ``addr``."""
    mem_ptr = np.asarray(mem_ptr, np.int64)
    row0 = group_rows(mem_ptr, shift)
    rows = np.empty(2 * max(int(row0[-1]), 1), np.int64)
    not_affine = _row_records(mem_ptr, addr, shift, row0, rows)
    full = np.empty(max(not_affine << shift, 1), np.int64)
    _fill_full(mem_ptr, addr, shift, row0, rows, full)
    return row0, rows, full


def pays_off(n_entries: int, full: np.ndarray, shift: int = GROUP_SHIFT) -> bool:
    """Groups of ``2**shift`` are compact: `full` holds at most MAX_PADDING times the entries (rows
    that are not affine and sparse, threads of a group with very different counts, pad it)."""
    return len(full) <= MAX_PADDING * n_entries + (1 << shift)


@jit
def _decode(mem_ptr, shift, row0, rows, full, out):
    n = mem_ptr.shape[0] - 1
    mask = (1 << shift) - 1
    for t in range(n):
        r = row0[t >> shift]
        lane = t & mask
        for j in range(mem_ptr[t + 1] - mem_ptr[t]):
            first = rows[2 * (r + j)]
            second = rows[2 * (r + j) + 1]
            if second == NOT_AFFINE:
                out[mem_ptr[t] + j] = full[first + lane]
            elif (second >> lane) & 1:
                out[mem_ptr[t] + j] = NO_ADDRESS
            else:
                out[mem_ptr[t] + j] = first + lane * (second >> 32)


def decode(mem_ptr: np.ndarray, rows: np.ndarray, full: np.ndarray, shift: int = GROUP_SHIFT) -> np.ndarray:
    """Every thread's entries (uint64, NO_ACCESS) from its rows."""
    mem_ptr = np.asarray(mem_ptr, np.int64)
    out = np.empty(int(mem_ptr[-1]), np.int64)
    _decode(mem_ptr, shift, group_rows(mem_ptr, shift), rows, full, out)
    return out.view(np.uint64)


assert NO_ACCESS == 2**64 - 1  # NO_ADDRESS is its int64 view


class RowEncoder:
    """Rows of a trace given batch by batch (consecutive threads, any counts): each call returns the
    rows and ``full`` lanes of the groups the batches completed, with ``full`` offsets counted over
    the whole trace; the last threads of a batch that do not fill a group wait for the next batch,
    and ``finish`` encodes them."""

    def __init__(self):
        self.counts = np.zeros(0, np.int64)  # the waiting threads' entry counts, and their entries
        self.addr = np.zeros(0, np.int64)
        self.n_full = 0  # lanes of `full` handed out so far

    def add(self, counts: np.ndarray, addr: np.ndarray, final: bool = False) -> tuple:
        """(rows, full) of the groups completed by these threads (``addr``: their int64 entries)."""
        if len(self.counts):
            counts = np.concatenate((self.counts, counts))
            addr = np.concatenate((self.addr, addr))
        size = 1 << GROUP_SHIFT
        n = len(counts) if final else len(counts) // size * size
        ptr = np.zeros(n + 1, np.int64)
        np.cumsum(counts[:n], out=ptr[1:])
        m = int(ptr[-1])
        self.counts = np.array(counts[n:], np.int64)
        self.addr = np.array(addr[m:], np.int64)
        if m == 0:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        _, rows, full = encode(ptr, addr[:m])
        pairs = rows.reshape(-1, 2)
        spilled = pairs[:, 1] == NOT_AFFINE
        pairs[spilled, 0] += self.n_full
        if not spilled.any():
            full = full[:0]  # (encode's placeholder)
        self.n_full += len(full)
        return rows, full

    def finish(self) -> tuple:
        """(rows, full) of the threads still waiting (the last, partial group)."""
        return self.add(np.zeros(0, np.int64), np.zeros(0, np.int64), final=True)


class StoredRows:
    """A loaded trace's ``/mem`` as its file stores it (rows, not yet addresses): ``Trace.mem_addr``
    decodes it on first read, and the timing loops read the rows as they are."""

    def __init__(self, mem_ptr: np.ndarray, rows: np.ndarray, full: np.ndarray, n_entries: int, addr_sha256: str,
                 source: str, shift: int = GROUP_SHIFT):
        self.mem_ptr = mem_ptr  # the entries per thread these rows were checked against
        self.rows = rows
        self.full = full
        self.n_entries = int(n_entries)
        # the digest part of the decoded addresses (io._ContentHash); None: not known (rows built in memory)
        self.addr_sha256 = None if addr_sha256 is None else str(addr_sha256)
        self.source = source
        self.shift = int(shift)

    def addresses(self) -> np.ndarray:
        """The decoded ``mem_addr``, checked against the digest part the writer stored."""
        addr = decode(self.mem_ptr, self.rows, self.full, self.shift)
        if self.addr_sha256 is not None and hashlib.sha256(addr.astype("<u8", copy=False)).hexdigest() != self.addr_sha256:
            raise TraceError(f"{self.source}: /mem decodes to addresses other than the ones written (the file was "
                             f"modified or damaged after it was written)")
        return addr
