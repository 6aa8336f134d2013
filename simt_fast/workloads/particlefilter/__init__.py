"""Particle-filter resampling with Rodinia particlefilter's (naive) kernel and host loop (Che et al. 2009).

The video: a bright disc (intensity 228) moving by (+1, -2) pixels per frame over a dark
background (100) with Gaussian noise, as Rodinia's generator makes it.  The host program tracks
it over FRAMES frames: per frame it moves the particles (random walk around the same drift),
weighs them by the likelihood of the disc's pixels under each particle, normalises, builds the
CDF and the systematic positions u, and launches ``particlefilter_resample``; the trace is the
first frame's launch.  The reference resamples with ``searchsorted`` (the first CDF entry >= u),
which matches the kernel's linear search exactly (comparisons and copies only).
"""

from __future__ import annotations

import numpy as np

from simt_fast.workloads import LaunchSpec, Workload, fill

BLOCK = 128
SIZES = {"tiny": (384, 64), "default": (1024, 128)}  # particles, video frame edge
FRAMES = 3
RADIUS = 5
OBSERVATION_SIGMA = 64.0
NAMES = ("x", "y", "cdf", "u", "x_new", "y_new", "n")


def video(size: str, rng: np.random.Generator) -> np.ndarray:
    _, edge = SIZES[size]
    frames = np.full((FRAMES + 1, edge, edge), 100.0)
    yy, xx = np.mgrid[0:edge, 0:edge]
    for f in range(FRAMES + 1):
        cx, cy = edge / 2 + f, edge / 2 - 2 * f
        frames[f][(xx - cx) ** 2 + (yy - cy) ** 2 <= RADIUS ** 2] = 228.0
    return frames + rng.normal(0, 5, frames.shape)


def disc_offsets() -> np.ndarray:
    d = np.arange(-RADIUS, RADIUS + 1)
    dy, dx = np.meshgrid(d, d, indexing="ij")
    keep = dx ** 2 + dy ** 2 <= RADIUS ** 2
    return np.stack([dx[keep], dy[keep]], axis=1)


def weigh(frame: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Normalised weights: exp of the disc pixels' log-likelihood under each particle."""
    off = disc_offsets()
    edge = frame.shape[0]
    px = np.clip(np.rint(x[:, None] + off[None, :, 0]).astype(int), 0, edge - 1)
    py = np.clip(np.rint(y[:, None] + off[None, :, 1]).astype(int), 0, edge - 1)
    pix = frame[py, px]
    # mean log-likelihood ratio of "disc" against "background" per pixel under an observation noise of
    # OBSERVATION_SIGMA (broader than the video's, so that the weights do not collapse onto a few particles)
    loglik = ((pix - 100.0) ** 2 - (pix - 228.0) ** 2).mean(axis=1) / (2 * OBSERVATION_SIGMA ** 2)
    w = np.exp(loglik - loglik.max())
    return w / w.sum()


def frame_inputs(frames, f: int, x, y, rng):
    """One frame's host work before the kernel: move, weigh, CDF, u."""
    n = x.size
    x = x + 1.0 + 5.0 * rng.standard_normal(n)
    y = y - 2.0 + 2.0 * rng.standard_normal(n)
    cdf = np.cumsum(weigh(frames[f], x, y))
    u = rng.random() / n + np.arange(n) / n
    return x, y, cdf, u


def resample(x, y, cdf, u):
    index = np.searchsorted(cdf, u, side="left")
    index[index >= len(cdf)] = len(cdf) - 1
    return x[index], y[index]


def start(size: str, rng: np.random.Generator):
    frames = video(size, rng)
    n, edge = SIZES[size]
    return frames, np.full(n, edge / 2.0), np.full(n, edge / 2.0)


def make(size: str, rng: np.random.Generator) -> LaunchSpec:
    frames, x, y = start(size, rng)
    x, y, cdf, u = frame_inputs(frames, 1, x, y, rng)
    n = x.size
    args = [x, y, cdf, u, fill(n, np.float64, np.nan), fill(n, np.float64, np.nan), np.int32(n)]
    return LaunchSpec(-(-n // BLOCK), BLOCK, args, outputs=(4, 5), arg_names=NAMES, meta={"launch": 0})


def reference(spec: LaunchSpec) -> dict:
    xn, yn = resample(spec.arg("x"), spec.arg("y"), spec.arg("cdf"), spec.arg("u"))
    return {"x_new": xn, "y_new": yn}


def program(size: str, rng: np.random.Generator, launch) -> None:
    frames, x, y = start(size, rng)
    n = x.size
    for f in range(1, FRAMES + 1):
        x, y, cdf, u = frame_inputs(frames, f, x, y, rng)
        x_new, y_new = np.zeros(n), np.zeros(n)
        launch("particlefilter_resample", -(-n // BLOCK), BLOCK, [x, y, cdf, u, x_new, y_new, np.int32(n)])
        want_x, want_y = resample(x, y, cdf, u)
        np.testing.assert_array_equal(x_new, want_x, err_msg=f"particlefilter: frame {f} resampled x")
        np.testing.assert_array_equal(y_new, want_y, err_msg=f"particlefilter: frame {f} resampled y")
        x, y = x_new, y_new
    edge = SIZES[size][1]
    truth = np.array([edge / 2 + FRAMES, edge / 2 - 2 * FRAMES])
    estimate = np.array([x.mean(), y.mean()])
    assert np.abs(estimate - truth).max() < 3.0, f"particlefilter: tracked {estimate}, the disc is at {truth}"


WORKLOAD = Workload(
    name="particlefilter",
    description="Particle-filter systematic resampling: per-thread linear CDF search leaving at the match (Rodinia particlefilter naive, Che et al. 2009; Wu et al. 2012)",
    kernel="particlefilter_resample",
    make=make,
    sizes=tuple(SIZES),
    reference=reference,
    program=program,
    features=("float64", "loop with a break", "lanes leave one by one", "kernel + host loop over frames"),
)
