"""do-while with a data-dependent break (ElTantawy et al. 2014, opportunistic early reconvergence).

Each thread iterates a xorshift32 generator until its value matches a per-thread target under
a mask (expected ~1/(mask+1) chance per step) or its iteration budget runs out.  The reference
runs all threads in lock-step numpy with an active mask and must match exactly.
"""

from __future__ import annotations

import numpy as np

from simt_fast.workloads import LaunchSpec, Workload, fill

SIZES = {"tiny": (1024, 128), "default": (65536, 256)}  # threads, block
TARGET_MASK = 0x3F  # ~1/64 chance per step to break out early
MAX_BUDGET = 160


def make(size: str, rng: np.random.Generator) -> LaunchSpec:
    n, block = SIZES[size]
    seeds = rng.integers(1, 2**32, n, dtype=np.uint32)  # xorshift needs a non-zero state
    targets = rng.integers(0, TARGET_MASK + 1, n, dtype=np.uint32)
    budget = rng.integers(1, MAX_BUDGET + 1, n, dtype=np.int32)
    args = [seeds, targets, budget, np.uint32(TARGET_MASK), np.int32(n),
            fill(n, np.int32, -99), fill(n, np.uint32, 0xDEADBEEF)]
    names = ("seeds", "targets", "budget", "target_mask", "n", "found_at", "checksum")
    return LaunchSpec((n + block - 1) // block, block, args, outputs=(5, 6), arg_names=names)


def reference(spec: LaunchSpec) -> dict:
    x = spec.arg("seeds").copy()
    target, limit = spec.arg("targets"), spec.arg("budget")
    mask = np.uint32(spec.arg("target_mask"))
    n = len(x)
    acc = np.zeros(n, np.uint32)
    found = np.full(n, -1, np.int32)
    active = np.ones(n, bool)
    it = 0
    while active.any():
        it += 1
        y = x ^ (x << np.uint32(13))
        y ^= y >> np.uint32(17)
        y ^= y << np.uint32(5)
        x = np.where(active, y, x)
        hit = active & ((x & mask) == target)
        found = np.where(hit, it, found)
        h = x.copy()
        for _ in range(6):  # BBB's mixing rounds
            h ^= h >> np.uint32(15)
            h *= np.uint32(0x2C1B3C6D)
            h ^= h >> np.uint32(12)
            h *= np.uint32(0x297A2D39)
        acc = np.where(hit, acc + h,
                       np.where(active, acc * np.uint32(33) + (x & np.uint32(0xFF)), acc))
        active &= ~hit & (it < limit)
    return {"found_at": found, "checksum": acc ^ x}


WORKLOAD = Workload(
    name="earlyexit",
    description="do-while with data-dependent break: early reconvergence example (ElTantawy et al. 2014)",
    kernel="earlyexit",
    make=make,
    sizes=tuple(SIZES),
    reference=reference,
    features=("loop with two exits", "32-bit integer mixing"),
)
