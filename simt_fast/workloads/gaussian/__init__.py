"""Gaussian elimination with Rodinia gaussian's kernels and host loop (Che et al. 2009).

A random diagonally dominant size x size float32 system (no pivoting needed).  The host program
launches ``gaussian_fan1`` (512-thread CTAs) and ``gaussian_fan2`` (4 x 4 CTAs over the whole
matrix) for every pivot row t, then back-substitutes on the host.  The trace is ``gaussian_fan2``
at t = 2 size / 5: there 64% of its threads leave at the bounds tests, close to the two thirds
they are over the whole loop of launches (the active part shrinks as (size - t)^2).

The reference eliminates in float32 numpy; the kernel's fused multiply-add differs by an ulp.
"""

from __future__ import annotations

import numpy as np

from simt_fast.workloads import LaunchSpec, Workload

SIZES = {"tiny": 32, "default": 512}
XY = 4  # Fan2's CTA edge
FAN1_BLOCK = 512
NAMES = ("m", "a", "b", "size", "t")


def inputs(size: str, rng: np.random.Generator):
    n = SIZES[size]
    a = rng.uniform(-1.0, 1.0, (n, n))
    a[np.diag_indices(n)] = np.abs(a).sum(axis=1) + 1.0
    return a.astype(np.float32), rng.uniform(-1.0, 1.0, n).astype(np.float32)


def eliminate(a, b, m, t0: int, t1: int) -> None:
    """Pivot rows t0 .. t1-1 in place (multipliers into m), as the two kernels do them."""
    for t in range(t0, t1):
        m[t + 1:, t] = a[t + 1:, t] / a[t, t]
        a[t + 1:, t:] -= m[t + 1:, t:t + 1] * a[t, t:]
        b[t + 1:] -= m[t + 1:, t] * b[t]


def traced_step(n: int) -> int:
    return 2 * n // 5


def make(size: str, rng: np.random.Generator) -> LaunchSpec:
    a, b = inputs(size, rng)
    n = a.shape[0]
    m = np.zeros_like(a)
    t = traced_step(n)
    eliminate(a, b, m, 0, t)
    m[t + 1:, t] = a[t + 1:, t] / a[t, t]  # this step's gaussian_fan1
    grid = (-(-n // XY), -(-n // XY))
    return LaunchSpec(grid, (XY, XY), [m.ravel(), a.ravel(), b, np.int32(n), np.int32(t)], outputs=(1, 2),
                      arg_names=NAMES, meta={"launch": 2 * t + 1})


def reference(spec: LaunchSpec) -> dict:
    n, t = int(spec.arg("size")), int(spec.arg("t"))
    a, b = spec.arg("a").reshape(n, n).copy(), spec.arg("b").copy()
    m = spec.arg("m").reshape(n, n)
    a[t + 1:, t:] -= m[t + 1:, t:t + 1] * a[t, t:]
    b[t + 1:] -= m[t + 1:, t] * b[t]
    return {"a": a.ravel(), "b": b}


def program(size: str, rng: np.random.Generator, launch) -> None:
    a0, b0 = inputs(size, rng)
    n = a0.shape[0]
    a, b, m = a0.copy(), b0.copy(), np.zeros_like(a0)
    for t in range(n - 1):
        launch("gaussian_fan1", -(-n // FAN1_BLOCK), FAN1_BLOCK, [m.ravel(), a.ravel(), np.int32(n), np.int32(t)])
        launch("gaussian_fan2", (-(-n // XY), -(-n // XY)), (XY, XY), [m.ravel(), a.ravel(), b, np.int32(n), np.int32(t)])
    x = np.zeros(n, np.float64)  # back substitution on the host
    for i in range(n - 1, -1, -1):
        x[i] = (b[i] - a[i, i + 1:] @ x[i + 1:]) / a[i, i]
    np.testing.assert_allclose(x, np.linalg.solve(a0.astype(np.float64), b0), rtol=1e-4, atol=1e-5,
                               err_msg="gaussian: solution")


WORKLOAD = Workload(
    name="gaussian",
    description="Gaussian elimination row update over 4x4 CTAs covering the whole matrix, bounds-test exits (Rodinia gaussian, Che et al. 2009)",
    kernel="gaussian_fan2",
    make=make,
    sizes=tuple(SIZES),
    reference=reference,
    program=program,
    tolerance={"a": (1e-6, 1e-6), "b": (1e-6, 1e-6)},
    features=("16-thread CTAs", "early exits", "two kernels, multi-launch"),
)
