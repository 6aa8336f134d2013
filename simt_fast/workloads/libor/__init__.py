"""LIBOR market model Monte Carlo with a swaption portfolio (Jin 2012 §5.3, LIB), float64.

The generator draws standard normals for every (step, path) (the original uses Sobol
quasi-random numbers; the control flow is the same).  The reference evolves all paths at once in
float64 numpy with the same recurrences; nvcc contracts products into fma and CUDA's exp is
within 1 ulp, so values agree to ~1e-13 relative; the tolerance is rtol 1e-9.
"""

from __future__ import annotations

import numpy as np

from simt_fast.workloads import LaunchSpec, Workload, fill

# paths, forward rates, time steps, block (the thesis: 4096 paths, 80 rates, 40 steps; reduced
# to keep the default launch emulator-friendly)
SIZES = {"tiny": (128, 16, 8, 64), "default": (2048, 32, 16, 128), "thesis": (4096, 80, 40, 128)}
N_OPTIONS, DELTA = 15, 0.25


def make(size: str, rng: np.random.Generator) -> LaunchSpec:
    n_paths, n_rates, n_steps, block = SIZES[size]
    normals = rng.standard_normal((n_steps, n_paths))
    lam = np.full(n_rates, 0.2)
    l0 = np.full(n_rates, 0.051)
    maturities = rng.integers(1, n_rates - n_steps + 1, N_OPTIONS).astype(np.int32)
    swaprates = rng.uniform(0.045, 0.056, N_OPTIONS)
    args = [normals.ravel(), lam, l0, maturities, swaprates, np.int32(n_paths), np.int32(n_rates),
            np.int32(n_steps), np.int32(N_OPTIONS), np.float64(DELTA), fill(n_paths, np.float64, np.nan)]
    names = ("normals", "lambda", "l0", "maturities", "swaprates", "n_paths", "n_rates", "n_steps",
             "n_options", "delta", "value")
    return LaunchSpec((n_paths + block - 1) // block, block, args, outputs=(10,), arg_names=names)


def reference(spec: LaunchSpec) -> dict:
    n_paths, n_rates, n_steps = (int(spec.arg(k)) for k in ("n_paths", "n_rates", "n_steps"))
    delta = float(spec.arg("delta"))
    z = spec.arg("normals").reshape(n_steps, n_paths)
    lam = spec.arg("lambda")
    L = np.tile(spec.arg("l0")[:, None], (1, n_paths))  # L[rate, path]
    for n in range(n_steps):
        sqez = np.sqrt(delta) * z[n]
        v = np.zeros(n_paths)
        for i in range(n + 1, n_rates):
            con1 = delta * lam[i - n - 1]
            v = v + con1 * L[i] / (1.0 + delta * L[i])
            L[i] = L[i] * np.exp(con1 * v + lam[i - n - 1] * (sqez - 0.5 * con1))
    B = np.cumprod(1.0 / (1.0 + delta * L[n_steps:]), axis=0)
    S = delta * np.cumsum(B, axis=0)
    m = spec.arg("maturities") - 1
    swap = B[m] + spec.arg("swaprates")[:, None] * S[m] - 1.0  # [option, path]
    payoff = np.where(swap < 0, -100.0 * swap, 0.0).sum(axis=0)
    payoff = payoff / np.prod(1.0 + delta * L[:n_steps], axis=0)
    return {"value": payoff}


WORKLOAD = Workload(
    name="libor",
    description="LIBOR market model Monte Carlo paths + swaption payoffs, float64 (Jin 2012 §5.3 LIB)",
    kernel="libor_path",
    make=make,
    sizes=tuple(SIZES),
    reference=reference,
    tolerance={"value": (1e-9, 1e-12)},
    features=("float64", "local arrays", "triangular loop nest", "payoff branch"),
)
