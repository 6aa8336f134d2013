"""What a launch may ask for: CUDA's limits, and what fits this machine's memory.

Everything a launch would allocate is checked before it is allocated (one sentence, never a
MemoryError), and the logs a running launch keeps are bounded, so an endless loop stops with a
message instead of exhausting memory.
"""

from __future__ import annotations

import os

from .errors import EmuError

MAX_GRID = (2**31 - 1, 65535, 65535)  # CUDA: gridDim.x < 2^31, gridDim.y, .z < 65536
MAX_BLOCK = (1024, 1024, 64)  # CUDA: blockDim limits per dimension
MAX_CTA_THREADS = 1024  # CUDA: threads per block
MAX_SHARED_BYTES = 227 * 1024  # the most shared memory one CUDA block can have (sm_80 .. sm_100)
MAX_LOCAL_BYTES = 512 * 1024  # CUDA: local memory per thread

_FALLBACK_MACHINE_BYTES = 8 << 30


def machine_bytes() -> int:
    """This machine's physical memory in bytes."""
    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):
        return _FALLBACK_MACHINE_BYTES


def default_log_bytes() -> int:
    """How many bytes one CTA's block-event and memory logs may hold: a quarter of the machine."""
    return machine_bytes() // 4


def gib(n: int) -> str:
    return f"{n / 2**30:.3g} GiB"


def dim3(name: str, v, limits: tuple) -> tuple:
    """A grid or block size as CUDA takes it (an int or 1-3 ints), checked against ``limits``."""
    if isinstance(v, (bool, str, bytes, float)) or not (hasattr(v, "__index__") or hasattr(v, "__iter__")):
        raise EmuError(f"{name} must be an int or a tuple of 1-3 ints, got {v!r}")
    try:
        t = (int(v.__index__()),) if hasattr(v, "__index__") else tuple(x.__index__() for x in v)
    except (TypeError, AttributeError):
        raise EmuError(f"{name} must be an int or a tuple of 1-3 ints, got {v!r}") from None
    if not 1 <= len(t) <= 3:
        raise EmuError(f"{name} must have 1 to 3 dimensions, got {v!r}")
    if any(x < 1 for x in t):
        raise EmuError(f"every {name} dimension must be >= 1, got {v!r}")
    for axis, x, most in zip("xyz", t, limits):
        if x > most:
            raise EmuError(f"{name} {axis} = {x} is more than CUDA allows ({most})")
    return (t + (1, 1, 1))[:3]
