"""A loop with two entries (Wu et al. 2012 Fig. 2(d)): a scanner of alphanumeric words, irreducible.

Lines hold words that mix letter and digit runs ("ab12", "7seas", "x9y9z9", "2024") between
separators, NUL-padded or cut at the line width.  The reference finds the words and their runs
with regular expressions and must count exactly what the kernel counts.
"""

from __future__ import annotations

import random
import re

import numpy as np

from simt_fast.workloads import LaunchSpec, Workload, fill

SIZES = {"tiny": (512, 48, 128), "default": (16384, 48, 128)}  # lines, width, block
_WORD = re.compile(rb"[A-Za-z_0-9]+")
_LETTERS = re.compile(rb"[A-Za-z_]+")
_DIGITS = re.compile(rb"[0-9]+")


def scan_counts(line: bytes) -> list:
    """[words with a letter, all-digit numbers, letter runs, digit runs] up to the first NUL."""
    line = line.split(b"\0", 1)[0]
    words = _WORD.findall(line)
    return [sum(1 for w in words if _LETTERS.search(w)), sum(1 for w in words if not _LETTERS.search(w)),
            sum(len(_LETTERS.findall(w)) for w in words), sum(len(_DIGITS.findall(w)) for w in words)]


def random_line(r: random.Random, width: int) -> bytes:
    parts = []
    while sum(map(len, parts)) < width + 4:
        runs = []
        letter = r.random() < 0.5  # which of the loop's two entries this word takes
        for _ in range(r.choice((1, 1, 2, 3, 4))):
            alphabet = "abcxyz_Q" if letter else "0123456789"
            runs.append("".join(r.choice(alphabet) for _ in range(r.randint(1, 4))))
            letter = not letter
        parts.append("".join(runs) + r.choice((" ", " ", ", ", "-", ".", "  ")))
        if r.random() < 0.05:  # the line ends early: NUL padding follows
            break
    return "".join(parts).encode()[:width]


def make(size: str, rng: np.random.Generator) -> LaunchSpec:
    n, width, block = SIZES[size]
    r = random.Random(int(rng.integers(2**63)))
    text = np.zeros((n, width), np.uint8)
    for i in range(n):
        line = random_line(r, width)
        text[i, :len(line)] = np.frombuffer(line, np.uint8)
    args = [text.ravel(), np.int32(n), np.int32(width), fill(n * 4, np.int32, -1)]
    return LaunchSpec((n + block - 1) // block, block, args, outputs=(3,),
                      arg_names=("text", "n_lines", "width", "counts"))


def reference(spec: LaunchSpec) -> dict:
    n, width = int(spec.arg("n_lines")), int(spec.arg("width"))
    text = spec.arg("text").reshape(n, width)
    return {"counts": np.array([scan_counts(text[i].tobytes()) for i in range(n)], np.int32).ravel()}


WORKLOAD = Workload(
    name="multientry",
    description="alphanumeric word scanner whose letters/digits loop has two entries: irreducible (Wu et al. 2012 Fig. 2(d))",
    kernel="multientry",
    make=make,
    sizes=tuple(SIZES),
    reference=reference,
    features=("irreducible loop (two entries)", "goto state machine", "byte loads"),
)
