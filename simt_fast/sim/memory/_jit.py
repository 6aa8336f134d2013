"""The memory model's compile flags (``simt_fast._jit`` for the rest of the simulator).

``helper``: called from numba code only (the timing loops, ``replay``), without the numba runtime.
``inline_helper``: the model's few-line rules (a cache lookup, a DRAM transfer), inlined at numba-IR
level into ``access``: they run once per sector, and a call passes each array's pointer, shape and
strides on the stack. ``stream``: a numba entry point called from Python (``replay``).
"""

from ..._jit import cycle_loop as stream, helper, jit

inline_helper = jit(_nrt=False, inline="always", no_cpython_wrapper=True, no_cfunc_wrapper=True)

__all__ = ["helper", "inline_helper", "stream"]
