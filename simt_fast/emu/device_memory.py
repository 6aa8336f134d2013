"""A launch's device memory, laid out the way the CUDA runtime would: allocations, symbols, textures.

The flat byte memory is ``[global arena | const | param | shared (one CTA) | local (one CTA)]``.
The global arena holds the module's ``.global`` variables, then one allocation per group of host
arrays that share memory: buffer arguments and texture data that are the same array, a view and
its base, overlapping views or views of one base become **one** allocation (256-byte aligned, as
``cudaMalloc``'s), spanning the part of the base they cover, and each argument is a pointer at its
byte offset in it, so pointer arithmetic between them works as on a GPU. After the launch every
allocation is copied back once, into the base. An unmapped 256-byte gap follows every allocation,
so an overrun faults. ``symbols`` are written into the module's ``__constant__``/``__device__``
variables before the launch and read back after (``cudaMemcpyToSymbol``/``FromSymbol``), and bind
textures to ``.texref`` variables.
"""

from __future__ import annotations

import numpy as np

from . import codes
from .errors import EmuError
from .limits import gib, machine_bytes
from .texture import Texture

ALIGN = 256  # cudaMalloc's alignment, and the unmapped gap after every allocation


def _align(x: int, a: int = ALIGN) -> int:
    return (int(x) + a - 1) // a * a


def _round8(x: int) -> int:
    return _align(x, 8)


def _root(a: np.ndarray) -> np.ndarray:
    """The array that owns ``a``'s memory (following views)."""
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


def _span(a: np.ndarray) -> tuple:
    start = a.__array_interface__["data"][0]
    return start, start + a.nbytes


class _Host:
    """One host array that needs device memory: its byte span and what it is to the kernel."""

    def __init__(self, array: np.ndarray, label: str, copy_back: bool):
        self.array = array
        self.label = label
        self.copy_back = copy_back
        self.start, self.end = _span(array)
        self.device = 0  # its device address, once placed


