"""goto-based lexer state machine over per-thread text lines (unstructured control flow).

The generator writes lines of a small made-up language (identifiers, integers, decimals,
strings with escapes, operators, comments, the odd unterminated string), NUL-padded or cut at
the line width.  The reference tokenises each line with Python regular expressions (a
different formulation of the same token grammar) and must count exactly the same tokens.
"""

from __future__ import annotations

import random
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


_WORDS = ["if", "while", "x1", "count", "_tmp", "Value", "go_to", "n"]
_OPS = "+-*/=<>(){};,.!&|"
_STRING_PARTS = ["a", "b ", '\\"', "\\n", "#", "7"]


def random_line(r: random.Random, width: int) -> bytes:
    """One line of the toy language, cut at ``width`` (or ended early, then NUL-padded)."""
    parts = []
    length = 0
    while length < width + 8:
        u = r.random()
        if u < 0.30:
            tok = r.choice(_WORDS) + (str(r.randrange(100)) if r.random() < 0.3 else "")
        elif u < 0.45:
            tok = str(r.randrange(10 ** r.randint(1, 5)))
        elif u < 0.52:
            tok = f"{r.random() * 100:.{r.randint(0, 3)}f}" + ("." if r.random() < 0.1 else "")
        elif u < 0.62:
            body = "".join(r.choice(_STRING_PARTS) for _ in range(r.randrange(8)))
            tok = '"' + body + ('"' if r.random() < 0.9 else "")
        elif u < 0.90:
            tok = r.choice(_OPS)
        elif u < 0.93:
            tok = "# note " + "".join(r.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(5))
        else:
            tok = "\t"
        parts.append(tok + " " * r.randrange(3))
        length += len(parts[-1])
        if r.random() < 0.04:  # some lines end early (NUL padding follows)
            break
    return "".join(parts).encode()[:width]


def make(size: str, rng: np.random.Generator) -> LaunchSpec:
    n, width, block = SIZES[size]
    text = np.zeros((n, width), np.uint8)
    r = random.Random(int(rng.integers(2**63)))  # Python's generator: cheap per-token draws
    for i in range(n):
        line = random_line(r, width)
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
    description="goto-based lexer state machine, one text line per thread (unstructured, Wu et al. 2012)",
    kernel="statemachine",
    make=make,
    sizes=tuple(SIZES),
    reference=reference,
    features=("goto state machine", "byte loads", "many loop entries/exits"),
)
