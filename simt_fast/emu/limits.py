"""What a launch may ask for: CUDA's limits, and what fits this machine's memory.

Everything a launch would allocate is checked before it is allocated (one sentence, never a
MemoryError), and what a running launch holds for its trace is bounded by a budget derived from
the memory available when it starts (:func:`default_trace_bytes`), so an endless loop stops with a
message long before it exhausts memory.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from .errors import EmuError

MAX_GRID = (2**31 - 1, 65535, 65535)  # CUDA: gridDim.x < 2^31, gridDim.y, .z < 65536
MAX_BLOCK = (1024, 1024, 64)  # CUDA: blockDim limits per dimension
MAX_CTA_THREADS = 1024  # CUDA: threads per block
MAX_SHARED_BYTES = 227 * 1024  # the most shared memory one CUDA block can have (sm_80 .. sm_100)
MAX_LOCAL_BYTES = 512 * 1024  # CUDA: local memory per thread

_FALLBACK_MACHINE_BYTES = 8 << 30
TRACE_SHARE = 8  # the trace budget is this fraction (1/8) of the memory available
LOG_BYTES_PER_EVENT = 8  # a block event in the emulator's log: (thread, block), two int32


def machine_bytes() -> int:
    """This machine's physical memory in bytes."""
    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):
        return _FALLBACK_MACHINE_BYTES


def _read(path) -> str:
    try:
        return Path(path).read_text()
    except OSError:
        return ""


def _meminfo_available() -> int | None:
    """The kernel's estimate of the memory that can be allocated without swapping (MemAvailable)."""
    m = re.search(r"^MemAvailable:\s+(\d+) kB", _read("/proc/meminfo"), re.M)
    return int(m.group(1)) * 1024 if m else None


def _cgroup_headroom() -> int | None:
    """What this process's control group may still allocate (its memory limit less its usage), if limited."""
    for line in _read("/proc/self/cgroup").splitlines():
        hier, controllers, path = (line.split(":", 2) + ["", ""])[:3]
        if hier == "0" and controllers == "":  # cgroup v2
            base = Path("/sys/fs/cgroup") / path.lstrip("/")
            limit, used = _read(base / "memory.max").strip(), _read(base / "memory.current").strip()
        elif "memory" in controllers.split(","):  # cgroup v1
            base = Path("/sys/fs/cgroup/memory") / path.lstrip("/")
            limit, used = _read(base / "memory.limit_in_bytes").strip(), _read(base / "memory.usage_in_bytes").strip()
        else:
            continue
        if limit.isdigit() and used.isdigit() and int(limit) < 1 << 60:  # v1 writes "no limit" as ~2^63
            return int(limit) - int(used)
    return None


def _rlimit_headroom() -> int | None:
    """What the address-space and data-size limits (``ulimit -v``, ``ulimit -d``) leave this process."""
    try:
        import resource
    except ImportError:  # pragma: no cover - not Unix
        return None
    status = _read("/proc/self/status")
    out = None
    for limit, field in ((resource.RLIMIT_AS, "VmSize"), (resource.RLIMIT_DATA, "VmData")):
        soft = resource.getrlimit(limit)[0]
        m = re.search(rf"^{field}:\s+(\d+) kB", status, re.M)
        if soft != resource.RLIM_INFINITY and m:
            left = int(soft) - int(m.group(1)) * 1024
            out = left if out is None else min(out, left)
    return out


def available_bytes() -> int:
    """The memory this process can still take: the least of the system's available memory
    (MemAvailable, else the machine's), its control group's limit less its usage, and the
    address-space and data-size limits less what the process maps already."""
    candidates = [_meminfo_available() or machine_bytes(), _cgroup_headroom(), _rlimit_headroom()]
    return max(0, min(c for c in candidates if c is not None))


def default_trace_bytes() -> int:
    """The default ``max_trace_bytes`` of a launch: an eighth of the memory available now. What a
    launch holds for its trace (the logs of the running batch, the in-memory trace) is bounded by
    it; growing the logs and turning them into paths takes about twice that at the peak."""
    return available_bytes() // TRACE_SHARE


def default_max_insts(max_trace_bytes: int, longest_block: int) -> int:
    """The default ``max_insts``: the most thread instructions a trace within ``max_trace_bytes``
    can hold (every block event, 8 bytes of log, runs at most the kernel's longest block)."""
    return max(1, max_trace_bytes // LOG_BYTES_PER_EVENT) * max(1, longest_block)


def gib(n: int) -> str:
    return f"{n / 2**30:.3g} GiB"


def size_text(n: int) -> str:
    """A byte count in the unit that reads best: ``512 bytes``, ``1 MiB``, ``2.91 GiB``."""
    for shift, unit in ((30, "GiB"), (20, "MiB"), (10, "KiB")):
        if n >= 1 << shift:
            return f"{n / 2**shift:.3g} {unit}"
    return f"{n} bytes"


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
