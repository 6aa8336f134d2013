"""SRAD speckle reduction with Rodinia srad_v1's kernels and launches (Che et al. 2009; Wu et al. 2012).

The input is a synthetic ultrasound-like image: a smooth bright disc on a dark background under
multiplicative (Rayleigh) speckle, values 0..255, column-major.  The host program (``program``)
runs extract, then per iteration the reduce launches, the coefficient kernel and the update, then
compress; the trace is ``srad_coeff`` of the first iteration (launch index after extract and the
reduce launches), whose inputs are the extracted image and the speckle scale q0^2 of its sums.

The reference is the same algorithm in float32 numpy, pixel arrays at once; the kernel's fused
multiply-adds and summation order differ by a few ulp.
"""

from __future__ import annotations

import numpy as np

from simt_fast.workloads import LaunchSpec, Workload, fill

BLOCK = 512
LAMBDA = 0.5
SIZES = {"tiny": (32, 32, 2), "default": (256, 256, 2)}  # rows, cols, iterations of the host program
NAMES = ("image", "i_n", "i_s", "j_w", "j_e", "nr", "ne", "q0sqr", "d_n", "d_s", "d_w", "d_e", "coeff")


def inputs(size: str, rng: np.random.Generator) -> np.ndarray:
    """A speckled disc, Nr x Nc float32, stored column-major (returned as its transpose's ravel)."""
    nr, nc, _ = SIZES[size]
    y, x = np.mgrid[0:nr, 0:nc]
    clean = 40.0 + 120.0 * (np.hypot(y - nr / 2, x - nc / 2) < min(nr, nc) / 3)
    speckled = np.clip(clean * rng.rayleigh(0.8, (nr, nc)), 1.0, 255.0)
    return speckled.astype(np.float32).T.ravel()  # column-major


def neighbours(nr: int, nc: int):
    """iN, iS, jW, jE: the row above/below and column left/right, the pixel itself at the edge."""
    rows, cols = np.arange(nr, dtype=np.int32), np.arange(nc, dtype=np.int32)
    return (np.maximum(rows - 1, 0), np.minimum(rows + 1, nr - 1), np.maximum(cols - 1, 0),
            np.minimum(cols + 1, nc - 1))


def q0_squared(total: float, total_sq: float, ne: int) -> np.float32:
    mean = total / ne
    return np.float32((total_sq / ne - mean * mean) / (mean * mean))


def coefficients(j: np.ndarray, nr: int, q0sqr) -> dict:
    """The srad_coeff outputs for image ``j`` (column-major, nr rows)."""
    img = j.reshape(-1, nr)  # [col][row]
    jc = img
    dn = np.concatenate([img[:, :1], img[:, :-1]], axis=1) - jc
    ds = np.concatenate([img[:, 1:], img[:, -1:]], axis=1) - jc
    dw = np.concatenate([img[:1], img[:-1]], axis=0) - jc
    de = np.concatenate([img[1:], img[-1:]], axis=0) - jc
    f = np.float32
    g2 = (dn * dn + ds * ds + dw * dw + de * de) / (jc * jc)
    lap = (dn + ds + dw + de) / jc
    num = f(0.5) * g2 - f(1.0 / 16.0) * (lap * lap)
    den = f(1.0) + f(0.25) * lap
    qsqr = num / (den * den)
    den = (qsqr - f(q0sqr)) / (f(q0sqr) * (f(1.0) + f(q0sqr)))
    c = np.clip(f(1.0) / (f(1.0) + den), f(0.0), f(1.0))
    return {"d_n": dn.ravel(), "d_s": ds.ravel(), "d_w": dw.ravel(), "d_e": de.ravel(), "coeff": c.ravel()}


def update(j: np.ndarray, nr: int, k: dict) -> np.ndarray:
    c = k["coeff"].reshape(-1, nr)
    c_south = np.concatenate([c[:, 1:], c[:, -1:]], axis=1).ravel()
    c_east = np.concatenate([c[1:], c[-1:]], axis=0).ravel()
    c = c.ravel()
    div = c * k["d_n"] + c_south * k["d_s"] + c * k["d_w"] + c_east * k["d_e"]
    return j + np.float32(0.25 * LAMBDA) * div


