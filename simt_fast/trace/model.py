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

SCHEMA = "simt-fast/trace/1"
SCHEMA_MAJOR = 1


class TraceError(ValueError):
    """A trace file or object that breaks an invariant; ``str(err)`` is one actionable sentence."""


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
    # /threads
    path_ptr: np.ndarray = field(default_factory=lambda: np.zeros(1, np.int64))  # int64[n_threads+1]
    path: np.ndarray = field(default_factory=lambda: np.zeros(0, np.uint16))  # uint16/uint32 block ids
    # /mem (optional): per executed global/shared access, CSR per thread
    mem_ptr: Optional[np.ndarray] = None  # int64[n_threads+1]
    mem_addr: Optional[np.ndarray] = None  # uint64[n_accesses] byte addresses, in path order
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

    def thread_path(self, t: int) -> np.ndarray:
        return self.path[self.path_ptr[t] : self.path_ptr[t + 1]]

    def total_thread_insts(self) -> int:
        """Sum over threads of the instructions on their paths — what `thread_insts` must equal."""
        sizes = self.block_sizes()
        return int(sizes[self.path.astype(np.int64)].sum())

    # ---- files (implemented in simt_fast.trace.io) ----------------------------------------
    @classmethod
    def load(cls, path) -> "Trace":
        """Read a trace file (HDF5, DESIGN §3); schema/structure problems raise TraceError."""
        from .io import load

        return load(path)

    def save(self, path):
        """Write this trace to ``path`` atomically (temporary file + rename)."""
        from .io import save

        return save(self, path)

    def digest(self) -> str:
        """Stable sha256 over the header and arrays; identifies a trace in sweeps."""
        from .io import digest

        return digest(self)