def _groups(hosts: list) -> list:
    """Hosts that must share an allocation: overlapping byte spans, or views of one base (union-find)."""
    parent = list(range(len(hosts)))

    def find(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    by_root = {}
    for i, h in enumerate(hosts):
        r = _root(h.array)
        if r.flags.c_contiguous:
            j = by_root.setdefault(id(r), i)
            parent[find(i)] = find(j)
    order = sorted(range(len(hosts)), key=lambda i: hosts[i].start)
    reach, last = -1, -1
    for i in order:
        h = hosts[i]
        if h.end > h.start and h.start < reach:
            parent[find(i)] = find(last)
        if h.end > reach:
            reach, last = h.end, i
    out = {}
    for i in range(len(hosts)):  # in argument order: device addresses must not depend on host ones
        out.setdefault(find(i), []).append(hosts[i])
    return list(out.values())


class DeviceMemory:
    """Places a launch's data in the flat memory, gives the interpreter its tables, copies results back."""

    def __init__(self, kern, args, T: int, shared_bytes: int, symbols=None):
        lay = kern.program.layout
        func = kern.func
        symbols = dict(symbols or {})
        self.buffers = []  # (device address, bytes, label) of every global allocation, for fault messages
        writes = []  # (device address, bytes or array) to copy in
        top = codes.GLOBAL_BASE
        for name, addr, size, init in lay.global_vars:
            writes.append((addr, init))
            self.buffers.append((addr, size, f"variable '{name}'"))
            top = max(top, addr + size + ALIGN)

        # buffer arguments and texture data: one allocation per group of arrays that share memory
        hosts, arg_host, textures = [], {}, []
        for k, (p, a) in enumerate(zip(func.params, args)):
            if isinstance(a, np.ndarray):
                arg_host[k] = _Host(a, f"argument {k} ({p.name})", copy_back=True)
                hosts.append(arg_host[k])
            elif isinstance(a, Texture):
                textures.append((a, _Host(a.data, f"the texture of argument {k} ({p.name})", copy_back=False)))
        sym_vars = self._symbol_variables(kern, symbols)
        for name, value in symbols.items():
            if isinstance(value, Texture):
                textures.append((value, _Host(value.data, f"the texture bound to '{name}'", copy_back=False)))
        hosts += [h for _, h in textures]
        self.copies = []  # (host byte view, device address): what is copied back after the launch
        for group in _groups(hosts):
            top = _align(top)
            lo, hi = min(h.start for h in group), max(h.end for h in group)
            for h in group:
                h.device = top + (h.start - lo)
            root = _root(group[0].array)
            whole = root.reshape(-1).view(np.uint8) if root.flags.c_contiguous else None
            if whole is not None and all(_root(h.array) is root for h in group):
                # the part of the base the group covers, gaps between its views included
                part = whole[lo - _span(root)[0]: hi - _span(root)[0]]
                writes.append((top, part))
                if any(h.copy_back for h in group) and root.flags.writeable:
                    self.copies.append((part, top))
            else:
                for h in group:
                    view = h.array.reshape(-1).view(np.uint8)
                    writes.append((h.device, view))
                    if h.copy_back:
                        self.copies.append((view, h.device))
            self.buffers.append((top, hi - lo, " = ".join(dict.fromkeys(h.label for h in group))))
            top += (hi - lo) + ALIGN
        garena = top - codes.GLOBAL_BASE

        self.const_off = _round8(garena)
        self.param_off = _round8(self.const_off + lay.const_size)
        self.shared_off = _round8(self.param_off + lay.param_size)
        self.shared_size = lay.shared_static + int(shared_bytes)
        self.local_off = _round8(self.shared_off + self.shared_size)
        self.local_size = lay.local_size
        total = _round8(self.local_off + T * lay.local_size) + 8
        if total > machine_bytes() // 2:
            raise EmuError(f"the launch needs {gib(total)} of device memory, more than half of this machine's "
                           f"{gib(machine_bytes())}")
        self.mem = np.zeros(total, np.uint8)
        mem = self.mem
        for addr, data in writes:
            raw = np.frombuffer(data, np.uint8) if isinstance(data, (bytes, bytearray)) else data
            o = addr - codes.GLOBAL_BASE
            mem[o: o + len(raw)] = raw
        mem[self.const_off: self.const_off + len(lay.const_init)] = np.frombuffer(lay.const_init, np.uint8)
        self.gbuf_lo = np.array([b[0] for b in self.buffers], np.uint64)
        self.gbuf_hi = np.array([b[0] + b[1] for b in self.buffers], np.uint64)
        self.gbuf_off = np.array([b[0] - codes.GLOBAL_BASE for b in self.buffers], np.int64)

        # textures: one descriptor row each; a texture object is the handle of its row
        handle = {}
        rows = []
        for tex, h in textures:
            if id(tex) not in handle:
                handle[id(tex)] = codes.TEX_HANDLE_BASE + len(rows)
                rows.append(tex.descriptor(h.device - codes.GLOBAL_BASE, h.device))
        self.texd = np.array(rows, np.int64).reshape(len(rows), codes.TX_FIELDS)
        self.texel_bytes = max((t.texel_bytes for t, _ in textures), default=0)

        # kernel parameters: pointers become device addresses, textures their handles, scalars their bytes
        self.arg_addr = {k: h.device for k, h in arg_host.items()}
        pbytes = bytearray(lay.param_size)
        for k, (p, a) in enumerate(zip(func.params, args)):
            _, off = lay.symbols[p.name]
            if isinstance(a, np.ndarray):
                raw = int(self.arg_addr[k]).to_bytes(8, "little")
            elif isinstance(a, Texture):
                raw = int(handle[id(a)]).to_bytes(8, "little")
            elif isinstance(a, (bytes, bytearray)):
                raw = bytes(a)
            else:
                raw = a.tobytes()
            pbytes[off: off + len(raw)] = raw
        mem[self.param_off: self.param_off + len(pbytes)] = np.frombuffer(bytes(pbytes), np.uint8)

        # symbols: written now, read back after the launch (in place, like buffers)
        for name, value in symbols.items():
            space, addr = sym_vars[name]
            o = addr - codes.GLOBAL_BASE if space == codes.S_GLOBAL else self.const_off + addr
            if isinstance(value, Texture):
                mem[o: o + 8] = np.frombuffer(int(handle[id(value)]).to_bytes(8, "little"), np.uint8)
                continue
            view = value.reshape(-1).view(np.uint8)
            mem[o: o + len(view)] = view
            if value.flags.writeable:
                self.copies.append((view, codes.GLOBAL_BASE + o))
        self.rgn = np.array(
            [self.const_off, lay.const_size, self.param_off, lay.param_size, self.shared_off, self.shared_size,
             self.local_off, lay.local_size], np.int64,
        )

    @staticmethod
    def _symbol_variables(kern, symbols: dict) -> dict:
        """Check ``symbols`` against the module's variables; name -> (space, address)."""
        lay = kern.program.layout
        module_vars = {v.name: v for v in kern.module.globals}
        settable = sorted(n for n, v in module_vars.items() if v.space in ("const", "global"))
        kernel_vars = {v.name: v for v in kern.func.local_vars}
        out = {}
        for name, value in symbols.items():
            v = module_vars.get(name, kernel_vars.get(name))
            if v is None or name not in lay.symbols:
                raise EmuError(f"symbols: '{name}' is not a __constant__ or __device__ variable of the module "
                               f"(it has: {', '.join(settable) or 'none'})")
            if v.space not in ("const", "global"):
                raise EmuError(f"symbols: '{name}' is a .{v.space} variable; only __constant__ (.const) and "
                               f"__device__ (.global) variables can be set from the host")
            if v.dtype == "texref":
                if not isinstance(value, Texture):
                    raise EmuError(f"symbols: '{name}' is a .texref; bind it to a simt_fast.emu.Texture, "
                                   f"not a {type(value).__name__}")
            elif not isinstance(value, np.ndarray):
                raise EmuError(f"symbols: '{name}' needs a numpy array of {v.size} bytes, got a {type(value).__name__}")
            elif value.nbytes != v.size:
                raise EmuError(f"symbols: '{name}' is {v.size} bytes (.{v.space} .{v.dtype}"
                               f"{f'[{v.count}]' if v.count != 1 else ''}) but the array has {value.nbytes} bytes")
            elif not value.flags.c_contiguous:
                raise EmuError(f"symbols: the array for '{name}' must be C-contiguous (use np.ascontiguousarray)")
            out[name] = lay.symbols[name]
        return out

    def copy_back(self) -> None:
        for view, addr in self.copies:
            o = addr - codes.GLOBAL_BASE
            view[:] = self.mem[o: o + len(view)]

    def nearest_buffer(self, addr: int, nbytes: int) -> str:
        """Which global allocation an access of ``nbytes`` at ``addr`` is nearest to, and how it misses it."""
        if not self.buffers:
            return "the launch has no global buffers"
        dist, lo, size, label = min(
            ((lo - addr if addr < lo else max(0, addr + nbytes - (lo + size)), lo, size, label)
             for lo, size, label in self.buffers), key=lambda b: b[0])
        if addr < lo:
            how = f"{lo - addr} byte(s) before its start"
        elif addr < lo + size:
            how = f"at offset {addr - lo}, running past its end"
        else:
            how = f"{addr - (lo + size)} byte(s) past its end"
        return f"the nearest is {label} ({size} bytes at {lo:#x}), {how}"
