"""The README's example kernels (data/cuda/examples/divergent.cu) and their numpy references."""

from pathlib import Path

import numpy as np

DIVERGENT_PTX = Path(__file__).resolve().parents[1] / "data" / "ptx" / "examples" / "divergent.ptx"


def collatz_steps(x: np.ndarray) -> np.ndarray:
    """Steps to reach 1 from each input (x -> 3x + 1 when odd, x / 2 when even): `collatz`'s `steps`."""
    out = np.zeros(len(x), np.uint32)
    for i, v in enumerate(x.tolist()):
        while v > 1:
            v = 3 * v + 1 if v & 1 else v >> 1
            out[i] += 1
    return out


def collatz_hist(steps: np.ndarray, bins: int) -> np.ndarray:
    """`collatz`'s atomic histogram: hist[min(steps / 8, bins - 1)] counts each thread."""
    return np.bincount(np.minimum(steps // 8, bins - 1), minlength=bins).astype(np.uint32)
