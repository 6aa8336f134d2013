"""D3Q19 lattice-Boltzmann steps with Parboil lbm's kernel structure and host loop (Stratton et al. 2012).

A lid-driven box: the six faces of the nx x ny x nz domain and a sphere inside it are OBSTACLE
cells, the plane under the top face is the ACCEL lid, the rest is fluid, starting at rest
(f_i = w_i).  The host program runs STEPS launches, swapping the two grids; the trace is the
first.  The reference does the same push step on whole arrays in float32 numpy (the kernel's
fused multiply-adds make it differ by an ulp or two), including where the faces' pushes land in
the margins.
"""

from __future__ import annotations

import numpy as np

from simt_fast.workloads import LaunchSpec, Workload, fill

SIZES = {"tiny": (32, 8, 4), "default": (64, 32, 16)}  # nx, ny, nz
STEPS = 3
OMEGA = np.float32(1.95)
FLUID, OBSTACLE, ACCEL = 0, 1, 2
# (dx, dy, dz) of C N S E W T B NE NW SE SW NT NB ST SB ET EB WT WB, and their weights
DIRS = np.array([(0, 0, 0), (0, 1, 0), (0, -1, 0), (1, 0, 0), (-1, 0, 0), (0, 0, 1), (0, 0, -1),
                 (1, 1, 0), (-1, 1, 0), (1, -1, 0), (-1, -1, 0), (0, 1, 1), (0, 1, -1), (0, -1, 1), (0, -1, -1),
                 (1, 0, 1), (1, 0, -1), (-1, 0, 1), (-1, 0, -1)])
WEIGHTS = np.array([1 / 3] + [1 / 18] * 6 + [1 / 36] * 12)
OPPOSITE = np.array([np.flatnonzero((DIRS == -d).all(axis=1))[0] for d in DIRS])
NAMES = ("src", "dst", "flags", "nx", "ny", "nz", "margin")


def geometry(size: str) -> np.ndarray:
    nx, ny, nz = SIZES[size]
    z, y, x = np.mgrid[0:nz, 0:ny, 0:nx]
    flags = np.full((nz, ny, nx), FLUID, np.int32)
    flags[z == nz - 2] = ACCEL
    r = min(nx, ny, nz) / 4
    flags[(x - nx / 3) ** 2 + (y - ny / 2) ** 2 + (z - nz / 2) ** 2 < r * r] = OBSTACLE
    flags[(x == 0) | (x == nx - 1) | (y == 0) | (y == ny - 1) | (z == 0) | (z == nz - 1)] = OBSTACLE
    return flags.ravel()


def margin(size: str) -> int:
    nx, ny, _ = SIZES[size]
    return nx * ny + nx + 1


def inputs(size: str, rng: np.random.Generator) -> np.ndarray:
    """The distributions at rest with a little noise, [19][margin + cells + margin]."""
    nx, ny, nz = SIZES[size]
    n, m = nx * ny * nz, margin(size)
    f = np.zeros((19, n + 2 * m), np.float32)
    f[:, m:m + n] = (WEIGHTS[:, None] * (1 + 0.01 * rng.standard_normal((19, n)))).astype(np.float32)
    return f


def step(src: np.ndarray, dst: np.ndarray, flags: np.ndarray, dims: tuple, m: int) -> np.ndarray:
    """One push step: ``dst`` (margins as they were) after streaming and colliding ``src``."""
    nx, ny, nz = dims
    n = flags.size
    f = src[:, m:m + n].astype(np.float32)
    out = dst.copy()
    offsets = DIRS[:, 0] + DIRS[:, 1] * nx + DIRS[:, 2] * nx * ny
    wall, lid = flags == OBSTACLE, flags == ACCEL
    fluid = ~wall
    rho = f[0].copy()
    for i in range(1, 19):
        rho = rho + f[i]
    u = [None, None, None]
    for a in range(3):
        plus, minus = (np.flatnonzero(DIRS[:, a] == s) for s in (1, -1))
        u[a] = ((f[plus[0]] + f[plus[1]] + f[plus[2]] + f[plus[3]] + f[plus[4]])
                - (f[minus[0]] + f[minus[1]] + f[minus[2]] + f[minus[3]] + f[minus[4]])) / rho
    u = [np.where(lid, np.float32(v), ua).astype(np.float32) for ua, v in zip(u, (0.005, 0.002, 0.0))]
    u2 = np.float32(1.5) * (u[0] * u[0] + u[1] * u[1] + u[2] * u[2])
    cells = np.arange(n)
    for i in range(19):
        cu = np.zeros(n, np.float32)  # c_i . u, summed in the kernel's order
        for a in range(3):
            if DIRS[i, a]:
                cu = cu + np.float32(DIRS[i, a]) * u[a]
        feq = np.float32(WEIGHTS[i]) * rho
        post = (np.float32(1) - OMEGA) * f[i] + OMEGA * feq * (np.float32(1) + cu * (np.float32(4.5) * cu + np.float32(3)) - u2)
        out[i, m + cells[fluid] + offsets[i]] = post[fluid]
        out[i, m + cells[wall] + offsets[i]] = f[OPPOSITE[i]][wall]
    return out


def make(size: str, rng: np.random.Generator) -> LaunchSpec:
    nx, ny, nz = SIZES[size]
    src = inputs(size, rng)
    args = [src.ravel(), fill(src.size, np.float32, np.nan), geometry(size), np.int32(nx), np.int32(ny), np.int32(nz),
            np.int32(margin(size))]
    return LaunchSpec((ny, nz), nx, args, outputs=(1,), arg_names=NAMES, meta={"launch": 0})


def reference(spec: LaunchSpec) -> dict:
    dims = tuple(int(spec.arg(k)) for k in ("nx", "ny", "nz"))
    shape = (19, -1)
    out = step(spec.arg("src").reshape(shape), spec.arg("dst").reshape(shape), spec.arg("flags"), dims,
               int(spec.arg("margin")))
    return {"dst": out.ravel()}


def program(size: str, rng: np.random.Generator, launch) -> None:
    nx, ny, nz = SIZES[size]
    src = inputs(size, rng)
    flags, m = geometry(size), margin(size)
    a, b = src.copy(), np.zeros_like(src)
    want_a, want_b = src.copy(), np.zeros_like(src)
    for _ in range(STEPS):
        launch("lbm_stream_collide", (ny, nz), nx, [a.ravel(), b.ravel(), flags, np.int32(nx), np.int32(ny),
                                                    np.int32(nz), np.int32(m)])
        want_b = step(want_a, want_b, flags, (nx, ny, nz), m)
        a, b, want_a, want_b = b, a, want_b, want_a
    n = nx * ny * nz
    np.testing.assert_allclose(a[:, m:m + n], want_a[:, m:m + n], rtol=1e-5, atol=1e-7, err_msg="lbm: distributions")


WORKLOAD = Workload(
    name="lbm",
    description="D3Q19 lattice-Boltzmann stream-collide, one thread per cell, obstacle bounce-back vs fluid branch (Parboil lbm, Stratton et al. 2012; Lee et al. 2013)",
    kernel="lbm_stream_collide",
    make=make,
    sizes=tuple(SIZES),
    reference=reference,
    program=program,
    tolerance={"dst": (1e-5, 1e-7)},
    features=("structure of arrays", "obstacle / fluid branch", "19 scattered stores", "multi-launch"),
)
