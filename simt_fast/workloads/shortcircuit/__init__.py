"""Short-circuit compound condition (Wu et al. 2012 Fig. 3): unstructured control flow from ``&&``/``||``.

Operands are drawn so that each of the four conditions is true about half the time, so warps
see every path through the short-circuit CFG.  The reference evaluates the condition with
numpy boolean algebra (no short circuit needed: the operands have no side effects).
"""

from __future__ import annotations

import numpy as np

from simt_fast.workloads import LaunchSpec, Workload, fill

SIZES = {"tiny": (4096, 4, 256), "default": (1 << 20, 8, 256)}  # elements, per thread, block
TABLE = 1024


def make(size: str, rng: np.random.Generator) -> LaunchSpec:
    n, per_thread, block = SIZES[size]
    a = rng.integers(-1000, 1000, n, dtype=np.int32)
    c = rng.integers(-1000, 1000, n, dtype=np.int32)
    table = rng.integers(-100, 100, TABLE, dtype=np.int32)
    n_threads = (n + per_thread - 1) // per_thread
    grid = (n_threads + block - 1) // block
    args = [a, c, table, np.int32(TABLE - 1), np.int32(n), np.int32(per_thread), fill(n, np.int32, -12345678)]
    names = ("a", "c", "table", "table_mask", "n", "per_thread", "out")
    return LaunchSpec(grid, block, args, outputs=(6,), arg_names=names)


def reference(spec: LaunchSpec) -> dict:
    a, c, table = spec.arg("a"), spec.arg("c"), spec.arg("table")
    mask = int(spec.arg("table_mask"))
    cond = ((a > 0) & (table[a & mask] > 0)) | ((c > 0) & (table[c & mask] < 0))
    with np.errstate(over="ignore"):
        taken = (a * np.int32(31) + c) ^ (a >> 3)
        other = a - np.int32(2) * c
    return {"out": np.where(cond, taken, other).astype(np.int32)}


WORKLOAD = Workload(
    name="shortcircuit",
    description="(a && b) || (c && d) short-circuit branch: unstructured CFG (Wu et al. 2012 Fig. 3)",
    kernel="shortcircuit",
    make=make,
    sizes=tuple(SIZES),
    reference=reference,
    features=("unstructured control flow", "dependent loads in conditions"),
)
