"""goto-based lexer state machine over per-thread text lines (unstructured control flow).

The generator writes lines of a small made-up language (identifiers, integers, decimals,
strings with escapes, operators, comments, the odd unterminated string), NUL-padded or cut at
the line width.  The reference tokenises each line with Python regular expressions (a
different formulation of the same token grammar) and must count exactly the same tokens.
"""

from __future__ import annotations

import re

import numpy as np

from simt_fast.workloads import LaunchSpec, Workload, fill

N_KINDS = 7  # identifiers, integers, decimals, strings, operators, comments, errors
SIZES = {"tiny": (512, 64, 128), "default": (16384, 64, 128)}  # lines, width, block

_TOKEN = re.compile(
    rb"(?P<space>[ \t]+)"
    rb"|(?P<ident>[A-Za-z_][A-Za-z0-9_]*)"
    rb"|(?P<decimal>[0-9]+\.[0-9]*)"
    rb"|(?P<int>[0-9]+)"
    rb'|(?P<string>"(?:\\.|[^"\\\x00])*")'
    rb'|(?P<error>"(?:\\.|[^"\\\x00])*(?:\\)?)'  # an opening quote with no closing one
    rb"|(?P<comment>\#)"
    rb"|(?P<end>\x00)"
    rb"|(?P<op>.)",
    re.S,
)
_KIND = {"ident": 0, "int": 1, "decimal": 2, "string": 3, "op": 4, "comment": 5, "error": 6}


def tokenize_counts(line: bytes) -> list:
    counts = [0] * N_KINDS
    pos = 0
    while pos < len(line):
        m = _TOKEN.match(line, pos)
        kind = m.lastgroup
        if kind == "end":
            break
        if kind in _KIND:
            counts[_KIND[kind]] += 1
        if kind in ("comment", "error"):
            break
        pos = m.end()
    return counts


_WORDS = [b"if", b"while", b"x1", b"count", b"_tmp", b"Value", b"go_to", b"n"]
_OPS = list(b"+-*/=<>(){};,.!&|")


def random_line(rng: np.random.Generator, width: int) -> bytes:
    parts = []
    length = 0
    while length < width + 8:
        r = rng.random()
        if r < 0.30:
            tok = _WORDS[rng.integers(len(_WORDS))] + (str(rng.integers(100)).encode() if rng.random() < 0.3 else b"")
        elif r < 0.45:
            tok = str(rng.integers(0, 10 ** int(rng.integers(1, 6)))).encode()
        elif r < 0.52:
            tok = f"{rng.random() * 100:.{int(rng.integers(0, 4))}f}".encode() + (b"." if rng.random() < 0.1 else b"")
        elif r < 0.62:
            body = b"".join(rng.choice([b"a", b"b ", b"\\\"", b"\\n", b"#", b"7"]) for _ in range(rng.integers(0, 8)))
            tok = b'"' + body + (b'"' if rng.random() < 0.9 else b"")
        elif r < 0.90:
            tok = bytes([_OPS[rng.integers(len(_OPS))]])
        elif r < 0.93:
            tok = b"# note " + bytes(rng.integers(97, 123, 5).astype(np.uint8))
        else:
            tok = b"\t"
        parts.append(tok)
        parts.append(b" " * int(rng.integers(0, 3)))
        length += len(tok) + 1
        if rng.random() < 0.04:  # some lines end early (NUL padding follows)
            break
    return b"".join(parts)[:width]


def make(size: str, rng: np.random.Generator) -> LaunchSpec:
    n, width, block = SIZES[size]
    text = np.zeros((n, width), np.uint8)
    for i in range(n):
        line = random_line(rng, width)
        text[i, :len(line)] = np.frombuffer(line, np.uint8)
    args = [text.ravel(), np.int32(n), np.int32(width), fill(n * N_KINDS, np.int32, -1)]
    return LaunchSpec((n + block - 1) // block, block, args, outputs=(3,),
                      arg_names=("text", "n_lines", "width", "counts"))


def reference(spec: LaunchSpec) -> dict:
    n, width = int(spec.arg("n_lines")), int(spec.arg("width"))
    text = spec.arg("text").reshape(n, width)
    counts = np.array([tokenize_counts(text[i].tobytes()) for i in range(n)], np.int32)
    return {"counts": counts.ravel()}


WORKLOAD = Workload(
    name="statemachine",
    description="goto-based lexer state machine, one text line per thread (unstructured, seeds 002/004)",
    kernel="statemachine",
    make=make,
    reference=reference,
    features=("goto state machine", "byte loads", "many loop entries/exits"),
)
