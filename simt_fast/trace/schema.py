"""The trace format's names and constants (docs/DESIGN.md §3), shared by the model and the file code."""

from __future__ import annotations

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
