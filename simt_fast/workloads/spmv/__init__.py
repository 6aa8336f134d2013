"""CSR SpMV, one thread per row, on one rank's block of a row-distributed sparse matrix (HPCG-like).

The generator draws skewed row lengths (log-normal, clipped to 1..``MAX_ROW``: most rows short,
up to ``MAX_ROW`` long), a per-row share of halo columns (Beta distributed: interior rows have
none, boundary rows many), local columns around the diagonal plus a few far ones, and halo
columns numbered after the ``n_local`` owned ones.  As in HPCG, halo columns are renumbered in
place, so a row's local and halo entries are interleaved (here in random order).  ``halo_slot`` maps a halo column to its place in the receive
buffer ``x_halo`` (a random permutation: the buffer is ordered by sending rank).

The reference expands the matrix to COO, looks up every column's x value, and accumulates the
local and halo products row by row in float32 in CSR order (vectorised over rows), so the sums
are rounded exactly as the kernel rounds them.
"""

from __future__ import annotations

import numpy as np

from simt_fast.workloads import LaunchSpec, Workload, fill

SIZES = {"tiny": (1024, 512), "default": (32768, 8192)}  # (rows = local columns, halo columns)
MAX_ROW = 128
BLOCK = 128


def random_matrix(n_rows: int, n_halo: int, rng: np.random.Generator):
    """CSR (row_ptr, col, val) of an n_rows x (n_rows + n_halo) block, each row's columns distinct."""
    length = np.clip(np.rint(rng.lognormal(np.log(12.0), 0.8, n_rows)), 1, MAX_ROW).astype(np.int64)
    halo_share = np.where(rng.random(n_rows) < 0.4, 0.0, rng.beta(0.8, 1.6, n_rows))
    row = np.repeat(np.arange(n_rows), length)
    is_halo = rng.random(len(row)) < halo_share[row]
    near = np.clip(row + np.rint(rng.normal(0.0, 8.0, len(row))).astype(np.int64), 0, n_rows - 1)
    local = np.where(rng.random(len(row)) < 0.8, near, rng.integers(0, n_rows, len(row)))
    col = np.where(is_halo, n_rows + rng.integers(0, n_halo, len(row)), local)
    # drop repeated (row, col) pairs, then put each row's entries in random order
    keep = np.unique(row * (n_rows + n_halo) + col)
    row, col = keep // (n_rows + n_halo), keep % (n_rows + n_halo)
    order = np.lexsort((rng.random(len(row)), row))
    row, col = row[order], col[order]
    row_ptr = np.zeros(n_rows + 1, np.int32)
    np.cumsum(np.bincount(row, minlength=n_rows), out=row_ptr[1:])
    val = rng.uniform(-1.0, 1.0, len(col)).astype(np.float32)
    return row_ptr, col.astype(np.int32), val


def make(size: str, rng: np.random.Generator) -> LaunchSpec:
    n_rows, n_halo = SIZES[size]
    row_ptr, col, val = random_matrix(n_rows, n_halo, rng)
    x = rng.uniform(-1.0, 1.0, n_rows).astype(np.float32)
    x_halo = rng.uniform(-1.0, 1.0, n_halo).astype(np.float32)
    halo_slot = rng.permutation(n_halo).astype(np.int32)
    args = [row_ptr, col, val, x, halo_slot, x_halo, np.int32(n_rows), np.int32(n_rows), fill(n_rows, np.float32, np.nan)]
    names = ("row_ptr", "col", "val", "x", "halo_slot", "x_halo", "n_rows", "n_local", "y")
    return LaunchSpec((n_rows + BLOCK - 1) // BLOCK, BLOCK, args, outputs=(8,), arg_names=names)


def row_sums_in_order(row_ptr: np.ndarray, products: np.ndarray, take: np.ndarray) -> np.ndarray:
    """Per row, the float32 sum of products[e] over the row's entries with take[e], in CSR order."""
    n_rows = len(row_ptr) - 1
    lengths = np.diff(row_ptr)
    acc = np.zeros(n_rows, np.float32)
    for k in range(int(lengths.max(initial=0))):
        rows = np.flatnonzero(lengths > k)
        e = row_ptr[rows] + k
        sel = take[e]
        acc[rows[sel]] = acc[rows[sel]] + products[e[sel]]
    return acc


def reference(spec: LaunchSpec) -> dict:
    row_ptr, col, val = spec.arg("row_ptr"), spec.arg("col"), spec.arg("val")
    n_local = int(spec.arg("n_local"))
    x_all = np.concatenate([spec.arg("x"), np.empty(len(spec.arg("x_halo")), np.float32)])
    x_all[n_local + np.arange(len(spec.arg("halo_slot")))] = spec.arg("x_halo")[spec.arg("halo_slot")]
    products = val * x_all[col]
    is_local = col < n_local
    y = row_sums_in_order(row_ptr, products, is_local) + row_sums_in_order(row_ptr, products, ~is_local)
    return {"y": y.astype(np.float32)}


WORKLOAD = Workload(
    name="spmv",
    description="CSR SpMV, one thread per row of skewed length, local vs halo columns (ElTantawy et al. 2014 multi-path study)",
    kernel="spmv_csr",
    make=make,
    sizes=tuple(SIZES),
    reference=reference,
    tolerance={"y": (0.0, 0.0)},
    features=("float32 (rounded intrinsics)", "irregular loops", "indirect loads"),
)
