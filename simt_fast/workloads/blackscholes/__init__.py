"""Black-Scholes option pricing (Jin 2012 §5.3, BS): the low-divergence baseline.

Reference: the closed-form Black-Scholes price with the same Abramowitz-Stegun CND polynomial,
in float32 like the kernel.  Tolerance: expf/logf/division in CUDA are within 2 ulp and nvcc
contracts a*b+c into fma, so prices (spot 5..30) agree to ~1e-5 absolute; we allow 3e-4.
"""

from __future__ import annotations

import numpy as np

from simt_fast.workloads import LaunchSpec, Workload, fill

SIZES = {"tiny": (2, 128, 600), "default": (48, 128, 40000)}  # grid, block, options
RISKFREE, VOLATILITY = 0.02, 0.30


def make(size: str, rng: np.random.Generator) -> LaunchSpec:
    grid, block, n = SIZES[size]
    spot = rng.uniform(5.0, 30.0, n).astype(np.float32)
    strike = rng.uniform(1.0, 100.0, n).astype(np.float32)
    years = rng.uniform(0.25, 10.0, n).astype(np.float32)
    args = [fill(n, np.float32, np.nan), fill(n, np.float32, np.nan), spot, strike, years,
            np.float32(RISKFREE), np.float32(VOLATILITY), np.int32(n)]
    names = ("call", "put", "spot", "strike", "years", "riskfree", "volatility", "n_options")
    return LaunchSpec(grid, block, args, outputs=(0, 1), arg_names=names)


def cnd(d: np.ndarray) -> np.ndarray:
    """Abramowitz-Stegun 26.2.17 approximation of the standard normal CDF, float32."""
    f = np.float32
    a = [f(0.31938153), f(-0.356563782), f(1.781477937), f(-1.821255978), f(1.330274429)]
    k = f(1) / (f(1) + f(0.2316419) * np.abs(d))
    poly = k * (a[0] + k * (a[1] + k * (a[2] + k * (a[3] + k * a[4]))))
    c = f(0.39894228040143267794) * np.exp(f(-0.5) * d * d) * poly
    return np.where(d > 0, f(1) - c, c).astype(np.float32)


def reference(spec: LaunchSpec) -> dict:
    s, x, t = spec.arg("spot"), spec.arg("strike"), spec.arg("years")
    r, v = spec.arg("riskfree"), spec.arg("volatility")
    sqrt_t = np.sqrt(t)
    d1 = (np.log(s / x) + (r + np.float32(0.5) * v * v) * t) / (v * sqrt_t)
    d2 = d1 - v * sqrt_t
    c1, c2 = cnd(d1), cnd(d2)
    disc = np.exp(-r * t)
    call = s * c1 - x * disc * c2
    put = x * disc * (np.float32(1) - c2) - s * (np.float32(1) - c1)
    return {"call": call, "put": put}


WORKLOAD = Workload(
    name="blackscholes",
    description="Black-Scholes option pricing, grid-stride loop, CND sign branch (Jin 2012 §5.3 BS)",
    kernel="blackscholes",
    make=make,
    sizes=tuple(SIZES),
    reference=reference,
    tolerance={"call": (1e-4, 3e-4), "put": (1e-4, 3e-4)},
    features=("float32", "SFU (exp/log/sqrt)", "grid-stride loop"),
)
