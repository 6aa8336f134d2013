"""`simt-fast trace K.ptx --arg ...`: a kernel's arguments from the command line, checked in CLI terms.

One ``--arg`` per ``.param`` of the kernel, in order. DTYPE is a PTX type (``u8``..``u64``,
``s8``..``s64``, ``b8``..``b64``, ``f16``, ``f32``, ``f64``) or its numpy name (``uint32``,
``int32``, ``float32``...):

=============================  ====================================================================
``buf:DTYPE:N``                N zeros (an output buffer)
``rand:DTYPE:N[:LO:HI]``       N uniform random values: integers in LO..HI (both included; default
                               0..65535, 0..32767 for 16-bit and 0..127 for 8-bit types), floats in
                               [LO, HI) (default [0, 1)); seeded by ``--seed`` and the argument's
                               position, so every random argument differs and a run is repeatable
``sorted:DTYPE:N[:LO:HI]``     the same random values, sorted ascending (a search table)
``iota:DTYPE:N[:START[:STEP]]`` START, START + STEP, ... (default 0, 1)
``npy:FILE``                   the array of a ``.npy`` file (``numpy.save``), passed flat in C order
``DTYPE:VALUE``                a by-value scalar (``u32:2048``, ``f32:0.5``; integers also ``0x..``)
=============================  ====================================================================

Buffers go to pointer parameters, scalars to the others; a mismatch is one sentence saying which
parameter takes what, before anything runs.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

FORMS = ("buf:DTYPE:N, rand:DTYPE:N[:LO:HI], sorted:DTYPE:N[:LO:HI], iota:DTYPE:N[:START[:STEP]], npy:FILE "
         "or DTYPE:VALUE")
BUFFER_FORMS = "buf:, rand:, sorted:, iota: or npy:"

# PTX type spellings -> numpy; numpy's own names are accepted too (never its one-letter codes,
# where "f16" would be a 16-byte float).
PTX_DTYPES = {
    **{f"u{b}": f"uint{b}" for b in (8, 16, 32, 64)},
    **{f"s{b}": f"int{b}" for b in (8, 16, 32, 64)},
    **{f"b{b}": f"uint{b}" for b in (8, 16, 32, 64)},
    "f16": "float16", "f32": "float32", "f64": "float64",
}
NUMPY_DTYPES = tuple(dict.fromkeys(PTX_DTYPES.values()))
_BUFFERS = ("buf", "rand", "sorted", "iota")


class ArgError(ValueError):
    """A ``--arg`` that cannot be built or does not fit its parameter; one sentence."""


def dtype_of(name: str, where: str) -> np.dtype:
    if name in PTX_DTYPES:
        return np.dtype(PTX_DTYPES[name])
    if name in NUMPY_DTYPES:
        return np.dtype(name)
    raise ArgError(f"{where}: '{name}' is not a type; use u8..u64, s8..s64, b8..b64, f16, f32, f64 "
                   f"(or int32, float32, ...)")


def default_range(dt: np.dtype) -> tuple:
    """``rand:``'s range without LO:HI: integers 0..min(2**(bits-1), 65536) - 1, floats [0, 1)."""
    if dt.kind == "f":
        return 0.0, 1.0
    return 0, (1 << min(8 * dt.itemsize - 1, 16)) - 1


def parse_args(texts: list, func, seed: int = 0) -> list:
    """The numpy arguments of ``texts`` (``--arg`` values) for kernel ``func`` (an IR Function)."""
    params = func.params
    pointers = pointer_params(func)
    if len(texts) != len(params):
        listing = ", ".join(f"{k} {describe(p, pointers)}" for k, p in enumerate(params)) or "none"
        raise ArgError(f"kernel {func.name} takes {len(params)} parameter(s) ({listing}) but --arg was given "
                       f"{len(texts)} time(s); pass one --arg per parameter, in order")
    return [parse_arg(text, k, p, p.name in pointers, seed) for k, (text, p) in enumerate(zip(texts, params))]


def describe(param, pointers: set) -> str:
    """A parameter as the command line sees it: ``pointer``, ``.u32``, ``.b8[16]``."""
    if param.name in pointers:
        return "pointer"
    return f".{param.dtype}" + (f"[{param.count}]" if param.count != 1 else "")


def takes_address(param) -> bool:
    """A 64-bit integer parameter: the only kind a buffer (a device address) can be passed to."""
    return param.count == 1 and param.elem_size == 8 and not param.dtype.startswith("f")


