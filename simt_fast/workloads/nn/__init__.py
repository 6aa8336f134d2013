"""A CNN layer launched as one-thread blocks (Jin 2012 §5.3, NN: "blocks of only one thread").

Reference: the same sparse 5x5/stride-2 convolution in float64 over the float32 inputs (the
kernel accumulates in float32 with fma, so sums of ~150 products of values in [-1, 1] agree to
~1e-5; the tolerance is 2e-4 absolute on outputs in [-1.72, 1.72]).
"""

from __future__ import annotations

import re

import numpy as np

from simt_fast.workloads import LaunchSpec, Workload, fill

IN_MAPS, OUT_MAPS, IN_W, OUT_W, KW, STRIDE = 6, 16, 13, 5, 5, 2
SAMPLES = {"tiny": 1, "default": 28, "thesis": 28}  # the thesis tests 28 MNIST digits in parallel


def connection_table() -> np.ndarray:
    """LeNet-style sparse connections: 6 maps see 3 consecutive inputs, 6 see 4 consecutive,
    3 see 4 non-consecutive, and the last sees all six (the table in kernel.cu)."""
    t = np.zeros((OUT_MAPS, IN_MAPS), np.uint8)
    for o in range(OUT_MAPS):
        if o < 6:
            maps = [(o + k) % 6 for k in range(3)]
        elif o < 12:
            maps = [(o - 6 + k) % 6 for k in range(4)]
        elif o < 15:
            maps = [(o - 12 + k) % 6 for k in (0, 1, 3, 4)]
        else:
            maps = list(range(6))
        t[o, maps] = 1
    return t


def table_in_source(source_text: str) -> np.ndarray:
    """The connection table as written in kernel.cu (tests check it equals connection_table())."""
    body = source_text.split("connection[OUT_MAPS][IN_MAPS] =", 1)[1].split(";", 1)[0]
    return np.array([int(v) for v in re.findall(r"\d+", body)], np.uint8).reshape(OUT_MAPS, IN_MAPS)


def make(size: str, rng: np.random.Generator) -> LaunchSpec:
    n = SAMPLES[size]
    image = rng.uniform(-1.0, 1.0, (n, IN_MAPS, IN_W, IN_W)).astype(np.float32)
    weights = rng.uniform(-0.2, 0.2, (OUT_MAPS, IN_MAPS, KW, KW)).astype(np.float32)
    bias = rng.uniform(-0.1, 0.1, OUT_MAPS).astype(np.float32)
    args = [image, weights, bias, fill((n, OUT_MAPS, OUT_W, OUT_W), np.float32, np.nan)]
    grid = (OUT_W * OUT_W, OUT_MAPS, n)
    return LaunchSpec(grid, (1, 1, 1), args, outputs=(3,), arg_names=("input", "weights", "bias", "output"))


def reference(spec: LaunchSpec) -> dict:
    x = spec.arg("input").astype(np.float64)
    w = spec.arg("weights").astype(np.float64) * connection_table()[:, :, None, None]
    n = x.shape[0]
    # patches[s, m, oy, ox, ky, kx] = x[s, m, 2*oy+ky, 2*ox+kx]
    oy = STRIDE * np.arange(OUT_W)[:, None] + np.arange(KW)[None, :]
    patches = x[:, :, oy[:, None, :, None], oy[None, :, None, :]]
    acc = np.einsum("smyxab,omab->soyx", patches, w) + spec.arg("bias").astype(np.float64)[None, :, None, None]
    out = 1.7159 * np.tanh(0.66666667 * acc)
    return {"output": out.astype(np.float32).reshape(n, OUT_MAPS, OUT_W, OUT_W)}


WORKLOAD = Workload(
    name="nn",
    description="LeNet-style sparse conv layer in one-thread CTAs (Jin 2012 §5.3 NN)",
    kernel="nn_conv_layer",
    make=make,
    sizes=tuple(SAMPLES),
    reference=reference,
    tolerance={"output": (0.0, 2e-4)},
    features=("one-thread blocks", "constant memory", "float32 fma"),
)
