"""Whitted ray tracer with shadows and bounded reflections (Jin 2012 §5.3, RAY).

The scene: a checkered floor (y = 0) and randomly placed spheres resting above it, a point
light.  The reference traces every pixel at once in float32 numpy, with an active mask per
pixel, performing the same correctly-rounded operations in the same order as the kernel (which
uses __fmul_rn/__fadd_rn/__fdiv_rn/__fsqrt_rn so nvcc cannot fuse them); hit/miss/shadow
decisions therefore agree exactly, ``bounces`` must match exactly and ``image`` within 1e-5.
"""

from __future__ import annotations

import numpy as np

from simt_fast.workloads import LaunchSpec, Workload, fill

F = np.float32
MAX_DEPTH, EPS, FAR, AMBIENT, MIN_WEIGHT = 5, F(1e-3), F(1000.0), F(0.1), F(0.02)
SIZES = {"tiny": (32, 32, 6), "default": (128, 128, 10), "thesis": (256, 256, 10)}  # width, height, spheres
BLOCK = (16, 8)


def scene(n_spheres: int, rng: np.random.Generator) -> np.ndarray:
    s = np.zeros((n_spheres, 8), np.float32)
    s[:, 3] = rng.uniform(0.3, 1.1, n_spheres)  # radius
    s[:, 0] = rng.uniform(-4.0, 4.0, n_spheres)
    s[:, 1] = s[:, 3] + rng.uniform(0.0, 1.5, n_spheres)  # rests on or floats above the floor
    s[:, 2] = rng.uniform(0.0, 8.0, n_spheres)
    s[:, 4] = rng.uniform(0.2, 1.0, n_spheres)  # albedo
    s[:, 5] = rng.choice(np.array([0.0, 0.3, 0.6, 0.9], np.float32), n_spheres)  # reflectivity
    return s


