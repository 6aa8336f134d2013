"""BVH ray traversal over random spheres, one thread per ray (Aila & Laine's stack traversal).

The generator scatters spheres of varied radii in a cube, builds a binary BVH over them in numpy
(median split of the centroids along the widest axis, up to ``LEAF_SIZE`` spheres per leaf,
children of a node stored side by side) and casts incoherent rays: random origins inside the
scene, random unit directions, like the diffuse and ambient-occlusion rays of a path tracer.

The reference does not traverse the tree: it intersects every ray with every sphere (brute
force, in chunks) with the kernel's float32 operations in the kernel's order and keeps the
nearest hit (ties to the lower sphere id).  A traversal that skipped a subtree it should have
entered, or stopped early, gives a different answer.
"""

from __future__ import annotations

import numpy as np

from simt_fast.workloads import LaunchSpec, Workload, fill

SIZES = {"tiny": (512, 256), "default": (8192, 4096)}  # (rays, spheres)
BLOCK = 128
LEAF_SIZE = 4
SCENE = 100.0  # cube side for DENSITY_SPHERES spheres; smaller scenes keep the same density
DENSITY_SPHERES = 4096
FAR = np.float32(1.0e30)
EPS = np.float32(1e-3)
F = np.float32


def scene_side(n_spheres: int) -> float:
    return SCENE * (n_spheres / DENSITY_SPHERES) ** (1.0 / 3.0)


def spheres_in_cube(n: int, rng: np.random.Generator) -> np.ndarray:
    """(n, 4) float32 centres and radii; radii log-uniform so boxes overlap unevenly."""
    s = np.empty((n, 4), np.float32)
    s[:, :3] = rng.uniform(0.0, scene_side(n), (n, 3))
    s[:, 3] = np.exp(rng.uniform(np.log(0.3), np.log(3.0), n))
    return s


def build_bvh(spheres: np.ndarray):
    """Binary BVH: node_box (n_nodes, 6) float32, node_info (n_nodes, 2) int32, prim_idx int32.

    node_info[k] = (first child, 0) for an inner node (children first and first + 1), or
    (first primitive slot, count) for a leaf.  Boxes are padded so that float rounding in the
    slab test can never cut off a sphere the ray really hits.
    """
    lo = spheres[:, :3].astype(np.float64) - spheres[:, 3:4]
    hi = spheres[:, :3].astype(np.float64) + spheres[:, 3:4]
    centre = spheres[:, :3].astype(np.float64)
    boxes, info, prims = [None], [None], []
    work = [(0, np.arange(len(spheres)))]
    while work:
        k, members = work.pop()
        pad = 1e-3 + 1e-5 * SCENE
        boxes[k] = np.concatenate([lo[members].min(0) - pad, hi[members].max(0) + pad])
        if len(members) <= LEAF_SIZE:
            info[k] = (len(prims), len(members))
            prims.extend(members.tolist())
            continue
        c = centre[members]
        axis = int(np.argmax(c.max(0) - c.min(0)))
        order = members[np.argsort(c[:, axis], kind="stable")]
        half = len(order) // 2
        first = len(boxes)
        boxes += [None, None]
        info += [None, None]
        info[k] = (first, 0)
        work += [(first, order[:half]), (first + 1, order[half:])]
    return (np.array(boxes, np.float32), np.array(info, np.int32), np.array(prims, np.int32))


def random_rays(n: int, side: float, rng: np.random.Generator) -> np.ndarray:
    """(n, 6) float32: origins inside the scene, unit directions (no zero component)."""
    r = np.empty((n, 6), np.float32)
    r[:, :3] = rng.uniform(0.05 * side, 0.95 * side, (n, 3))
    d = rng.normal(size=(n, 3))
    d[np.abs(d) < 1e-6] = 1e-6
    r[:, 3:] = d / np.linalg.norm(d, axis=1, keepdims=True)
    return r


def make(size: str, rng: np.random.Generator) -> LaunchSpec:
    n_rays, n_spheres = SIZES[size]
    spheres = spheres_in_cube(n_spheres, rng)
    node_box, node_info, prim_idx = build_bvh(spheres)
    rays = random_rays(n_rays, scene_side(n_spheres), rng)
    args = [node_box.ravel(), node_info.ravel(), prim_idx, spheres.ravel(), rays.ravel(), np.int32(n_rays),
            fill(n_rays, np.float32, np.nan), fill(n_rays, np.int32, -7)]
    names = ("node_box", "node_info", "prim_idx", "spheres", "rays", "n_rays", "hit_t", "hit_prim")
    return LaunchSpec((n_rays + BLOCK - 1) // BLOCK, BLOCK, args, outputs=(6, 7), arg_names=names)


def hit_spheres(spheres: np.ndarray, o: np.ndarray, d: np.ndarray) -> np.ndarray:
    """(rays, spheres) float32 hit distances (FAR = miss), the kernel's hit_sphere op for op."""
    ox, oy, oz = (o[:, None, k] - spheres[None, :, k] for k in range(3))
    dx, dy, dz = (d[:, None, k] for k in range(3))
    b = (ox * dx + oy * dy) + oz * dz
    c = ((ox * ox + oy * oy) + oz * oz) - spheres[None, :, 3] * spheres[None, :, 3]
    disc = b * b - c
    root = np.sqrt(np.maximum(disc, F(0)))
    t = -b - root
    t = np.where(t <= EPS, -b + root, t)
    return np.where((disc > 0) & (t > EPS), t, FAR).astype(np.float32)


def nearest_hits(spheres: np.ndarray, rays: np.ndarray, chunk: int = 256):
    """Brute-force nearest hit per ray: (t, sphere id or -1)."""
    t_out = np.empty(len(rays), np.float32)
    p_out = np.empty(len(rays), np.int32)
    for s in range(0, len(rays), chunk):
        r = rays[s:s + chunk]
        t = hit_spheres(spheres, r[:, :3], r[:, 3:])
        p = np.argmin(t, axis=1)  # first (lowest id) of the minima
        tmin = t[np.arange(len(r)), p]
        t_out[s:s + chunk] = tmin
        p_out[s:s + chunk] = np.where(tmin < FAR, p, -1)
    return t_out, p_out


def reference(spec: LaunchSpec) -> dict:
    spheres = spec.arg("spheres").reshape(-1, 4)
    rays = spec.arg("rays").reshape(-1, 6)
    t, p = nearest_hits(spheres, rays)
    return {"hit_t": t, "hit_prim": p}


WORKLOAD = Workload(
    name="bvh",
    description="BVH ray traversal over random spheres, inner-node vs leaf work per step (ElTantawy et al. 2014 multi-path study)",
    kernel="bvh_trace",
    make=make,
    sizes=tuple(SIZES),
    reference=reference,
    tolerance={"hit_t": (0.0, 0.0)},
    features=("float32 (rounded intrinsics)", "local-memory stack", "pointer chasing"),
)
