"""PathFinder's row-by-row dynamic programming with Rodinia pathfinder's launches (Che et al. 2009).

Random weights 0..9 on a rows x cols grid (Rodinia's generator).  The host program starts from the
first row's weights and launches ``pathfinder_rows`` once per ``pyramid`` rows (the last launch
takes what is left), swapping the two cost buffers; every launch but the last is alike and the
traced one is the first.  The reference advances one whole row at a time in numpy.
"""

from __future__ import annotations

import numpy as np

from simt_fast.workloads import LaunchSpec, Workload, fill

BLOCK = 256
SIZES = {"tiny": (41, 1000, 20), "default": (101, 10000, 20)}  # rows, cols, pyramid height
NAMES = ("iterations", "wall", "src", "dst", "cols", "start_row")


def inputs(size: str, rng: np.random.Generator) -> np.ndarray:
    rows, cols, _ = SIZES[size]
    return rng.integers(0, 10, (rows, cols)).astype(np.int32)


def advance(cost: np.ndarray, wall_rows: np.ndarray) -> np.ndarray:
    """The cost row after descending through each row of ``wall_rows``."""
    cost = cost.astype(np.int64)
    for row in wall_rows:
        p = np.pad(cost, 1, mode="edge")
        cost = row + np.minimum(np.minimum(p[:-2], p[1:-1]), p[2:])
    return cost.astype(np.int32)


def launch_args(wall_below, src, dst, iterations: int, start_row: int) -> tuple:
    cols = src.size
    grid = -(-cols // (BLOCK - 2 * iterations))
    return grid, [np.int32(iterations), wall_below.ravel(), src, dst, np.int32(cols), np.int32(start_row)]


def make(size: str, rng: np.random.Generator) -> LaunchSpec:
    wall = inputs(size, rng)
    grid, args = launch_args(wall[1:], wall[0].copy(), fill(wall.shape[1], np.int32, -1), SIZES[size][2], 0)
    return LaunchSpec(grid, BLOCK, args, outputs=(3,), arg_names=NAMES, meta={"launch": 0})


def reference(spec: LaunchSpec) -> dict:
    cols, start, n = int(spec.arg("cols")), int(spec.arg("start_row")), int(spec.arg("iterations"))
    wall = spec.arg("wall").reshape(-1, cols)
    return {"dst": advance(spec.arg("src"), wall[start:start + n])}


def program(size: str, rng: np.random.Generator, launch) -> None:
    wall = inputs(size, rng)
    rows, cols, pyramid = SIZES[size]
    src, dst = wall[0].copy(), np.zeros(cols, np.int32)
    below = wall[1:].copy()
    for t in range(0, rows - 1, pyramid):
        grid, args = launch_args(below, src, dst, min(pyramid, rows - 1 - t), t)
        launch("pathfinder_rows", grid, BLOCK, args)
        src, dst = dst, src
    np.testing.assert_array_equal(src, advance(wall[0], wall[1:]), err_msg="pathfinder: final path costs")


WORKLOAD = Workload(
    name="pathfinder",
    description="PathFinder row DP, shared-memory rows shrinking over pyramid steps, multi-launch (Rodinia pathfinder, Che et al. 2009; Wu et al. 2012)",
    kernel="pathfinder_rows",
    make=make,
    sizes=tuple(SIZES),
    reference=reference,
    program=program,
    features=("shared memory + __syncthreads", "pyramid halo", "multi-launch"),
)
