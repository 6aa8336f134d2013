"""Hash-join probe over a linear-probing table at ~70% load, one thread per probe row.

The generator draws build-side keys with Zipf-like multiplicities (most keys once, a few many
times), inserts the distinct keys into a power-of-two open-addressing table with linear probing
(MurmurHash3's finaliser as the hash) until it is ~70% full, chains the build rows of each key,
and draws probe rows of which about 60% carry a key of the build side.

The reference answers the join from a Python dictionary of key -> build rows (not from the
table), and counts each probe's slots by probing the table arrays in numpy, all probes at once.
"""

from __future__ import annotations

import numpy as np

from simt_fast.workloads import LaunchSpec, Workload, fill

SIZES = {"tiny": (10, 1024), "default": (17, 65536)}  # (log2 table slots, probe rows)
LOAD = 0.7
HIT_FRACTION = 0.6
N_GROUPS = 64
BLOCK = 128
EMPTY = np.uint32(0xFFFFFFFF)


def mix32(h: np.ndarray) -> np.ndarray:
    """MurmurHash3 fmix32 on a uint32 array."""
    h = np.asarray(h, np.uint32).copy()
    h ^= h >> np.uint32(16)
    h *= np.uint32(0x85EBCA6B)
    h ^= h >> np.uint32(13)
    h *= np.uint32(0xC2B2AE35)
    h ^= h >> np.uint32(16)
    return h


def build_table(keys: np.ndarray, log2_slots: int):
    """Insert distinct keys with linear probing: (table_keys, slot of each key)."""
    mask = (1 << log2_slots) - 1
    table = np.full(1 << log2_slots, EMPTY, np.uint32)
    slots = np.empty(len(keys), np.int64)
    for j, (key, h) in enumerate(zip(keys.tolist(), (mix32(keys) & np.uint32(mask)).tolist())):
        while table[h] != EMPTY:
            h = (h + 1) & mask
        table[h] = key
        slots[j] = h
    return table, slots


def make(size: str, rng: np.random.Generator) -> LaunchSpec:
    log2_slots, n_probe = SIZES[size]
    n_keys = int(LOAD * (1 << log2_slots))
    universe = rng.choice(np.uint32(0xFFFFFFFE), size=2 * n_keys, replace=False).astype(np.uint32)
    keys, absent = universe[:n_keys], universe[n_keys:]
    table_keys, slots = build_table(keys, log2_slots)

    multiplicity = np.minimum(rng.zipf(1.8, n_keys), 24)
    row_key = rng.permutation(np.repeat(np.arange(n_keys), multiplicity))  # build rows in random order
    n_rows = len(row_key)
    build_val = rng.integers(-1000, 1000, n_rows, dtype=np.int32)
    build_next = np.full(n_rows, -1, np.int32)
    head = np.full(n_keys, -1, np.int32)
    for r in range(n_rows - 1, -1, -1):  # chain each key's rows in row order
        k = row_key[r]
        build_next[r] = head[k]
        head[k] = r
    table_head = np.full(1 << log2_slots, -1, np.int32)
    table_head[slots] = head

    hit = rng.random(n_probe) < HIT_FRACTION
    probe_keys = np.where(hit, keys[rng.integers(0, n_keys, n_probe)],
                          absent[rng.integers(0, len(absent), n_probe)]).astype(np.uint32)
    probe_group = rng.integers(0, N_GROUPS, n_probe, dtype=np.int32)
    group_default = rng.integers(-1000, 1000, N_GROUPS, dtype=np.int32)
    args = [table_keys, table_head, build_next, build_val, probe_keys, probe_group, group_default,
            np.int32(n_probe), np.uint32((1 << log2_slots) - 1),
            fill(n_probe, np.int32, -12345), fill(n_probe, np.int32, -1), fill(n_probe, np.int32, -1)]
    names = ("table_keys", "table_head", "build_next", "build_val", "probe_keys", "probe_group", "group_default",
             "n_probe", "slot_mask", "out_sum", "out_count", "out_probes")
    grid = (n_probe + BLOCK - 1) // BLOCK
    return LaunchSpec(grid, BLOCK, args, outputs=(9, 10, 11), arg_names=names,
                      meta={"build_keys": keys, "row_key": row_key})


def probe_lengths(table_keys: np.ndarray, probe_keys: np.ndarray, mask: int) -> np.ndarray:
    """Slots each probe examines (its key's slot or the first empty one), all probes at once."""
    slot = (mix32(probe_keys) & np.uint32(mask)).astype(np.int64)
    length = np.ones(len(probe_keys), np.int32)
    live = np.ones(len(probe_keys), bool)
    while True:
        k = table_keys[slot]
        live &= (k != probe_keys) & (k != EMPTY)
        if not live.any():
            return length
        slot = np.where(live, (slot + 1) & mask, slot)
        length += live


def reference(spec: LaunchSpec) -> dict:
    keys, row_key = spec.meta["build_keys"], spec.meta["row_key"]
    build_val = spec.arg("build_val")
    by_key = np.bincount(row_key, weights=build_val.astype(np.float64), minlength=len(keys)).astype(np.int64)
    count_by_key = np.bincount(row_key, minlength=len(keys))
    index = {int(k): j for j, k in enumerate(keys.tolist())}
    probe_keys = spec.arg("probe_keys")
    j = np.array([index.get(int(k), -1) for k in probe_keys.tolist()], np.int64)
    hit = j >= 0
    default = spec.arg("group_default")[spec.arg("probe_group")]
    out_sum = np.where(hit, by_key[np.maximum(j, 0)], default).astype(np.int32)
    out_count = np.where(hit, count_by_key[np.maximum(j, 0)], 0).astype(np.int32)
    probes = probe_lengths(spec.arg("table_keys"), probe_keys, int(spec.arg("slot_mask")))
    return {"out_sum": out_sum, "out_count": out_count, "out_probes": probes}


WORKLOAD = Workload(
    name="hashprobe",
    description="Hash-join probe, linear probing at 70% load: chain walk on hit, group default on miss (ElTantawy et al. 2014 multi-path study)",
    kernel="hash_probe",
    make=make,
    sizes=tuple(SIZES),
    reference=reference,
    features=("32-bit integer hashing", "pointer chasing", "loop with two exits"),
)
