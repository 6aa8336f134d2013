"""HotSpot chip-temperature steps with Rodinia hotspot's pyramid launches (Che et al. 2009).

The chip model's constants are HotSpot's (silicon conductivity 100 W/(m K), specific heat 1.75e6
J/(m^3 K), a 0.5 mm thick 16 mm chip, ambient 80), from which the host derives the per-step
coefficients as Rodinia's host code does; temperatures start around 320 and the power map is
random with a few hot blocks.  The host program runs ``total`` steps as ``total / pyramid``
launches of ``pyramid`` steps each, swapping the two temperature buffers; every launch is alike,
and the traced one is the first.

The reference steps the whole grid in float32 numpy with edge-replicated neighbours; the kernel's
fused multiply-adds make it differ by a few ulp per step.
"""

from __future__ import annotations

import numpy as np

from simt_fast.workloads import LaunchSpec, Workload, fill

BLOCK = 16
# (rows, cols, pyramid height, total steps of the host program)
SIZES = {"tiny": (24, 24, 2, 4), "default": (128, 128, 2, 8)}
NAMES = ("iterations", "power", "temp_src", "temp_dst", "cols", "rows", "step_div_cap", "rx_1", "ry_1", "rz_1",
         "ambient")

# HotSpot's chip model (SI units)
CHIP, T_CHIP, K_SI, SPEC_HEAT_SI, FACTOR_CHIP, MAX_PD, PRECISION, AMBIENT = 0.016, 0.0005, 100.0, 1.75e6, 0.5, 3.0e6, 0.001, 80.0


def coefficients(rows: int, cols: int) -> tuple:
    """(step / Cap, 1/Rx, 1/Ry, 1/Rz) of one grid cell."""
    h, w = CHIP / rows, CHIP / cols
    cap = FACTOR_CHIP * SPEC_HEAT_SI * T_CHIP * w * h
    rx = w / (2.0 * K_SI * T_CHIP * h)
    ry = h / (2.0 * K_SI * T_CHIP * w)
    rz = T_CHIP / (K_SI * h * w)
    step = PRECISION / (MAX_PD / (FACTOR_CHIP * T_CHIP * SPEC_HEAT_SI))
    return tuple(np.float32(v) for v in (step / cap, 1.0 / rx, 1.0 / ry, 1.0 / rz))


def inputs(size: str, rng: np.random.Generator):
    rows, cols, _, _ = SIZES[size]
    temp = rng.uniform(318.0, 326.0, (rows, cols)).astype(np.float32)
    power = rng.uniform(0.0, 2e-4, (rows, cols))
    for _ in range(3):  # a few hot functional units
        y, x = rng.integers(0, rows - 4), rng.integers(0, cols - 4)
        power[y:y + 4, x:x + 4] += 5e-3
    return temp, power.astype(np.float32)


def steps(temp: np.ndarray, power: np.ndarray, n: int) -> np.ndarray:
    """``n`` explicit steps of the whole chip, missing neighbours replaced by the cell itself."""
    rows, cols = temp.shape
    cap, rx_1, ry_1, rz_1 = coefficients(rows, cols)
    t = temp.copy()
    two, amb = np.float32(2.0), np.float32(AMBIENT)
    for _ in range(n):
        p = np.pad(t, 1, mode="edge")
        north, south, west, east = p[:-2, 1:-1], p[2:, 1:-1], p[1:-1, :-2], p[1:-1, 2:]
        t = t + cap * (power + (south + north - two * t) * ry_1 + (east + west - two * t) * rx_1 + (amb - t) * rz_1)
    return t


def launch_args(temp_src, power, temp_dst, iterations: int) -> tuple:
    rows, cols = temp_src.shape
    inner = BLOCK - 2 * iterations
    grid = (-(-cols // inner), -(-rows // inner))
    args = [np.int32(iterations), power.ravel(), temp_src.ravel(), temp_dst.ravel(), np.int32(cols), np.int32(rows),
            *coefficients(rows, cols), np.float32(AMBIENT)]
    return grid, args


def make(size: str, rng: np.random.Generator) -> LaunchSpec:
    temp, power = inputs(size, rng)
    grid, args = launch_args(temp, power, fill(temp.shape, np.float32, np.nan), SIZES[size][2])
    return LaunchSpec(grid, (BLOCK, BLOCK), args, outputs=(3,), arg_names=NAMES, meta={"launch": 0})


def reference(spec: LaunchSpec) -> dict:
    rows, cols = int(spec.arg("rows")), int(spec.arg("cols"))
    temp = spec.arg("temp_src").reshape(rows, cols)
    power = spec.arg("power").reshape(rows, cols)
    return {"temp_dst": steps(temp, power, int(spec.arg("iterations"))).ravel()}


def program(size: str, rng: np.random.Generator, launch) -> None:
    temp, power = inputs(size, rng)
    _, _, pyramid, total = SIZES[size]
    src, dst = temp.copy(), np.zeros_like(temp)
    for _ in range(0, total, pyramid):
        grid, args = launch_args(src, power, dst, pyramid)
        launch("hotspot_pyramid", grid, (BLOCK, BLOCK), args)
        src, dst = dst, src
    np.testing.assert_allclose(src, steps(temp, power, total), rtol=1e-5, atol=1e-4, err_msg="hotspot: final temperatures")


WORKLOAD = Workload(
    name="hotspot",
    description="HotSpot thermal stencil, 16x16 shared-memory tiles shrinking over pyramid steps, multi-launch (Rodinia hotspot, Che et al. 2009; Lee et al. 2013, Wu et al. 2012)",
    kernel="hotspot_pyramid",
    make=make,
    sizes=tuple(SIZES),
    reference=reference,
    program=program,
    tolerance={"temp_dst": (1e-6, 1e-4)},
    features=("shared memory + __syncthreads", "2-D CTAs", "pyramid halo", "multi-launch"),
)
