"""Time-dependent SSSP, one Bellman-Ford round (pull form), on a power-law-ish road-like graph.

The generator draws a directed graph in CSR form by destination: in-degrees from a Zipf-like
tail (most vertices a few in-edges, some up to ``MAX_IN_DEGREE``) and sources skewed towards low
ids (hubs with a large out-degree).  About ``TD_FRACTION`` of the edges are time-dependent: they
point at one of a few hundred travel-time profiles (``TD_SLOTS`` points over a periodic day, with
random rush hours); the others flow freely: their length over the speed of their road class.
Bellman-Ford rounds from vertex 0 run in numpy to the fixed point, and the kernel gets the labels
before the busiest round once most vertices are reached, so most edges are live and many still
relax.

The reference recomputes that round from the edge list, all edges at once, as a minimum per
vertex of packed (arrival, predecessor) keys.
"""

from __future__ import annotations

import numpy as np

from simt_fast.workloads import LaunchSpec, Workload, fill

SIZES = {"tiny": 1024, "default": 32768}
MAX_IN_DEGREE = 64
TD_FRACTION = 0.5
TD_SLOTS = 16
SLOT_BITS = 6
N_PROFILES = 256
N_CLASSES = 8
BLOCK = 128
INF = 0x3FFFFFFF


def random_graph(n: int, rng: np.random.Generator):
    """CSR by destination (row_ptr, src), no self loops."""
    in_degree = np.minimum(rng.zipf(1.8, n) + 1, MAX_IN_DEGREE)
    row_ptr = np.zeros(n + 1, np.int32)
    np.cumsum(in_degree, out=row_ptr[1:])
    popularity = 1.0 / np.arange(1, n + 1) ** 0.7
    src = rng.choice(n, int(row_ptr[-1]), p=popularity / popularity.sum())
    dst = np.repeat(np.arange(n), in_degree)
    return row_ptr, np.where(src == dst, (src + 1) % n, src).astype(np.int32)


def travel_times(profile_of, length, road_class, class_speed, profile, depart):
    """Travel time of each edge when leaving its source at time ``depart`` (the kernel's formula)."""
    depart = depart.astype(np.int64)
    slot = (depart >> SLOT_BITS) & (TD_SLOTS - 1)
    frac = depart & ((1 << SLOT_BITS) - 1)
    f = profile.reshape(-1, TD_SLOTS).astype(np.int64)
    p = np.maximum(profile_of, 0)
    a, b = f[p, slot], f[p, (slot + 1) & (TD_SLOTS - 1)]
    speed = class_speed[road_class].astype(np.int64)
    free_flow = (length.astype(np.int64) + speed - 1) // speed
    return np.where(profile_of < 0, free_flow, a + (((b - a) * frac) >> SLOT_BITS))


def relax_round(row_ptr, src, profile_of, length, road_class, class_speed, profile, dist, pred):
    """One Jacobi round: per vertex, the minimum (arrival, predecessor) over itself and its in-edges."""
    n = len(dist)
    unreached = np.iinfo(np.int64).max
    dst = np.repeat(np.arange(n), np.diff(row_ptr))
    live = dist[src] < INF
    s = src[live].astype(np.int64)
    arrive = dist[s] + travel_times(profile_of[live], length[live], road_class[live], class_speed, profile, dist[s])
    key = (dist.astype(np.int64) << 21) | (pred.astype(np.int64) + 1)
    key[dist >= INF] = unreached
    np.minimum.at(key, dst[live], (arrive << 21) | (s + 1))
    found = key != unreached
    return (np.where(found, key >> 21, INF).astype(np.int32),
            np.where(found, (key & 0x1FFFFF) - 1, pred).astype(np.int32))


def make(size: str, rng: np.random.Generator) -> LaunchSpec:
    n = SIZES[size]
    row_ptr, src = random_graph(n, rng)
    n_edges = len(src)
    profile_of = np.where(rng.random(n_edges) < TD_FRACTION, rng.integers(0, N_PROFILES, n_edges), -1).astype(np.int32)
    length = rng.integers(50, 2000, n_edges, dtype=np.int32)  # metres
    road_class = rng.integers(0, N_CLASSES, n_edges, dtype=np.int32)
    class_speed = np.array([30, 25, 18, 14, 11, 8, 6, 4], np.int32)[:N_CLASSES]  # metres per time unit
    base = rng.integers(8, 128, (N_PROFILES, 1))
    peak = rng.integers(0, TD_SLOTS, (N_PROFILES, 1))
    hour = np.arange(TD_SLOTS)[None, :]
    rush = np.maximum(0, 3 - np.minimum(np.abs(hour - peak), TD_SLOTS - np.abs(hour - peak)))  # 3, 2, 1 slots around peak
    profile = (base + base * rush // 2).astype(np.int32)

    labels = [(np.where(np.arange(n) == 0, 0, INF).astype(np.int32), np.full(n, -1, np.int32))]
    while True:  # to the fixed point (travel times are positive)
        nxt = relax_round(row_ptr, src, profile_of, length, road_class, class_speed, profile, *labels[-1])
        if all(np.array_equal(a, b) for a, b in zip(nxt, labels[-1])):
            break
        labels.append(nxt)
    reached = [np.mean(d < INF) for d, _ in labels]
    changes = [int(np.sum(labels[k + 1][0] != labels[k][0])) for k in range(len(labels) - 1)]
    busy = [k for k in range(len(changes)) if reached[k] >= 0.75 * reached[-1]]
    dist, pred = labels[max(busy, key=lambda k: changes[k])]
    args = [row_ptr, src, profile_of, length, road_class, class_speed, profile.ravel(), dist, pred, np.int32(n),
            fill(n, np.int32, -7), fill(n, np.int32, -7)]
    names = ("row_ptr", "src", "profile_of", "length", "road_class", "class_speed", "profile", "dist", "pred", "n_nodes",
             "new_dist", "new_pred")
    return LaunchSpec((n + BLOCK - 1) // BLOCK, BLOCK, args, outputs=(10, 11), arg_names=names)


def reference(spec: LaunchSpec) -> dict:
    d, p = relax_round(*(spec.arg(k) for k in ("row_ptr", "src", "profile_of", "length", "road_class", "class_speed",
                                                  "profile", "dist", "pred")))
    return {"new_dist": d, "new_pred": p}


WORKLOAD = Workload(
    name="sssp",
    description="Time-dependent SSSP Bellman-Ford round (pull, CSR in-edges): free-flow vs profile travel time per edge (ElTantawy et al. 2014 multi-path study)",
    kernel="sssp_round",
    make=make,
    sizes=tuple(SIZES),
    reference=reference,
    features=("irregular loops", "dependent loads", "if/else in a loop"),
)
