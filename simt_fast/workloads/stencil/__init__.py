"""7-point Jacobi stencil with Parboil stencil's blocking and host loop (Stratton et al. 2012).

A random field on an nx x ny x nz grid; both grids start as copies of it (as Parboil's host does),
so the faces, which the kernel never writes, keep their values.  The host program runs
ITERATIONS launches, swapping the grids; the trace is the first.  The reference is the same
update on whole float32 numpy arrays (the kernel fuses the last multiply-add, an ulp apart).
"""

from __future__ import annotations

import numpy as np

from simt_fast.workloads import LaunchSpec, Workload

BX, BY = 32, 4
C0, C1 = np.float32(1.0 / 6.0), np.float32(1.0 / 6.0 / 6.0)
SIZES = {"tiny": (64, 8, 6), "default": (128, 64, 32)}  # nx, ny, nz
ITERATIONS = 3
NAMES = ("c0", "c1", "a0", "anext", "nx", "ny", "nz")


def inputs(size: str, rng: np.random.Generator) -> np.ndarray:
    nx, ny, nz = SIZES[size]
    return rng.uniform(0.0, 1.0, (nz, ny, nx)).astype(np.float32)


def sweep(a: np.ndarray, out: np.ndarray) -> np.ndarray:
    """``out`` with its interior replaced by one stencil step of ``a`` (both [z][y][x])."""
    out = out.copy()
    c = (slice(1, -1),) * 3
    above, below = a[2:, 1:-1, 1:-1], a[:-2, 1:-1, 1:-1]
    north, south = a[1:-1, 2:, 1:-1], a[1:-1, :-2, 1:-1]
    east, west = a[1:-1, 1:-1, 2:], a[1:-1, 1:-1, :-2]
    out[c] = (above + below + north + south + east + west) * C1 - a[c] * C0
    return out


def grid_of(nx: int, ny: int) -> tuple:
    return -(-nx // (2 * BX)), -(-ny // BY)


def make(size: str, rng: np.random.Generator) -> LaunchSpec:
    nx, ny, nz = SIZES[size]
    a = inputs(size, rng)
    args = [C0, C1, a.ravel(), a.ravel().copy(), np.int32(nx), np.int32(ny), np.int32(nz)]
    return LaunchSpec(grid_of(nx, ny), (BX, BY), args, outputs=(3,), arg_names=NAMES, meta={"launch": 0})


def reference(spec: LaunchSpec) -> dict:
    shape = tuple(int(spec.arg(k)) for k in ("nz", "ny", "nx"))
    return {"anext": sweep(spec.arg("a0").reshape(shape), spec.arg("anext").reshape(shape)).ravel()}


def program(size: str, rng: np.random.Generator, launch) -> None:
    nx, ny, nz = SIZES[size]
    start = inputs(size, rng)
    a, b = start.copy(), start.copy()
    want_a, want_b = start.copy(), start.copy()
    for _ in range(ITERATIONS):
        launch("stencil7", grid_of(nx, ny), (BX, BY), [C0, C1, a.ravel(), b.ravel(), np.int32(nx), np.int32(ny), np.int32(nz)])
        want_b = sweep(want_a, want_b)
        a, b, want_a, want_b = b, a, want_b, want_a
    np.testing.assert_allclose(a, want_a, rtol=1e-5, atol=1e-6, err_msg="stencil: final grid")


WORKLOAD = Workload(
    name="stencil",
    description="7-point 3-D Jacobi stencil, 2.5-D blocking with a shared-memory plane and 2x x coarsening (Parboil stencil, Stratton et al. 2012; Lee et al. 2013)",
    kernel="stencil7",
    make=make,
    sizes=tuple(SIZES),
    reference=reference,
    program=program,
    tolerance={"anext": (1e-6, 1e-7)},
    features=("shared memory + __syncthreads", "2-D CTAs", "edge loads from global", "multi-launch"),
)
