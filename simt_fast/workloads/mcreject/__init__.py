"""Delayed-rejection Metropolis-Hastings, one chain per thread, on a tabulated 2-D target.

The generator tabulates a multimodal target over a periodic ``side x side`` grid (a background
plus Gaussian bumps of random position, width and height, quantised to integer weights in
[1, 2^20]), an integer observable per state (the label of the nearest bump, times 10, plus the
state's weight decile; its bins are the histogram ``moves_into`` counts accepted moves in),
random starting states and the random words (four per chain and step: first proposal, first
test, second proposal, second test).

The reference runs all chains at once in numpy, step by step, with the same exact integer
acceptance tests; it shares no code with the kernel.
"""

from __future__ import annotations

import numpy as np

from simt_fast.workloads import LaunchSpec, Workload, fill

SIZES = {"tiny": (6, 1024, 16), "default": (8, 8192, 96)}  # (log2 side, chains, steps)
R1, R2 = 2, 4  # proposal half-widths (powers of two)
N_BUMPS = 12
BLOCK = 128


def target(log2_side: int, rng: np.random.Generator):
    """Integer weights (uint32, 1..2^20) and observable (int32) of every state, row-major."""
    side = 1 << log2_side
    yy, xx = np.mgrid[0:side, 0:side].astype(np.float64)
    centre = rng.uniform(0, side, (N_BUMPS, 2))
    width = rng.uniform(0.04, 0.15, N_BUMPS) * side
    height = rng.uniform(0.2, 1.0, N_BUMPS)
    dens = np.full((side, side), 0.01)
    dist = np.empty((N_BUMPS, side, side))
    for b in range(N_BUMPS):
        dx = np.minimum(np.abs(xx - centre[b, 0]), side - np.abs(xx - centre[b, 0]))
        dy = np.minimum(np.abs(yy - centre[b, 1]), side - np.abs(yy - centre[b, 1]))
        dist[b] = np.hypot(dx, dy)
        dens += height[b] * np.exp(-0.5 * (dist[b] / width[b]) ** 2)
    weight = np.clip(np.rint(dens / dens.max() * (1 << 20)), 1, 1 << 20).astype(np.uint32)
    decile = np.minimum((weight.astype(np.float64) / (1 << 20) * 10).astype(np.int32), 9)
    observable = (np.argmin(dist, axis=0) * 10 + decile).astype(np.int32)
    return weight.ravel(), observable.ravel()


def make(size: str, rng: np.random.Generator) -> LaunchSpec:
    log2_side, n_chains, n_steps = SIZES[size]
    weight, observable = target(log2_side, rng)
    start = rng.integers(0, len(weight), n_chains, dtype=np.int32)
    random = rng.integers(0, 1 << 32, (n_steps, n_chains, 4), dtype=np.uint32)
    args = [weight, observable, start, random.ravel(), np.int32(n_chains), np.int32(n_steps), np.int32(log2_side),
            np.int32(R1), np.int32(R2),
            fill(n_chains, np.int32, -1), fill(n_chains, np.int32, -1), fill(2 * n_chains, np.int32, -1),
            np.zeros(int(observable.max()) + 1, np.int32)]
    names = ("weight", "observable", "start", "random", "n_chains", "n_steps", "log2_side", "r1", "r2",
             "final_state", "obs_sum", "accepted", "moves_into")
    return LaunchSpec((n_chains + BLOCK - 1) // BLOCK, BLOCK, args, outputs=(9, 10, 11, 12), arg_names=names)


def step(bits: np.ndarray, r: int) -> np.ndarray:
    """Displacement uniform over -r..-1, 1..r from the low bits of ``bits``."""
    b = bits.astype(np.int64) & (2 * r - 1)
    return np.where(b < r, b - r, b - r + 1)


def move(s: np.ndarray, word: np.ndarray, r: int, log2_side: int) -> np.ndarray:
    side = 1 << log2_side
    return ((s // side + step(word >> np.uint64(16), r)) % side) * side + (s % side + step(word, r)) % side


def reachable(a: np.ndarray, b: np.ndarray, r: int, log2_side: int) -> np.ndarray:
    """Both torus offsets from a to b are non-zero and at most r (q1(a -> b) > 0)."""
    side = 1 << log2_side
    dx = np.abs(a % side - b % side)
    dy = np.abs(a // side - b // side)
    dx, dy = np.minimum(dx, side - dx), np.minimum(dy, side - dy)
    return (dx >= 1) & (dx <= r) & (dy >= 1) & (dy <= r)


def run_chains(weight, observable, start, random, n_steps, log2_side, r1, r2):
    """Final state, observable sum, first- and second-stage accepts of every chain, move histogram."""
    n = len(start)
    words = random.reshape(n_steps, n, 4).transpose(0, 2, 1).astype(np.uint64)
    w = weight.astype(np.uint64)
    x = start.astype(np.int64)
    total = np.zeros(n, np.int64)
    first = np.zeros(n, np.int64)
    second = np.zeros(n, np.int64)
    moves = np.zeros(int(observable.max()) + 1, np.int64)
    for t in range(n_steps):
        y1 = move(x, words[t, 0], r1, log2_side)
        wx, w1 = w[x], w[y1]
        acc1 = words[t, 1] * wx < (w1 << np.uint64(32))
        y2 = move(x, words[t, 2], r2, log2_side)
        w2 = w[y2]
        # the first stage rejects only if w1 < wx, so wx - w1 is positive where it is used
        acc2 = (~acc1 & (w2 > w1) & reachable(y2, y1, r1, log2_side)
                & (words[t, 3] * (wx - np.minimum(w1, wx)) < ((w2 - np.minimum(w1, w2)) << np.uint64(32))))
        x = np.where(acc1, y1, np.where(acc2, y2, x))
        first += acc1
        second += acc2
        np.add.at(moves, observable[x[acc1 | acc2]], 1)
        total += observable[x]
    return x, total, first, second, moves


def reference(spec: LaunchSpec) -> dict:
    x, total, first, second, moves = run_chains(
        spec.arg("weight"), spec.arg("observable"), spec.arg("start"), spec.arg("random"), int(spec.arg("n_steps")),
        int(spec.arg("log2_side")), int(spec.arg("r1")), int(spec.arg("r2")))
    return {"final_state": x.astype(np.int32), "obs_sum": total.astype(np.int32),
            "accepted": np.stack([first, second], axis=1).ravel().astype(np.int32), "moves_into": moves.astype(np.int32)}


WORKLOAD = Workload(
    name="mcreject",
    description="Delayed-rejection Metropolis-Hastings chains: accept reads the observable, reject retries (ElTantawy et al. 2014 multi-path study)",
    kernel="dr_metropolis",
    make=make,
    sizes=tuple(SIZES),
    reference=reference,
    features=("32/64-bit integer arithmetic", "pre-generated random words", "atomics", "if/else in a fixed-trip loop"),
)
