"""StoreGPU's sliding-window hashing (the STO benchmark of the hybrid-warp-size thesis, §5.3):
an MD5 digest of every window of a storage buffer.

StoreGPU (Al-Kiswany et al., HPDC 2008) accelerates the hashing behind content-based chunking: a
window slides over the data and every position is hashed; the host then picks chunk boundaries
where a digest matches a pattern. The kernel does the hashing part: window ``w`` covers bytes
``[w * STEP, w * STEP + WINDOW)``; each thread digests ``PER_THREAD`` consecutive windows with
MD5 (RFC 1321). Every digest runs the same 64 rounds, so the kernel's only data-dependent branch is
the end of the buffer, which is why the thesis lists STO among the benchmarks without divergence.

The reference hashes each window with :mod:`hashlib` (an implementation independent of the
kernel's) and reads the 16-byte digest as four little-endian 32-bit words, the kernel's layout.
"""

from __future__ import annotations

import hashlib
import math
import re

import numpy as np

from simt_fast.workloads import LaunchSpec, Workload, fill

WINDOW, PER_THREAD = 48, 4
# bytes (the thesis' input is 192 KB), window step in bytes, threads per CTA
SIZES = {"tiny": (16 * 1024, 16, 128), "default": (192 * 1024, 8, 128), "thesis": (192 * 1024, 8, 128)}


def md5_constants() -> np.ndarray:
    """RFC 1321's table: K[i] = floor(|sin(i + 1)| * 2**32) (kernel.cu holds the same numbers)."""
    return np.array([int(abs(math.sin(i + 1)) * 2 ** 32) & 0xFFFFFFFF for i in range(64)], dtype=np.uint64)


def table_in_source(source_text: str) -> np.ndarray:
    body = source_text.split("const unsigned int K[64] = {", 1)[1].split("}", 1)[0]
    return np.array([int(v, 16) for v in re.findall(r"0x([0-9a-fA-F]+)u", body)], dtype=np.uint64)


def n_windows(n_bytes: int, step: int) -> int:
    return (n_bytes - WINDOW) // step + 1


def make(size: str, rng: np.random.Generator) -> LaunchSpec:
    n, step, block = SIZES[size]
    buf = rng.integers(0, 256, n, dtype=np.uint8)  # file contents: hashing does not branch on them
    windows = n_windows(n, step)
    n_threads = -(-windows // PER_THREAD)
    args = [buf.view(np.uint32), np.int32(windows), np.int32(step // 4), np.int32(PER_THREAD),
            fill(4 * windows, np.uint32, 0xDEADBEEF)]
    names = ("words", "n_windows", "step_words", "per_thread", "digest")
    return LaunchSpec(-(-n_threads // block), block, args, outputs=(4,), arg_names=names,
                      meta={"step": step})


def reference(spec: LaunchSpec) -> dict:
    data = spec.arg("words").view(np.uint8).tobytes()
    step = 4 * int(spec.arg("step_words"))
    digests = [hashlib.md5(data[w * step: w * step + WINDOW]).digest() for w in range(int(spec.arg("n_windows")))]
    return {"digest": np.frombuffer(b"".join(digests), dtype="<u4").astype(np.uint32)}


WORKLOAD = Workload(
    name="storegpu",
    description="StoreGPU sliding-window hashing: MD5 of every window of a buffer (Jin 2012 §5.3 STO)",
    kernel="storegpu_md5",
    make=make,
    sizes=tuple(SIZES),
    reference=reference,
    features=("32-bit integer math", "fully unrolled MD5 rounds", "no data-dependent branches"),
)
