"""The memory model's compile flags (``simt_fast._jit`` for the rest of the simulator).

``helper``: called from numba code only (the timing loops, ``replay``), without the numba runtime,
compiled once per signature and never inlined at numba-IR level: IR-inlining the model's rules
into ``access`` multiplied the timing loops' cold compile time by seven (bench/bench_compile.py)
for no measurable run-time gain (bench/bench_sim_memory.py). ``stream``: a numba entry point
called from Python (``replay``).
"""

from ..._jit import cycle_loop as stream, helper

__all__ = ["helper", "stream"]