def make(size: str, rng: np.random.Generator) -> LaunchSpec:
    w, h, n = SIZES[size]
    spheres = scene(n, rng)
    light = rng.uniform([-5.0, 6.0, -4.0], [5.0, 10.0, 2.0]).astype(np.float32)
    args = [spheres.ravel(), np.int32(n), F(light[0]), F(light[1]), F(light[2]), np.int32(w), np.int32(h),
            fill(w * h, np.float32, np.nan), fill(w * h, np.int32, -1)]
    names = ("spheres", "n_spheres", "light_x", "light_y", "light_z", "width", "height", "image", "bounces")
    grid = ((w + BLOCK[0] - 1) // BLOCK[0], (h + BLOCK[1] - 1) // BLOCK[1])
    return LaunchSpec(grid, BLOCK, args, outputs=(7, 8), arg_names=names)


def _dot(a, b):
    return (a[0] * b[0] + a[1] * b[1]) + a[2] * b[2]


def _normalize(a):
    n = np.sqrt(_dot(a, a))
    return [a[0] / n, a[1] / n, a[2] / n]


def _hit_sphere(sph, o, d):
    """Per-ray distance to one sphere (FAR on a miss); same operation order as the kernel."""
    oc = [o[0] - sph[0], o[1] - sph[1], o[2] - sph[2]]
    b = _dot(oc, d)
    c = _dot(oc, oc) - sph[3] * sph[3]
    disc = b * b - c
    with np.errstate(invalid="ignore"):
        root = np.sqrt(disc)
    t = -b - root
    t = np.where(t <= EPS, -b + root, t)
    return np.where((disc > 0) & (t > EPS), t, FAR).astype(np.float32)


def render(spheres: np.ndarray, light, w: int, h: int):
    """float32 image and bounce counts, all pixels traced together."""
    py, px = np.divmod(np.arange(w * h), w)
    aspect = F(w) / F(h)
    u = ((F(2) * (px.astype(F) + F(0.5))) / F(w) - F(1)) * aspect
    v = F(1) - (F(2) * (py.astype(F) + F(0.5))) / F(h)
    n = len(spheres)
    origin = [np.full(w * h, F(0)), np.full(w * h, F(1.5)), np.full(w * h, F(-6))]
    d = _normalize([u, v, np.full(w * h, F(1.5))])
    color = np.zeros(w * h, F)
    weight = np.ones(w * h, F)
    bounces = np.zeros(w * h, np.int32)
    active = np.ones(w * h, bool)
    for _ in range(MAX_DEPTH):
        t_best = np.full(w * h, FAR)
        hit = np.full(w * h, -1)
        for k in range(n):
            t = _hit_sphere(spheres[k], origin, d)
            closer = t < t_best
            t_best, hit = np.where(closer, t, t_best), np.where(closer, k, hit)
        down = d[1] < F(-1e-6)
        with np.errstate(divide="ignore", invalid="ignore"):
            t = np.where(down, -origin[1] / d[1], FAR)
        floor = down & (t > EPS) & (t < t_best)
        t_best, hit = np.where(floor, t, t_best), np.where(floor, n, hit)

        sky = active & (hit < 0)
        color = np.where(sky, color + weight * (F(0.3) + F(0.5) * np.maximum(d[1], F(0))), color)
        active &= ~sky
        bounces += active
        p = [origin[i] + d[i] * t_best for i in range(3)]
        sid = np.clip(hit, 0, max(n - 1, 0))
        table = spheres if n else np.zeros((1, 8), F)  # floor-only scenes index a dummy row
        centre = [table[sid, i] for i in range(3)]
        with np.errstate(divide="ignore", invalid="ignore"):
            sphere_normal = _normalize([p[i] - centre[i] for i in range(3)])
        on_floor = hit == n
        normal = [np.where(on_floor, F(c), sphere_normal[i]) for i, c in enumerate((0, 1, 0))]
        with np.errstate(invalid="ignore"):
            cx = np.floor(np.where(active, p[0], 0)).astype(np.int32)
            cz = np.floor(np.where(active, p[2], 0)).astype(np.int32)
        albedo = np.where(on_floor, np.where((cx + cz) & 1, F(0.9), F(0.25)), table[sid, 4])
        reflectivity = np.where(on_floor, F(0.35), table[sid, 5])
        to_light = [F(light[i]) - p[i] for i in range(3)]
        light_dist = np.sqrt(_dot(to_light, to_light))
        l_dir = [to_light[i] / light_dist for i in range(3)]
        p_off = [p[i] + normal[i] * EPS for i in range(3)]
        lambert = _dot(normal, l_dir)
        shadowed = np.zeros(w * h, bool)
        for k in range(n):
            shadowed |= _hit_sphere(spheres[k], p_off, l_dir) < light_dist
        lit = np.where((lambert > 0) & ~shadowed, AMBIENT + lambert, AMBIENT)
        color = np.where(active, color + ((weight * (F(1) - reflectivity)) * albedo) * lit, color)
        weight = np.where(active, weight * reflectivity, weight)
        active &= ~(weight < MIN_WEIGHT)
        two_dn = F(2) * _dot(d, normal)
        with np.errstate(divide="ignore", invalid="ignore"):
            new_d = _normalize([d[i] - normal[i] * two_dn for i in range(3)])
        d = [np.where(active, new_d[i], d[i]) for i in range(3)]
        origin = [np.where(active, p_off[i], origin[i]) for i in range(3)]
        if not active.any():
            break
    return color.astype(np.float32), bounces


def reference(spec: LaunchSpec) -> dict:
    n = int(spec.arg("n_spheres"))
    spheres = spec.arg("spheres").reshape(n, 8)
    light = (spec.arg("light_x"), spec.arg("light_y"), spec.arg("light_z"))
    image, bounces = render(spheres, light, int(spec.arg("width")), int(spec.arg("height")))
    return {"image": image, "bounces": bounces}


WORKLOAD = Workload(
    name="raytrace",
    description="Whitted ray tracer, spheres + checkered floor, shadows, <=5 reflections (Jin 2012 §5.3 RAY)",
    kernel="raytrace",
    make=make,
    sizes=tuple(SIZES),
    reference=reference,
    tolerance={"image": (0.0, 1e-5)},
    features=("float32 (rounded intrinsics)", "nested loops with early exits", "2-D grid"),
)
