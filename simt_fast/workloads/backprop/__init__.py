"""One backpropagation training step with Rodinia backprop's kernels and launches (Che et al. 2009).

Random inputs in [0, 1) with the bias unit 1, random weights in [-0.5, 0.5), one output unit with
target 0.1 (Rodinia's setup).  The host program launches ``backprop_forward`` (the traced
launch: n_in / 16 CTAs of 16 x 16 threads), finishes the forward pass and the error terms on the
host, launches ``backprop_adjust`` and updates the hidden-to-output weights on the host.

The forward reference multiplies and sums each CTA's 16 inputs pairwise in the kernel's tree
order, so the partial sums agree exactly; the whole step is checked with a tolerance (the
adjustment's multiply-adds are fused on the GPU).
"""

from __future__ import annotations

import numpy as np

from simt_fast.workloads import LaunchSpec, Workload, fill

HEIGHT = HIDDEN = 16
ETA = MOMENTUM = np.float32(0.3)
TARGET = np.float32(0.1)
SIZES = {"tiny": 128, "default": 8192}  # input units
NAMES = ("input", "weights", "partial_sums")


def inputs(size: str, rng: np.random.Generator):
    n = SIZES[size]
    x = rng.random(n + 1, dtype=np.float32)
    x[0] = 1.0
    w1 = (rng.random((n + 1, HIDDEN + 1), dtype=np.float32) - np.float32(0.5))
    w2 = (rng.random(HIDDEN + 1, dtype=np.float32) - np.float32(0.5))
    return x, w1, w2


def partial_sums(x: np.ndarray, w1: np.ndarray) -> np.ndarray:
    """Per CTA of 16 input units, the sum of weight * input of each hidden unit, pairwise."""
    n = x.size - 1
    prod = (w1[1:, 1:] * x[1:, None]).reshape(n // HEIGHT, HEIGHT, HIDDEN)
    while prod.shape[1] > 1:
        prod = prod[:, 0::2] + prod[:, 1::2]
    return prod[:, 0, :]


def squash(v):
    return (1.0 / (1.0 + np.exp(-v))).astype(np.float32)


def host_step(x, w1, w2, partial):
    """Forward pass and error terms on the host: (hidden deltas with the bias slot, new w2)."""
    hidden = np.ones(HIDDEN + 1, np.float32)
    hidden[1:] = squash(partial.sum(axis=0, dtype=np.float32) + w1[0, 1:])
    out = squash(np.float32(hidden @ w2))
    out_delta = out * (1 - out) * (TARGET - out)
    hid_delta = np.zeros(HIDDEN + 1, np.float32)
    hid_delta[1:] = hidden[1:] * (1 - hidden[1:]) * (w2[1:] * out_delta)
    return hid_delta.astype(np.float32), (w2 + ETA * out_delta * hidden).astype(np.float32)


def make(size: str, rng: np.random.Generator) -> LaunchSpec:
    x, w1, _ = inputs(size, rng)
    n = x.size - 1
    args = [x, w1.ravel(), fill(n // HEIGHT * HIDDEN, np.float32, np.nan)]
    return LaunchSpec((1, n // HEIGHT), (HIDDEN, HEIGHT), args, outputs=(2,), arg_names=NAMES, meta={"launch": 0})


def reference(spec: LaunchSpec) -> dict:
    x = spec.arg("input")
    return {"partial_sums": partial_sums(x, spec.arg("weights").reshape(x.size, HIDDEN + 1)).ravel()}


def program(size: str, rng: np.random.Generator, launch) -> None:
    x, w1, w2 = inputs(size, rng)
    n = x.size - 1
    grid, block = (1, n // HEIGHT), (HIDDEN, HEIGHT)
    weights, change = w1.copy(), np.zeros_like(w1)
    partial = np.zeros((n // HEIGHT, HIDDEN), np.float32)
    launch("backprop_forward", grid, block, [x, weights.ravel(), partial.ravel()])
    delta, _ = host_step(x, weights, w2, partial)
    launch("backprop_adjust", grid, block, [delta, x, weights.ravel(), change.ravel()])
    want_delta, _ = host_step(x, w1, w2, partial_sums(x, w1))
    want_change = ETA * want_delta[None, 1:] * x[:, None]
    np.testing.assert_allclose(change[:, 1:], want_change, rtol=1e-5, atol=1e-9, err_msg="backprop: weight changes")
    np.testing.assert_allclose(weights[:, 1:], w1[:, 1:] + want_change, rtol=1e-5, atol=1e-7,
                               err_msg="backprop: adjusted weights")


WORKLOAD = Workload(
    name="backprop",
    description="Backpropagation layer forward: 16x16 CTAs, shared-memory products, ty % step tree reduction (Rodinia backprop, Che et al. 2009)",
    kernel="backprop_forward",
    make=make,
    sizes=tuple(SIZES),
    reference=reference,
    program=program,
    features=("shared memory + __syncthreads", "2-D CTAs", "tree reduction", "two kernels + host steps"),
)
