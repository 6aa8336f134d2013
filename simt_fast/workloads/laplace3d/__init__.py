"""One Jacobi sweep of the 3-D Laplace equation (Jin 2012 §5.3, LPS: 3-D Laplace solver).

Inputs: a random field on an nx*ny*nz grid (x fastest).  The reference is the textbook update
in float32 numpy: interior points become the mean of their six neighbours, summed in the
kernel's order (west, east, south, north, below, above) then multiplied by float32(1/6);
boundary points keep their value.  Same operations, same order: agreement to 1 ulp.
"""

from __future__ import annotations

import numpy as np

from simt_fast.workloads import LaunchSpec, Workload, fill

BX, BY = 32, 4
# The thesis uses 100^3 and one iteration; the default keeps 100x100 planes (partial tiles at
# the x edge) with 48 planes to stay emulator-friendly.
SIZES = {"tiny": (40, 10, 6), "default": (100, 100, 48), "thesis": (100, 100, 100)}


def make(size: str, rng: np.random.Generator) -> LaunchSpec:
    nx, ny, nz = SIZES[size]
    u = rng.uniform(-1.0, 1.0, nz * ny * nx).astype(np.float32)
    args = [u, fill(nz * ny * nx, np.float32, np.nan), np.int32(nx), np.int32(ny), np.int32(nz)]
    grid = ((nx + BX - 1) // BX, (ny + BY - 1) // BY)
    return LaunchSpec(grid, (BX, BY), args, outputs=(1,), arg_names=("u", "u_new", "nx", "ny", "nz"))


def reference(spec: LaunchSpec) -> dict:
    nx, ny, nz = (int(spec.arg(k)) for k in ("nx", "ny", "nz"))
    u = spec.arg("u").reshape(nz, ny, nx)
    out = u.copy()
    c = (slice(1, -1),) * 3
    west, east = u[1:-1, 1:-1, :-2], u[1:-1, 1:-1, 2:]
    south, north = u[1:-1, :-2, 1:-1], u[1:-1, 2:, 1:-1]
    below, above = u[:-2, 1:-1, 1:-1], u[2:, 1:-1, 1:-1]
    out[c] = (((((west + east) + south) + north) + below) + above) * np.float32(1.0 / 6.0)
    return {"u_new": out.ravel()}


WORKLOAD = Workload(
    name="laplace3d",
    description="3-D Jacobi/Laplace sweep, shared-memory tiles, boundary branches (Jin 2012 §5.3 LPS)",
    kernel="laplace3d",
    make=make,
    sizes=tuple(SIZES),
    reference=reference,
    tolerance={"u_new": (1e-6, 1e-7)},
    features=("shared memory + __syncthreads", "2-D CTAs", "boundary/halo branches"),
)
