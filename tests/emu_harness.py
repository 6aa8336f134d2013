"""Run one PTX instruction on arrays of operands (tests of the emulator's instruction semantics).

``run_one("add.s32 %d, %a, %b;", {"d": "s32", "a": "s32", "b": "s32"}, a=[...], b=[...])`` builds
a kernel in which thread i loads a[i], b[i], c[i] (uint64 bit patterns, truncated to each
operand's type), executes the instruction and stores every destination (d, and q for two-result
forms) zero-extended to 64 bits. Results come back as uint64 arrays.
"""

from __future__ import annotations

import functools

import numpy as np

from simt_fast.emu import launch, load_kernel

_SIZE = {"pred": 1, "b16": 2, "u16": 2, "s16": 2, "b32": 4, "u32": 4, "s32": 4, "f32": 4,
         "b64": 8, "u64": 8, "s64": 8, "f64": 8}
OPERANDS = ("a", "b", "c", "e")
RESULTS = ("d", "q")


def _load(name: str, ty: str, src: str) -> str:
    size = _SIZE[ty]
    if size == 8:
        return f"mov.b64 %{name}, {src};"
    if size == 4:
        return f"cvt.u32.u64 %t32, {src};\n mov.b32 %{name}, %t32;"
    if size == 2:
        return f"cvt.u16.u64 %t16, {src};\n mov.b16 %{name}, %t16;"
    return f"setp.ne.u64 %{name}, {src}, 0;"


def _store(name: str, ty: str, dst: str) -> str:
    size = _SIZE[ty]
    if size == 8:
        return f"mov.b64 {dst}, %{name};"
    if size == 4:
        return f"mov.b32 %t32, %{name};\n cvt.u64.u32 {dst}, %t32;"
    if size == 2:
        return f"mov.b16 %t16, %{name};\n cvt.u64.u16 {dst}, %t16;"
    return f"selp.u64 {dst}, 1, 0, %{name};"


def kernel_source(instr: str, types: dict) -> str:
    decls = "\n".join(f" .reg .{'pred' if t == 'pred' else t} %{n};" for n, t in types.items())
    params = ", ".join(f".param .u64 p_{n}" for n in OPERANDS + RESULTS)
    body = [
        "mov.u32 %t32, %tid.x;",
        "mul.wide.u32 %off, %t32, 8;",
    ]
    for n in OPERANDS:
        body += [f"ld.param.u64 %addr, [p_{n}];", "add.s64 %addr, %addr, %off;", f"ld.global.u64 %in_{n}, [%addr];"]
        if n in types:
            body.append(_load(n, types[n], f"%in_{n}"))
    body.append(instr)
    for n in RESULTS:
        if n in types:
            body += [_store(n, types[n], "%out"), f"ld.param.u64 %addr, [p_{n}];", "add.s64 %addr, %addr, %off;",
                     "st.global.u64 [%addr], %out;"]
    body.append("ret;")
    return f""".version 7.0
.target sm_75
.address_size 64
.visible .entry one({params})
{{
 .reg .b32 %t32;
 .reg .b16 %t16;
 .reg .b64 %off;
 .reg .b64 %addr;
 .reg .b64 %out;
 .reg .b64 %in_a;
 .reg .b64 %in_b;
 .reg .b64 %in_c;
 .reg .b64 %in_e;
{decls}
 {chr(10).join(' ' + b for b in body)}
}}
"""


@functools.lru_cache(maxsize=None)
def _kernel(instr: str, types_key: tuple):
    return load_kernel(kernel_source(instr, dict(types_key)))


def _bits(values, n):
    if values is None:
        return np.zeros(n, np.uint64)
    if not isinstance(values, np.ndarray):
        return np.array([int(v) & 0xFFFFFFFFFFFFFFFF for v in values], np.uint64)
    arr = values
    if arr.dtype == np.float32:
        return arr.view(np.uint32).astype(np.uint64)
    if arr.dtype == np.float64:
        return arr.view(np.uint64).copy()
    return np.array([int(v) & 0xFFFFFFFFFFFFFFFF for v in values], np.uint64)


def run_one(instr: str, types: dict, a=None, b=None, c=None, e=None) -> dict:
    """Execute ``instr`` once per element; returns {"d": uint64[n], "q": uint64[n]} (what exists)."""
    n = len(next(v for v in (a, b, c, e) if v is not None))
    assert 1 <= n <= 1024
    ins = [_bits(v, n) for v in (a, b, c, e)]
    outs = [np.zeros(n, np.uint64) for _ in RESULTS]
    kern = _kernel(instr, tuple(sorted(types.items())))
    launch(kern, None, 1, n, ins + outs, trace=False)
    return {name: out for name, out in zip(RESULTS, outs) if name in types}
