"""k-means clustering with Rodinia kmeans' kernels and host loop (Che et al. 2009).

Points drawn around random centres, rounded to integers 0..63.  The host program transposes them
once (``kmeans_invert``), takes the first k points as the initial centres (as Rodinia does), then
repeats ``kmeans_assign`` and the host's centre update until no membership changes (at most
MAX_ITERATIONS).  The trace is the first ``kmeans_assign``.  The reference computes every squared
distance with float32 numpy in the kernel's order (the kernel rounds every operation, so they
agree bit for bit) and takes the first nearest centre, as the kernel's strict ``<`` does.
"""

from __future__ import annotations

import numpy as np

from simt_fast.workloads import LaunchSpec, Workload, fill

BLOCK = 256
SIZES = {"tiny": (1024, 8, 5), "default": (8192, 16, 5)}  # points, features, clusters
MAX_ITERATIONS = 10
NAMES = ("features", "n_features", "n_points", "n_clusters", "centres", "membership")


def inputs(size: str, rng: np.random.Generator) -> np.ndarray:
    n, nf, k = SIZES[size]
    centres = rng.uniform(8, 56, (k + 2, nf))
    pts = centres[rng.integers(0, k + 2, n)] + rng.normal(0, 6, (n, nf))
    return np.clip(np.rint(pts), 0, 63).astype(np.float32)


def nearest(features: np.ndarray, centres: np.ndarray) -> np.ndarray:
    """The index of each point's nearest centre (features: [n_features][n_points])."""
    best = np.full(features.shape[1], np.float32(3.402823466e38))
    index = np.full(features.shape[1], -1, np.int32)
    for c, centre in enumerate(centres):
        dist = np.zeros(features.shape[1], np.float32)
        for f in range(features.shape[0]):
            diff = features[f] - centre[f]
            dist = dist + diff * diff
        closer = dist < best
        best = np.where(closer, dist, best)
        index[closer] = c
    return index


def new_centres(points: np.ndarray, membership: np.ndarray, centres: np.ndarray) -> np.ndarray:
    out = centres.copy()
    for c in range(len(centres)):
        members = points[membership == c]
        if len(members):
            out[c] = members.mean(axis=0, dtype=np.float64)
    return out.astype(np.float32)


def make(size: str, rng: np.random.Generator) -> LaunchSpec:
    points = inputs(size, rng)
    n, nf, k = SIZES[size]
    args = [np.ascontiguousarray(points.T).ravel(), np.int32(nf), np.int32(n), np.int32(k), points[:k].ravel().copy(),
            fill(n, np.int32, -2)]
    return LaunchSpec(-(-n // BLOCK), BLOCK, args, outputs=(5,), arg_names=NAMES, meta={"launch": 1})


def reference(spec: LaunchSpec) -> dict:
    nf, n, k = (int(spec.arg(a)) for a in ("n_features", "n_points", "n_clusters"))
    return {"membership": nearest(spec.arg("features").reshape(nf, n), spec.arg("centres").reshape(k, nf))}


def program(size: str, rng: np.random.Generator, launch) -> None:
    points = inputs(size, rng)
    n, nf, k = SIZES[size]
    grid = -(-n // BLOCK)
    features = np.zeros(n * nf, np.float32)
    launch("kmeans_invert", grid, BLOCK, [points.ravel(), features, np.int32(n), np.int32(nf)])
    centres, want_centres = points[:k].copy(), points[:k].copy()
    membership = np.full(n, -1, np.int32)
    for _ in range(MAX_ITERATIONS):
        before = membership.copy()
        launch("kmeans_assign", grid, BLOCK, [features, np.int32(nf), np.int32(n), np.int32(k), centres.ravel(), membership])
        want = nearest(points.T, want_centres)
        np.testing.assert_array_equal(membership, want, err_msg="kmeans: memberships")
        centres, want_centres = new_centres(points, membership, centres), new_centres(points, want, want_centres)
        if np.array_equal(before, membership):
            break
    np.testing.assert_array_equal(features.reshape(nf, n), points.T, err_msg="kmeans: transposed features")


WORKLOAD = Workload(
    name="kmeans",
    description="k-means nearest-centre search, feature-major points, every thread reading the same centre (Rodinia kmeans, Che et al. 2009)",
    kernel="kmeans_assign",
    make=make,
    sizes=tuple(SIZES),
    reference=reference,
    program=program,
    features=("uniform loads", "nested loops", "two kernels + host loop"),
)