def pointer_params(func) -> set:
    """Names of ``func``'s parameters that are pointers: declared ``.ptr``, or 64-bit integers the
    kernel uses as an address.

    Follows each value from its ``ld.param`` through moves, conversions and integer arithmetic (a
    forward pass, repeated until nothing changes, so loops are covered) to a memory operand's base
    or a ``cvta``. Only used to word messages: the launch accepts a buffer for any 64-bit integer
    parameter (an -O0 kernel that spills its parameters to local memory looks like plain integers)."""
    from ..ir.model import Address, Reg, Symbol

    pointers = {p.name for p in func.params if p.ptr_space}
    carriers = {p.name: set() for p in func.params if takes_address(p) and not p.ptr_space}  # registers holding it
    flows = ("mov", "cvt", "cvta", "add", "sub", "mad", "mul", "shl", "and", "or", "selp")

    def holds(op, regs) -> bool:
        return isinstance(op, Reg) and op.name in regs

    changed = True
    while changed:
        changed = False
        for ins in func.instructions:
            ops = ins.operands
            if ins.base == "ld" and "param" in ins.modifiers and len(ops) == 2 and isinstance(ops[0], Reg) \
                    and isinstance(ops[1], Address) and isinstance(ops[1].base, Symbol):
                regs = carriers.get(ops[1].base.name)
                if regs is not None and ops[0].name not in regs:
                    regs.add(ops[0].name)
                    changed = True
                continue
            for name, regs in carriers.items():
                if not regs or name in pointers:
                    continue
                if (ins.base == "cvta" and any(holds(o, regs) for o in ops[1:])) or any(
                        isinstance(o, Address) and holds(o.base, regs) for o in ops):
                    pointers.add(name)
                elif ins.base in flows and ops and isinstance(ops[0], Reg) and ops[0].name not in regs \
                        and any(holds(o, regs) for o in ops[1:]):
                    regs.add(ops[0].name)
                    changed = True
    return pointers


def parse_arg(text: str, k: int, param, pointer: bool, seed: int = 0):
    """One ``--arg`` for parameter ``k``: the numpy array or scalar, or ArgError in CLI terms."""
    where = f"--arg {k} '{text}'"
    kind, _, rest = text.partition(":")
    name = f"parameter {k} ({param.name})"
    if kind == "npy" or kind in _BUFFERS:
        if not takes_address(param):
            raise ArgError(f"{where} is a buffer, but {name} is a .{param.dtype}{_count_suffix(param)} value: "
                           f"pass {_scalar_example(param)}")
        return _load_npy(rest, where) if kind == "npy" else _buffer(kind, rest.split(":"), k, seed, where)
    if kind not in PTX_DTYPES and kind not in NUMPY_DTYPES:
        raise ArgError(f"{where} is none of {FORMS} (DTYPE: u8..u64, s8..s64, b8..b64, f16, f32, f64, or int32, "
                       f"float32, ...)")
    if not rest:
        raise ArgError(f"{where} has no value: write {kind}:VALUE (e.g. {kind}:5)")
    if pointer:
        raise ArgError(f"{where} is a scalar, but {name} is a pointer: pass a buffer ({BUFFER_FORMS})")
    if param.count != 1:
        raise ArgError(f"{where}: {name} is .{param.dtype}{_count_suffix(param)} (by-value bytes, e.g. a struct), "
                       f"which the command line cannot pass; use the Python API, simt_fast.emu.launch")
    dt = dtype_of(kind, where)
    value = _scalar(dt, kind, rest, where)
    if dt.itemsize != param.elem_size or (dt.kind == "f") != param.dtype.startswith("f"):
        raise ArgError(f"{where} is {kind}, but {name} is .{param.dtype}: pass {_scalar_example(param, rest)}")
    return value


def _count_suffix(param) -> str:
    return f"[{param.count}]" if param.count != 1 else ""


def _scalar_example(param, value: str = "VALUE") -> str:
    t = param.dtype
    if t.startswith("b"):
        t = "u" + t[1:]
    return f"{t}:{value}"


