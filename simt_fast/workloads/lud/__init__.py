"""Blocked LU decomposition with Rodinia lud's three kernels and host loop (Che et al. 2009).

A random diagonally dominant dim x dim float32 matrix (no pivoting needed).  The host program
launches, for each 16-column step, ``lud_diagonal``, ``lud_perimeter`` and ``lud_internal``, then a
last ``lud_diagonal``; the result packs L (unit diagonal, below) and U.  The trace is the first
``lud_perimeter`` (dim/16 - 1 CTAs of 32 threads), given the matrix whose first diagonal block is
factored.  The references solve the same triangular systems in float64 numpy (the whole program
against a plain right-looking LU), so they agree within float32 rounding.
"""

from __future__ import annotations

import numpy as np

from simt_fast.workloads import LaunchSpec, Workload

BS = 16
SIZES = {"tiny": 128, "default": 1024}
NAMES = ("m", "dim", "offset")


def inputs(size: str, rng: np.random.Generator) -> np.ndarray:
    n = SIZES[size]
    a = rng.uniform(-1.0, 1.0, (n, n))
    a[np.diag_indices(n)] = np.abs(a).sum(axis=1) + 1.0
    return a.astype(np.float32)


def lu_packed(a: np.ndarray) -> np.ndarray:
    """Doolittle LU without pivoting, L (unit diagonal) and U packed in one matrix (float64)."""
    m = a.astype(np.float64)
    for k in range(m.shape[0] - 1):
        m[k + 1:, k] /= m[k, k]
        m[k + 1:, k + 1:] -= np.outer(m[k + 1:, k], m[k, k + 1:])
    return m


def perimeter(m: np.ndarray, offset: int) -> np.ndarray:
    """The matrix after lud_perimeter at ``offset`` (its diagonal block already factored)."""
    out = m.astype(np.float64)
    d = slice(offset, offset + BS)
    rest = slice(offset + BS, m.shape[0])
    dia = out[d, d]
    lower = np.tril(dia, -1) + np.eye(BS)
    upper = np.triu(dia)
    out[d, rest] = np.linalg.solve(lower, out[d, rest])
    out[rest, d] = np.linalg.solve(upper.T, out[rest, d].T).T
    return out


def make(size: str, rng: np.random.Generator) -> LaunchSpec:
    a = inputs(size, rng)
    n = a.shape[0]
    a[:BS, :BS] = lu_packed(a[:BS, :BS])  # what lud_diagonal left
    return LaunchSpec(n // BS - 1, 2 * BS, [a.ravel(), np.int32(n), np.int32(0)], outputs=(0,), arg_names=NAMES,
                      meta={"launch": 1})


def reference(spec: LaunchSpec) -> dict:
    n = int(spec.arg("dim"))
    return {"m": perimeter(spec.arg("m").reshape(n, n), int(spec.arg("offset"))).astype(np.float32).ravel()}


def program(size: str, rng: np.random.Generator, launch) -> None:
    a = inputs(size, rng)
    n = a.shape[0]
    m = a.copy()
    flat = m.ravel()
    offset = 0
    for offset in range(0, n - BS, BS):
        args = [flat, np.int32(n), np.int32(offset)]
        launch("lud_diagonal", 1, BS, args)
        launch("lud_perimeter", (n - offset) // BS - 1, 2 * BS, args)
        blocks = (n - offset) // BS - 1
        launch("lud_internal", (blocks, blocks), (BS, BS), args)
    launch("lud_diagonal", 1, BS, [flat, np.int32(n), np.int32(n - BS)])
    np.testing.assert_allclose(m, lu_packed(a), rtol=2e-4, atol=2e-5, err_msg="lud: packed L and U")


WORKLOAD = Workload(
    name="lud",
    description="Blocked LU perimeter step: 32-thread CTAs whose halves solve the block row and the block column (Rodinia lud, Che et al. 2009)",
    kernel="lud_perimeter",
    make=make,
    sizes=tuple(SIZES),
    reference=reference,
    program=program,
    tolerance={"m": (1e-5, 1e-6)},
    features=("shared memory + __syncthreads", "half-warp branches", "triangular loops", "three kernels, multi-launch"),
)
