"""Needleman-Wunsch alignment with Rodinia nw's launch structure (Che et al. 2009; Lee et al. 2013).

Two random sequences over a 24-letter alphabet, a random symmetric substitution matrix (positive
on its diagonal) and a linear gap penalty of 10.  The score matrix is (n+1) x (n+1) int32 with the
gap row and column filled in.  The host program launches ``nw_upper`` on the anti-diagonals of
tiles 1 .. n/16 and ``nw_lower`` on n/16 - 1 .. 1; the traced launch is the longest one,
``nw_upper`` on the main anti-diagonal (n/16 CTAs of 16 threads), given the matrix with every
tile above that diagonal already filled.

The reference fills the whole matrix row by row: with ``b[j] = max(score[i-1][j-1] + ref[i][j],
score[i-1][j] - penalty)`` the left-neighbour recurrence ``s[j] = max(b[j], s[j-1] - penalty)`` is
a running maximum of ``b[j] + penalty*j`` (nothing like the kernel's tiles and wavefronts).
"""

from __future__ import annotations

import numpy as np

from simt_fast.workloads import LaunchSpec, Workload

TILE = 16
PENALTY = 10
SIZES = {"tiny": 256, "default": 2048}
NAMES = ("score", "ref", "n_cols", "penalty", "diagonal")


def inputs(size: str, rng: np.random.Generator):
    """The substitution-score matrix ref and the initial score matrix (gap row and column)."""
    n = SIZES[size]
    sub = rng.integers(-4, 5, (24, 24))
    sub = np.triu(sub) + np.triu(sub, 1).T
    np.fill_diagonal(sub, rng.integers(4, 12, 24))
    a, b = rng.integers(0, 24, n), rng.integers(0, 24, n)
    ref = np.zeros((n + 1, n + 1), np.int32)
    ref[1:, 1:] = sub[a][:, b]
    score = np.zeros((n + 1, n + 1), np.int32)
    score[0, :] = -PENALTY * np.arange(n + 1)
    score[:, 0] = -PENALTY * np.arange(n + 1)
    return ref, score


def alignment_scores(ref: np.ndarray, penalty: int = PENALTY) -> np.ndarray:
    """The whole Needleman-Wunsch matrix, one row at a time."""
    n = ref.shape[0] - 1
    out = np.zeros((n + 1, n + 1), np.int64)
    out[0, :] = -penalty * np.arange(n + 1)
    out[:, 0] = -penalty * np.arange(n + 1)
    ramp = penalty * np.arange(n + 1)
    for i in range(1, n + 1):
        b = np.empty(n + 1, np.int64)
        b[0] = out[i, 0]
        b[1:] = np.maximum(out[i - 1, :-1] + ref[i, 1:], out[i - 1, 1:] - penalty)
        out[i] = np.maximum.accumulate(b + ramp) - ramp
    return out.astype(np.int32)


def tile_mask(n: int, diagonals) -> np.ndarray:
    """Cells of the tiles on the given tile anti-diagonals (0-based: tile row + tile column)."""
    t = np.arange(n + 1)
    tile = np.where(t == 0, -10**9, (t - 1) // TILE)
    return np.isin(tile[:, None] + tile[None, :], list(diagonals))


def make(size: str, rng: np.random.Generator) -> LaunchSpec:
    ref, score = inputs(size, rng)
    n = ref.shape[0] - 1
    n_tiles = n // TILE
    full = alignment_scores(ref)
    before = tile_mask(n, range(n_tiles - 1))  # every tile above the main anti-diagonal is final
    score[before] = full[before]
    args = [score.ravel(), ref.ravel(), np.int32(n + 1), np.int32(PENALTY), np.int32(n_tiles)]
    return LaunchSpec(n_tiles, TILE, args, outputs=(0,), arg_names=NAMES, meta={"launch": n_tiles - 1})


def reference(spec: LaunchSpec) -> dict:
    n = int(spec.arg("n_cols")) - 1
    d = int(spec.arg("diagonal"))
    ref = spec.arg("ref").reshape(n + 1, n + 1)
    out = spec.arg("score").reshape(n + 1, n + 1).copy()
    now = tile_mask(n, [d - 1])
    out[now] = alignment_scores(ref, int(spec.arg("penalty")))[now]
    return {"score": out.ravel()}


def program(size: str, rng: np.random.Generator, launch) -> None:
    ref, score = inputs(size, rng)
    n = ref.shape[0] - 1
    n_tiles = n // TILE
    s, r = score.ravel(), ref.ravel()
    for d in range(1, n_tiles + 1):
        launch("nw_upper", d, TILE, [s, r, np.int32(n + 1), np.int32(PENALTY), np.int32(d)])
    for d in range(n_tiles - 1, 0, -1):
        launch("nw_lower", d, TILE, [s, r, np.int32(n + 1), np.int32(PENALTY), np.int32(d), np.int32(n_tiles)])
    np.testing.assert_array_equal(score, alignment_scores(ref), err_msg="nw: final score matrix")


WORKLOAD = Workload(
    name="nw",
    description="Needleman-Wunsch wavefront over 16x16 shared-memory tiles, one launch per tile anti-diagonal (Rodinia nw, Che et al. 2009; Lee et al. 2013)",
    kernel="nw_upper",
    make=make,
    sizes=tuple(SIZES),
    reference=reference,
    program=program,
    features=("shared memory + __syncthreads", "16-thread CTAs", "multi-launch wavefront"),
)