def _buffer(kind: str, parts: list, k: int, seed: int, where: str) -> np.ndarray:
    from ..emu.limits import gib, machine_bytes

    shape = {"buf": "buf:DTYPE:N", "rand": "rand:DTYPE:N[:LO:HI]", "sorted": "sorted:DTYPE:N[:LO:HI]",
             "iota": "iota:DTYPE:N[:START[:STEP]]"}[kind]
    allowed = {"buf": (2,), "rand": (2, 4), "sorted": (2, 4), "iota": (2, 3, 4)}[kind]
    if len(parts) not in allowed:
        raise ArgError(f"{where} is not {shape}")
    tname = parts[0]
    dt = dtype_of(tname, where)
    try:
        n = int(parts[1])
    except ValueError:
        raise ArgError(f"{where}: the element count '{parts[1]}' is not a whole number") from None
    limit = machine_bytes() // 2 // dt.itemsize
    if not 0 <= n <= limit:
        raise ArgError(f"{where} asks for {n} elements ({gib(max(n, 0) * dt.itemsize)}); a buffer must have 0 to "
                       f"{limit} elements on this machine")
    if kind == "buf":
        return np.zeros(n, dt)
    if kind == "iota":
        start = _scalar(dt, tname, parts[2], where) if len(parts) > 2 else dt.type(0)
        step = _scalar(dt, tname, parts[3], where) if len(parts) > 3 else dt.type(1)
        if dt.kind == "f":
            return (float(start) + float(step) * np.arange(n, dtype=np.float64)).astype(dt)
        last = int(start) + int(step) * max(n - 1, 0)
        info = np.iinfo(dt)
        if not info.min <= last <= info.max:
            raise ArgError(f"{where}: its last value {last} does not fit {tname} ({info.min}..{info.max})")
        index = np.arange(n, dtype=np.uint64 if dt == np.uint64 else np.int64)
        return (index * index.dtype.type(step) + index.dtype.type(start)).astype(dt)
    lo, hi = default_range(dt)
    if len(parts) == 4:
        lo, hi = _scalar(dt, tname, parts[2], where), _scalar(dt, tname, parts[3], where)
        if not (lo < hi if dt.kind == "f" else lo <= hi):
            raise ArgError(f"{where}: LO {parts[2]} must be {'below' if dt.kind == 'f' else 'at most'} HI {parts[3]}")
    rng = np.random.default_rng([seed % 2**64, k])  # one stream per (--seed, argument position)
    if dt.kind == "f":
        values = (float(lo) + (float(hi) - float(lo)) * rng.random(n)).astype(dt)
        values = np.minimum(values, np.nextafter(dt.type(hi), dt.type(lo)))  # rounding never reaches HI
    else:
        values = rng.integers(int(lo), int(hi), n, endpoint=True,
                              dtype=np.uint64 if dt == np.uint64 else np.int64).astype(dt)
    return np.sort(values) if kind == "sorted" else values


def _scalar(dt: np.dtype, tname: str, text: str, where: str):
    try:
        v = float(text) if dt.kind == "f" else int(text, 0)
    except ValueError:
        raise ArgError(f"{where}: '{text}' is not a {'number' if dt.kind == 'f' else 'whole number'}") from None
    if dt.kind == "f":
        if np.isfinite(v) and abs(v) > float(np.finfo(dt).max):
            raise ArgError(f"{where}: {text} does not fit {tname}")
        return dt.type(v)
    info = np.iinfo(dt)
    if not info.min <= v <= info.max:
        raise ArgError(f"{where}: {v} does not fit {tname} ({info.min}..{info.max})")
    return dt.type(v)


def _load_npy(file: str, where: str) -> np.ndarray:
    if not file:
        raise ArgError(f"{where} names no file; write npy:FILE")
    path = Path(file)
    try:
        a = np.load(path, allow_pickle=False)
    except FileNotFoundError:
        raise ArgError(f"{where}: {path} does not exist") from None
    except IsADirectoryError:
        raise ArgError(f"{where}: {path} is a directory, not a .npy file") from None
    except (OSError, ValueError) as e:
        raise ArgError(f"{where}: {path} is not a .npy array file ({str(e).splitlines()[0] if str(e) else e})") from None
    if not isinstance(a, np.ndarray) or a.dtype.kind not in "iuf":
        what = a.dtype if isinstance(a, np.ndarray) else "an archive of several arrays"
        raise ArgError(f"{where}: {path} holds {what}; a buffer holds integers or floats")
    return np.ascontiguousarray(a.reshape(-1))


def save_buffers(directory: Path, args: list) -> list:
    """Write every buffer argument as ``DIR/argK.npy`` (its content after the launch); the paths written."""
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for k, a in enumerate(args):
        if isinstance(a, np.ndarray):
            path = directory / f"arg{k}.npy"
            np.save(path, a)
            written.append(path)
    return written
