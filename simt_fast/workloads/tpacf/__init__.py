"""Two-point angular correlation histograms with Parboil tpacf's kernel and launch (Stratton et al. 2012).

The data set is points on the unit sphere clustered around a few centres; the random sets are
uniform on the sphere.  The 21 bin edges are the cosines of angles log-spaced from 0.01 to 1.5
radians (descending).  One launch computes DD, every DR and every RR histogram (Parboil's host
then combines them with the random sets' histograms of other launches; the kernel's work is this
one launch).  The reference bins every pair's dot product in float32 numpy, rounded as the kernel
rounds it, with ``searchsorted`` over the edges.
"""

from __future__ import annotations

import numpy as np

from simt_fast.workloads import LaunchSpec, Workload, fill

BLOCK = 256
NBINS = 20
SIZES = {"tiny": (64, 1), "default": (256, 2)}  # points per set, random sets
NAMES = ("xs", "ys", "zs", "edges", "n_sets", "n", "hist")


def unit(v: np.ndarray) -> np.ndarray:
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def make(size: str, rng: np.random.Generator) -> LaunchSpec:
    n, n_sets = SIZES[size]
    centres = unit(rng.standard_normal((4, 3)))
    data = unit(centres[rng.integers(0, 4, n)] + 0.15 * rng.standard_normal((n, 3)))
    pts = np.concatenate([data] + [unit(rng.standard_normal((n, 3))) for _ in range(n_sets)]).astype(np.float32)
    edges = np.cos(np.logspace(np.log10(0.01), np.log10(1.5), NBINS + 1)).astype(np.float32)
    args = [pts[:, 0].copy(), pts[:, 1].copy(), pts[:, 2].copy(), edges, np.int32(n_sets), np.int32(n),
            fill((2 * n_sets + 1) * NBINS, np.uint32, 0xFFFFFFFF)]
    return LaunchSpec(2 * n_sets + 1, BLOCK, args, outputs=(6,), arg_names=NAMES, meta={"launch": 0})


def bins(a: np.ndarray, b: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Bin of every pair (a_i, b_j): the k with edges[k+1] <= dot < edges[k], ends clamped."""
    dot = (a[:, None, 0] * b[None, :, 0] + a[:, None, 1] * b[None, :, 1]) + a[:, None, 2] * b[None, :, 2]
    inner = edges[1:NBINS][::-1]  # ascending
    return (NBINS - 1) - np.searchsorted(inner, dot, side="right")


def reference(spec: LaunchSpec) -> dict:
    n, n_sets = int(spec.arg("n")), int(spec.arg("n_sets"))
    pts = np.stack([spec.arg("xs"), spec.arg("ys"), spec.arg("zs")], axis=1).reshape(n_sets + 1, n, 3)
    edges = spec.arg("edges")
    rows = []
    for b in range(2 * n_sets + 1):
        set_a, set_b = (0, b) if b <= n_sets else (b - n_sets, b - n_sets)
        k = bins(pts[set_a], pts[set_b], edges)
        if b == 0 or b > n_sets:
            k = k[np.triu_indices(n, 1)]
        rows.append(np.bincount(k.ravel(), minlength=NBINS))
    return {"hist": np.concatenate(rows).astype(np.uint32)}


WORKLOAD = Workload(
    name="tpacf",
    description="Angular correlation histograms: shared-memory point tiles, per-pair binary search, shared atomics (Parboil tpacf, Stratton et al. 2012; Wu et al. 2012)",
    kernel="tpacf_hist",
    make=make,
    sizes=tuple(SIZES),
    reference=reference,
    features=("shared memory + __syncthreads", "binary-search loop", "shared atomics", "few large CTAs"),
)
