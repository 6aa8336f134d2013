"""Content-defined chunking + chunk digests over a buffer (seed 003 §5.3, STO: StoreGPU's
sliding-window hashing).

Each thread owns a fixed segment of the buffer.  A gear rolling hash (a 64-bit shift-and-add of
per-byte random values, so the hash at byte i depends only on the 64 bytes ending at i) slides
over the segment; a position whose hash has its top ``MASK_BITS`` bits clear, and whose chunk
is at least ``MIN_CHUNK`` bytes long, ends a chunk.  Each chunk is digested with FNV-1a and an
MD5-style add-rotate-xor finaliser; a thread reports its chunk count and the XOR of its digests.

The reference vectorises the same rules over threads with numpy uint64 arithmetic (which wraps
modulo 2**64 like the GPU), computing the gear hash of every position from its definition
(sum over the last 64 bytes) rather than by rolling.
"""

from __future__ import annotations

import re

import numpy as np

from simt_fast.workloads import LaunchSpec, Workload, fill

SIZES = {"tiny": (16 * 1024, 128), "default": (192 * 1024, 128), "thesis": (192 * 1024, 128)}  # bytes (thesis: 192 KB), block
SEGMENT, MIN_CHUNK, MASK_BITS, WINDOW = 256, 16, 5, 64
MASK = ((1 << MASK_BITS) - 1) << (64 - MASK_BITS)
FNV_OFFSET, FNV_PRIME = 0xCBF29CE484222325, 0x100000001B3
U64 = np.uint64


def splitmix64(i: int) -> int:
    z = (i * 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
    return z ^ (z >> 31)


def gear_table() -> np.ndarray:
    """The 256 per-byte gear values (kernel.cu holds the same numbers in constant memory)."""
    return np.array([splitmix64(i + 1) for i in range(256)], dtype=U64)


def table_in_source(source_text: str) -> np.ndarray:
    body = source_text.split("gear[256] = {", 1)[1].split("}", 1)[0]
    return np.array([int(v, 16) for v in re.findall(r"0x([0-9a-fA-F]+)", body)], dtype=U64)


def make(size: str, rng: np.random.Generator) -> LaunchSpec:
    n, block = SIZES[size]
    # Text-like data with long runs of one byte: runs make the hash repeat, which shifts
    # chunk boundaries and gives segments very different chunk counts.
    buf = rng.integers(32, 127, n, dtype=np.uint8)
    for start in rng.integers(0, n, n // 512):
        buf[start:start + int(rng.integers(64, 400))] = rng.integers(32, 127)
    n_threads = (n + SEGMENT - 1) // SEGMENT
    args = [buf, np.int32(n), np.int32(SEGMENT), np.int32(MIN_CHUNK), U64(MASK),
            np.zeros(n, np.uint8), fill(n_threads, np.int32, -1), fill(n_threads, U64, 0xDEADBEEF),
            np.zeros(1, np.int32)]
    names = ("buf", "n_bytes", "segment", "min_chunk", "mask", "boundary", "chunk_count", "digest", "total")
    return LaunchSpec((n_threads + block - 1) // block, block, args, outputs=(5, 6, 7, 8), arg_names=names)


def finalize(d: np.ndarray, length: np.ndarray) -> np.ndarray:
    """Four add-rotate-xor rounds (MD5-flavoured) over FNV state and chunk length."""
    x = d ^ (length.astype(U64) << U64(32))
    for _ in range(4):
        x ^= x >> U64(31)
        x *= U64(0x7FB5D329728EA185)
        x = (x << U64(27)) | (x >> U64(37))
        x += U64(0x9E3779B97F4A7C15)
    return x


def gear_hashes(buf: np.ndarray) -> np.ndarray:
    """h[i] = sum_k gear[buf[i-k]] << k for k < 64 (mod 2**64): the rolling hash by definition."""
    g = gear_table()[buf]
    h = np.zeros(len(buf), U64)
    for k in range(WINDOW):
        h[k:] += g[:len(buf) - k] << U64(k)
    return h


def reference(spec: LaunchSpec) -> dict:
    buf = spec.arg("buf")
    n, seg = int(spec.arg("n_bytes")), int(spec.arg("segment"))
    min_chunk, mask = int(spec.arg("min_chunk")), U64(spec.arg("mask"))
    n_threads = len(spec.arg("chunk_count"))
    h = gear_hashes(buf)
    with np.errstate(over="ignore"):
        pad = n_threads * seg - n
        hb = np.concatenate([h, np.zeros(pad, U64)]).reshape(n_threads, seg)
        bb = np.concatenate([buf, np.zeros(pad, np.uint8)]).reshape(n_threads, seg).astype(U64)
        valid = (np.arange(n_threads * seg) < n).reshape(n_threads, seg)
        d = np.full(n_threads, U64(FNV_OFFSET))
        length = np.zeros(n_threads, np.int64)
        acc = np.zeros(n_threads, U64)
        count = np.zeros(n_threads, np.int32)
        boundary = np.zeros((n_threads, seg), np.uint8)
        for i in range(seg):
            v = valid[:, i]
            d = np.where(v, (d ^ bb[:, i]) * U64(FNV_PRIME), d)
            length += v
            cut = v & (length >= min_chunk) & ((hb[:, i] & mask) == 0)
            acc = np.where(cut, acc ^ finalize(d, length), acc)
            count += cut
            boundary[:, i] = cut
            d = np.where(cut, U64(FNV_OFFSET), d)
            length = np.where(cut, 0, length)
        acc = np.where(length > 0, acc ^ finalize(d, length), acc)  # the segment's tail chunk
    return {"boundary": boundary.ravel()[:n], "chunk_count": count, "digest": acc,
            "total": np.array([count.sum()], np.int32)}


WORKLOAD = Workload(
    name="storegpu",
    description="Content-defined chunking (gear rolling hash) + chunk digests (seed 003 §5.3 STO)",
    kernel="storegpu_chunk",
    make=make,
    sizes=tuple(SIZES),
    reference=reference,
    features=("64-bit integer math", "constant memory table", "atomics", "data-dependent boundaries"),
)
