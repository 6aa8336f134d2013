"""Early return inlined into a loop (Wu et al. 2012 Fig. 4): a loop with two exits after inlining.

Rows hold small values (0..39) so a key is found at a geometric-like position or not at all
(row lengths vary per thread); the reference finds first occurrences with numpy argmax over a
match matrix and must match exactly.
"""

from __future__ import annotations

import numpy as np

from simt_fast.workloads import LaunchSpec, Workload, fill

SIZES = {"tiny": (512, 48, 8, 128), "default": (16384, 48, 16, 128)}  # threads, width, keys, block
VALUES = 40


def make(size: str, rng: np.random.Generator) -> LaunchSpec:
    n, width, n_keys, block = SIZES[size]
    rows = rng.integers(0, VALUES, (n, width), dtype=np.int32)
    row_len = rng.integers(0, width + 1, n, dtype=np.int32)
    keys = rng.integers(0, VALUES, (n, n_keys), dtype=np.int32)
    args = [rows.ravel(), row_len, keys.ravel(), np.int32(n), np.int32(width), np.int32(n_keys),
            fill(n * n_keys, np.int32, -77), fill(n, np.int32, -77)]
    names = ("rows", "row_len", "keys", "n", "width", "n_keys", "position", "score")
    return LaunchSpec((n + block - 1) // block, block, args, outputs=(6, 7), arg_names=names)


def reference(spec: LaunchSpec) -> dict:
    n, width, n_keys = (int(spec.arg(k)) for k in ("n", "width", "n_keys"))
    rows = spec.arg("rows").reshape(n, width)
    keys = spec.arg("keys").reshape(n, n_keys)
    in_row = np.arange(width)[None, :] < spec.arg("row_len")[:, None]
    match = (rows[:, None, :] == keys[:, :, None]) & in_row[:, None, :]  # [thread, key, column]
    pos = np.where(match.any(axis=2), match.argmax(axis=2), -1).astype(np.int32)
    score = np.where(pos >= 0, pos + 1, -3).sum(axis=1).astype(np.int32)
    return {"position": pos.ravel(), "score": score}


WORKLOAD = Workload(
    name="inlinedreturn",
    description="device function's early return inlined into a loop: two-exit loop (Wu et al. 2012 Fig. 4)",
    kernel="inlinedreturn",
    make=make,
    sizes=tuple(SIZES),
    reference=reference,
    features=("unstructured loop exit", "nested variable-trip loops"),
)
