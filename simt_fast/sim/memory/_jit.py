"""The memory model's compile flags (``simt_fast._jit`` for the rest of the simulator).

``helper``: called from numba code only (the timing loops, ``replay``), without the numba runtime,
and inlined by LLVM into its callers (``hot_helper``): a memory instruction runs a dozen of the
model's small rules, and their calls (each passing a handful of state arrays) cost more than their
bodies: measured with ``memory.replay`` (bench/bench_memory.py), inlining makes an L1 hit 3x faster
(139 -> 48 ns), a 32-lane shared access 2.6x (165 -> 63 ns); the timing loops' cold compile with the
model grows 1.2-1.4x (bench/bench_compile.py). numba still types each rule once: inlining at
numba-IR level instead multiplied that compile by seven. ``stream``: a numba entry point called
from Python (``replay``).
"""

from ..._jit import cycle_loop as stream, hot_helper as helper

__all__ = ["helper", "stream"]
