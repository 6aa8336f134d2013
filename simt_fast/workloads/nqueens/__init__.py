"""N-Queens backtracking (Jin 2012 §5.3, NQU; N = 10 by default as in the thesis).

The generator enumerates every legal placement of the first ``prefix_rows`` rows (column per
row) and encodes each as the kernel's three attack bitmasks.  The reference counts completions
of each prefix with a plain recursive solver over column lists and explicit diagonal tests
(no bitmasks), and must agree exactly; known totals (92 for N=8, 724 for N=10) are asserted by
the tests as a golden check.
"""

from __future__ import annotations

import numpy as np

from simt_fast.workloads import LaunchSpec, Workload, fill

SIZES = {"tiny": (8, 3, 64), "default": (10, 3, 64), "thesis": (10, 3, 64)}  # N, prefix rows, block (multiple of 32)


def safe(cols: list, c: int) -> bool:
    r = len(cols)
    return all(c != pc and abs(c - pc) != r - pr for pr, pc in enumerate(cols))


def prefixes(n: int, rows: int) -> list:
    """All legal placements of the first ``rows`` queens, in lexicographic order."""
    out = [[]]
    for _ in range(rows):
        out = [p + [c] for p in out for c in range(n) if safe(p, c)]
    return out


def encode(prefix: list, n: int) -> tuple:
    """(columns, left-diagonal, right-diagonal) attack masks for the row after the prefix."""
    cols = left = right = 0
    for c in prefix:
        bit = 1 << c
        cols |= bit
        left = ((left | bit) << 1) & ((1 << n) - 1)
        right = (right | bit) >> 1
    return cols, left, right


def completions(prefix: list, n: int) -> int:
    if len(prefix) == n:
        return 1
    return sum(completions(prefix + [c], n) for c in range(n) if safe(prefix, c))


def make(size: str, rng: np.random.Generator) -> LaunchSpec:
    n, rows, block = SIZES[size]
    pre = prefixes(n, rows)
    order = rng.permutation(len(pre))  # the seed only shuffles which thread gets which prefix
    pre = [pre[i] for i in order]
    masks = np.array([encode(p, n) for p in pre], np.uint32)
    k = len(pre)
    args = [masks.ravel(), np.int32(k), np.int32(n), np.int32(rows), fill(k, np.int32, -1), np.zeros(1, np.uint64)]
    names = ("prefixes", "n_prefixes", "n", "prefix_rows", "solutions", "total")
    return LaunchSpec((k + block - 1) // block, block, args, outputs=(4, 5), arg_names=names,
                      meta={"prefixes": pre})


def reference(spec: LaunchSpec) -> dict:
    n = int(spec.arg("n"))
    sol = np.array([completions(list(p), n) for p in spec.meta["prefixes"]], np.int32)
    return {"solutions": sol, "total": np.array([sol.sum()], np.uint64)}


WORKLOAD = Workload(
    name="nqueens",
    description="N-Queens backtracking with an explicit local-memory stack (Jin 2012 §5.3 NQU)",
    kernel="nqueens",
    make=make,
    sizes=tuple(SIZES),
    reference=reference,
    features=("local arrays", "warp shuffle", "64-bit atomics", "deep irregular divergence"),
)