def srad(image: np.ndarray, nr: int, iterations: int) -> np.ndarray:
    """The whole program in numpy: extract, iterate, compress."""
    j = np.exp(image / np.float32(255.0)).astype(np.float32)
    for _ in range(iterations):
        j = update(j, nr, coefficients(j, nr, q0_squared(float(j.sum(dtype=np.float64)),
                                                         float((j.astype(np.float64) ** 2).sum()), j.size)))
    return (np.log(j) * np.float32(255.0)).astype(np.float32)


def coeff_args(j, nr, q0sqr, outs) -> list:
    return [j, *neighbours(nr, j.size // nr), np.int32(nr), np.int32(j.size), np.float32(q0sqr), *outs]


def make(size: str, rng: np.random.Generator) -> LaunchSpec:
    nr, nc, _ = SIZES[size]
    j = np.exp(inputs(size, rng) / np.float32(255.0)).astype(np.float32)
    q0 = q0_squared(float(j.sum(dtype=np.float64)), float((j.astype(np.float64) ** 2).sum()), j.size)
    outs = [fill(j.size, np.float32, np.nan) for _ in range(5)]
    grid = -(-j.size // BLOCK)
    n_reduce = len(reduce_grids(j.size))
    return LaunchSpec(grid, BLOCK, coeff_args(j, nr, q0, outs), outputs=(8, 9, 10, 11, 12), arg_names=NAMES,
                      meta={"launch": 1 + n_reduce})


def reference(spec: LaunchSpec) -> dict:
    return coefficients(spec.arg("image"), int(spec.arg("nr")), spec.arg("q0sqr"))


def reduce_grids(n: int) -> list:
    """CTAs of each srad_reduce launch: again on the partial sums until one CTA is left."""
    grids = [-(-n // BLOCK)]
    while grids[-1] > 1:
        grids.append(-(-grids[-1] // BLOCK))
    return grids


def program(size: str, rng: np.random.Generator, launch) -> None:
    nr, nc, iterations = SIZES[size]
    image = inputs(size, rng)
    ne, grid = image.size, -(-image.size // BLOCK)
    j = image.copy()
    outs = [np.zeros(ne, np.float32) for _ in range(5)]
    sums = [np.zeros(grid, np.float32) for _ in range(4)]
    launch("srad_extract", grid, BLOCK, [j, np.int32(ne)])
    for _ in range(iterations):
        values, squares, n, square_in = j, j, ne, 1
        for k, g in enumerate(reduce_grids(ne)):
            out_sum, out_sq = sums[2 * (k % 2)], sums[2 * (k % 2) + 1]
            launch("srad_reduce", g, BLOCK, [values, squares, np.int32(n), np.int32(square_in), out_sum, out_sq])
            values, squares, n, square_in = out_sum, out_sq, g, 0
        q0 = q0_squared(float(values[0]), float(squares[0]), ne)
        launch("srad_coeff", grid, BLOCK, coeff_args(j, nr, q0, outs))
        launch("srad_update", grid, BLOCK, [j, *neighbours(nr, nc)[1::2], np.int32(nr), np.int32(ne),
                                            np.float32(LAMBDA), *outs])
    launch("srad_compress", grid, BLOCK, [j, np.int32(ne)])
    np.testing.assert_allclose(j, srad(image, nr, iterations), rtol=1e-4, atol=1e-3, err_msg="srad: final image")


WORKLOAD = Workload(
    name="srad",
    description="SRAD diffusion coefficient per pixel, neighbour index arrays, clamp; extract/reduce/coeff/update/compress launches (Rodinia srad_v1, Che et al. 2009; Wu et al. 2012)",
    kernel="srad_coeff",
    make=make,
    sizes=tuple(SIZES),
    reference=reference,
    program=program,
    tolerance={k: (1e-5, 1e-6) for k in ("d_n", "d_s", "d_w", "d_e", "coeff")},
    features=("float32 division", "index-array neighbours", "clamp", "multi-kernel host loop"),
)
