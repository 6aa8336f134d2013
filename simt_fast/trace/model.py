"""The Trace data model (docs/DESIGN.md §3): a kernel's CFG plus every thread's block path.

A trace is what the timing core replays. Block ids index the CFG; the *last* block id
(``n_blocks - 1``) is the virtual exit block (no instructions), block 0 is the entry.
``block_start`` has ``n_blocks + 1`` entries, so block ``b`` owns instructions
``block_start[b]:block_start[b+1]`` and the virtual exit owns none.

Thread order in ``path_ptr``/``path``: CTA linear id major, thread linear id minor. A thread's
warp is ``thread_linear_id // warp_size`` within its CTA (chosen at simulation time).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from . import io
from .mem_rows import StoredRows
from .schema import (MEM_ATOMIC, MEM_FORMAT, MEM_LOAD, MEM_NONE, MEM_STORE, NO_ACCESS, PARAM_TAG, SCHEMA,  # noqa: F401
                     SCHEMA_MAJOR, TraceError)


class _Addresses:
    """``Trace.mem_addr``: an array, or the rows a file stores (`mem_rows.StoredRows`), decoded and
    checked on first read. Until then ``Trace.stored_rows()`` hands the rows to the timing loops,
    which read them as they are: loading a trace and simulating it never builds its addresses."""

    def __set_name__(self, owner, name):
        self.slot = name  # (a data descriptor wins over the instance dict: the value keeps the field's
        # name there, so ``Trace(**trace.__dict__)`` copies a trace as it always did)

    def __get__(self, obj, objtype=None):
        if obj is None:
            return None  # (the dataclass field's default)
        value = obj.__dict__.get(self.slot)
        if isinstance(value, StoredRows):
            value = value.addresses()
            obj.__dict__[self.slot] = value
        return value

    def __set__(self, obj, value):
        obj.__dict__[self.slot] = value


@dataclass
class Trace:
    # identity
    kernel: str
    grid: tuple  # (x, y, z) CTAs
    block: tuple  # (x, y, z) threads per CTA
    source_sha256: str = ""
    # /cfg
    block_start: np.ndarray = field(default_factory=lambda: np.zeros(1, np.int32))  # int32[n_blocks+1]
    succ_ptr: np.ndarray = field(default_factory=lambda: np.zeros(1, np.int32))  # int32[n_blocks+1]
    succ_idx: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))  # int32[n_edges]
    ipdom: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))  # int32[n_blocks]; -1 for exit
    label: list = field(default_factory=list)  # str per block ("" if none); exit is "<exit>"
    has_barrier: np.ndarray = field(default_factory=lambda: np.zeros(0, np.bool_))  # bool[n_blocks]
    # /instr
    op_class: np.ndarray = field(default_factory=lambda: np.zeros(0, np.uint8))  # uint8[n_instrs] (OpClass)
    dst_reg: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int16))  # int16[n_instrs], -1 none
    src_reg: np.ndarray = field(default_factory=lambda: np.zeros((0, 3), np.int16))  # int16[n_instrs,3]
    text: list = field(default_factory=list)  # PTX line per instruction, for humans
    # optional per-instruction memory facts: bytes one thread accesses (0: not memory), MEM_* kind
    mem_bytes: Optional[np.ndarray] = None  # uint8[n_instrs]
    mem_kind: Optional[np.ndarray] = None  # uint8[n_instrs]
    # /threads
    path_ptr: np.ndarray = field(default_factory=lambda: np.zeros(1, np.int64))  # int64[n_threads+1]
    path: np.ndarray = field(default_factory=lambda: np.zeros(0, np.uint16))  # uint16/uint32 block ids
    # /mem (optional): per memory instruction on each thread's path, CSR per thread (MEM_FORMAT)
    mem_ptr: Optional[np.ndarray] = None  # int64[n_threads+1]
    mem_addr: Optional[np.ndarray] = _Addresses()  # uint64[n_accesses] byte addresses (NO_ACCESS), in path order
    mem_format: str = ""  # MEM_FORMAT for the per-instruction layout; "" for older /mem groups
    # free-form extra attributes (e.g. workload name, size, launch args digest)
    attrs: dict = field(default_factory=dict)

    # ---- derived sizes -------------------------------------------------------------------
    @property
    def n_blocks(self) -> int:
        return int(len(self.block_start) - 1)

    @property
    def entry(self) -> int:
        return 0

    @property
    def exit(self) -> int:
        return self.n_blocks - 1

    @property
    def n_instrs(self) -> int:
        return int(self.block_start[-1])

    @property
    def n_threads(self) -> int:
        return int(len(self.path_ptr) - 1)

    @property
    def threads_per_cta(self) -> int:
        return int(np.prod(self.block))

    @property
    def n_ctas(self) -> int:
        return int(np.prod(self.grid))

    def block_sizes(self) -> np.ndarray:
        """Instructions per block (int64[n_blocks]); the exit block has 0."""
        return np.diff(self.block_start).astype(np.int64)

    @property
    def has_mem(self) -> bool:
        """Addresses the timing model can align with instructions (the per-instruction layout)."""
        return self.mem_ptr is not None and self.mem_format == MEM_FORMAT

    def stored_rows(self) -> Optional[StoredRows]:
        """/mem as the loaded file stores it (rows of 32 threads), while ``mem_addr`` was not read;
        else None. Once read, the addresses are an array anyone may change, and they are what counts."""
        value = self.__dict__.get("mem_addr")
        # (rows belong to the mem_ptr they were read with: after `trace.mem_ptr = ...` they are not
        # this trace's layout any more, and the addresses count)
        return value if isinstance(value, StoredRows) and value.mem_ptr is self.mem_ptr else None

    @property
    def n_mem_entries(self) -> int:
        """Entries of /mem (0 without), without decoding stored rows."""
        stored = self.stored_rows()
        if stored is not None:
            return stored.n_entries
        return 0 if self.mem_addr is None else len(self.mem_addr)

    def thread_path(self, t: int) -> np.ndarray:
        return self.path[self.path_ptr[t] : self.path_ptr[t + 1]]

    def total_thread_insts(self) -> int:
        """Sum over threads of the instructions on their paths — what `thread_insts` must equal."""
        sizes = self.block_sizes()
        return int(sizes[self.path.astype(np.int64)].sum())

    # ---- files (the format is simt_fast.trace.io's) -----------------------------------------
    @classmethod
    def load(cls, path, *, allow_digest_mismatch: bool = False) -> "Trace":
        """Read a trace file (HDF5, DESIGN §3); schema/structure problems raise TraceError, and so
        does a content that no longer matches the digest stored at writing, unless
        ``allow_digest_mismatch``."""
        return cls(**io.read_fields(path, allow_digest_mismatch=allow_digest_mismatch))

    def save(self, path):
        """Write this trace to ``path`` atomically (temporary file + rename)."""
        return io.save(self, path)

    def digest(self) -> str:
        """Stable sha256 over the header and arrays; identifies a trace in sweeps."""
        return io.digest(self)
