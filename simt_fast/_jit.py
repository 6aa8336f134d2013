"""The one place numba flags are set (STUMPY's config.py idea).

Every hot kernel in the project is decorated with :func:`jit` so that on-disk caching
(`cache=True`) keeps CLI start-up and CI fast, and so that `NUMBA_DISABLE_JIT=1` turns
every kernel back into plain Python for coverage and debugging.
"""

from __future__ import annotations

import numba

JIT_OPTIONS = dict(cache=True, nogil=True, fastmath=False, error_model="numpy")


def jit(*args, **overrides):
    """`numba.njit` with the project's flags; usable as `@jit` or `@jit(boundscheck=True)`."""
    options = {**JIT_OPTIONS, **overrides}
    if len(args) == 1 and callable(args[0]) and not overrides:
        return numba.njit(**options)(args[0])
    return numba.njit(*args, **options)
