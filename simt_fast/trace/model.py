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

# /mem layout (DESIGN §3): one address per memory instruction on a thread's path, in path order;
# NO_ACCESS where the thread's guard predicate was false. A /mem group without this format tag is
# the older global/shared-only layout, which the timing model cannot align with instructions.
MEM_FORMAT = "per-instruction/1"
NO_ACCESS = np.uint64(0xFFFF_FFFF_FFFF_FFFF)
PARAM_TAG = np.uint64(1 << 40)  # ld.param offsets in the constant space, apart from __constant__ data

# /instr/mem_kind values
MEM_NONE = 0
MEM_LOAD = 1
MEM_STORE = 2
MEM_ATOMIC = 3  # read-modify-write (atom, red)


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
    # optional per-instruction memory facts: bytes one thread accesses (0: not memory), MEM_* kind
    mem_bytes: Optional[np.ndarray] = None  # uint8[n_instrs]
    mem_kind: Optional[np.ndarray] = None  # uint8[n_instrs]
    # /threads
    path_ptr: np.ndarray = field(default_factory=lambda: np.zeros(1, np.int64))  # int64[n_threads+1]
    path: np.ndarray = field(default_factory=lambda: np.zeros(0, np.uint16))  # uint16/uint32 block ids
    # /mem (optional): per memory instruction on each thread's path, CSR per thread (MEM_FORMAT)
    mem_ptr: Optional[np.ndarray] = None  # int64[n_threads+1]
    mem_addr: Optional[np.ndarray] = None  # uint64[n_accesses] byte addresses (NO_ACCESS), in path order
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

    def thread_path(self, t: int) -> np.ndarray:
        return self.path[self.path_ptr[t] : self.path_ptr[t + 1]]

    def total_thread_insts(self) -> int:
        """Sum over threads of the instructions on their paths — what `thread_insts` must equal."""
        sizes = self.block_sizes()
        return int(sizes[self.path.astype(np.int64)].sum())

    # ---- files (implemented in simt_fast.trace.io) ----------------------------------------
    @classmethod
    def load(cls, path, *, allow_digest_mismatch: bool = False) -> "Trace":
        """Read a trace file (HDF5, DESIGN §3); schema/structure problems raise TraceError, and so
        does a content that no longer matches the digest stored at writing, unless
        ``allow_digest_mismatch``."""
        from .io import load

        return load(path, allow_digest_mismatch=allow_digest_mismatch)

    def save(self, path):
        """Write this trace to ``path`` atomically (temporary file + rename)."""
        from .io import save

        return save(self, path)

    def digest(self) -> str:
        """Stable sha256 over the header and arrays; identifies a trace in sweeps."""
        from .io import digest

        return digest(self)
