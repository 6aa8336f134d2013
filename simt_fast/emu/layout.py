"""Where a kernel's named variables live: parameters, shared, local, constant and module globals.

:func:`layout_symbols` assigns every variable a state space and an address in it (the decoder
turns a variable's name into that address); the host (:mod:`simt_fast.emu.host`) places the
regions in the flat memory of a launch.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..ir.model import Function, Module, PTXError
from .codes import GLOBAL_BASE, S_CONST, S_GLOBAL, S_LOCAL, S_PARAM, S_SHARED


@dataclass
class Layout:
    """Where every named variable lives: symbol -> (space, address in that space)."""

    symbols: dict = field(default_factory=dict)
    param_size: int = 0  # kernel parameter buffer bytes
    shared_static: int = 0  # static shared bytes (dynamic shared starts here)
    local_size: int = 0  # per-thread local bytes (.local vars + call-site .param buffers)
    const_size: int = 0
    const_init: bytes = b""
    global_vars: list = field(default_factory=list)  # (name, address, size, init bytes) of module .global vars
    dynamic_shared: bool = False  # the kernel uses an extern (dynamic) shared array


def _align(x: int, a: int) -> int:
    a = max(int(a), 1)
    return (x + a - 1) // a * a


def layout_symbols(module: Module, func: Function, shared_bytes: int = 0) -> Layout:
    lay = Layout()
    off = 0
    for p in func.params:
        off = _align(off, max(p.align, p.elem_size, 1))
        lay.symbols[p.name] = (S_PARAM, off)
        off += max(p.size, p.elem_size)
    lay.param_size = off
    shared_off = 0
    const_off = 0
    const_bytes = bytearray()
    extern_shared = []
    gaddr = 0
    for v in module.globals:
        if v.space == "shared":
            if v.count == 0 or v.linkage == "extern":
                extern_shared.append(v.name)
            else:
                shared_off = _align(shared_off, v.align)
                lay.symbols[v.name] = (S_SHARED, shared_off)
                shared_off += v.size
        elif v.space == "const":
            const_off = _align(const_off, v.align)
            const_bytes.extend(b"\0" * (const_off - len(const_bytes)))
            lay.symbols[v.name] = (S_CONST, const_off)
            data = v.init or b""
            const_bytes.extend(data[: v.size] + b"\0" * (v.size - len(data[: v.size])))
            const_off += v.size
        elif v.space == "global":
            # module .global variables sit at the start of the global arena, before the buffers
            gaddr = _align(gaddr, 256)
            lay.symbols[v.name] = (S_GLOBAL, GLOBAL_BASE + gaddr)
            lay.global_vars.append((v.name, GLOBAL_BASE + gaddr, max(v.size, 1), v.init or b""))
            gaddr += max(v.size, 1) + 256
    local_off = 0
    for v in func.local_vars:
        if v.space == "shared":
            if v.count == 0 or v.linkage == "extern":
                extern_shared.append(v.name)
                continue
            if v.name in lay.symbols:
                continue
            shared_off = _align(shared_off, v.align)
            lay.symbols[v.name] = (S_SHARED, shared_off)
            shared_off += v.size
        elif v.space in ("local", "param"):
            # call-site .param buffers (param0, retval0 ...) are per-thread storage; a name reused
            # in several call-sequence scopes gets one slot big enough for every use.
            prev = lay.symbols.get(v.name)
            if prev is not None and prev[0] == S_LOCAL:
                if lay.symbols.get(("size", v.name), 0) >= v.size:
                    continue
            local_off = _align(local_off, max(v.align, v.elem_size, 1))
            lay.symbols[v.name] = (S_LOCAL, local_off)
            lay.symbols[("size", v.name)] = v.size
            local_off += max(v.size, 1)
        elif v.space == "const":
            const_off = _align(const_off, v.align)
            const_bytes.extend(b"\0" * (const_off - len(const_bytes)))
            lay.symbols[v.name] = (S_CONST, const_off)
            data = v.init or b""
            const_bytes.extend(data[: v.size] + b"\0" * (v.size - len(data[: v.size])))
            const_off += v.size
        else:
            raise PTXError(f"unsupported state space '.{v.space}' for local variable '{v.name}'", func.path, func.line)
    shared_off = _align(shared_off, 16)
    lay.shared_static = shared_off
    for name in extern_shared:
        # every extern (dynamic) shared array aliases the dynamic region after the static ones
        lay.symbols[name] = (S_SHARED, shared_off)
    lay.dynamic_shared = bool(extern_shared)
    lay.local_size = _align(local_off, 8)
    lay.const_size = _align(const_off, 8)
    lay.const_init = bytes(const_bytes) + b"\0" * (lay.const_size - len(const_bytes))
    return lay
