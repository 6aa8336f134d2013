"""The host side of the emulator: :func:`launch` runs a PTX kernel on numpy buffers and records every
thread's block path (what the CUDA runtime does around a kernel, plus the trace).

Plain Python around the numba interpreter (:mod:`simt_fast.emu.machine`): argument checking,
memory layout, CTA batching, fault messages and trace writing.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional

import numpy as np

from .._jit import announce_compile
from ..ir.cfg import build_cfg
from ..ir.convergence import analyze_convergence
from ..ir.flat import flatten
from ..ir.inline import inline_calls
from ..ir.model import Function, Module
from ..trace.io import TraceWriter, path_dtype
from ..trace.model import MEM_FORMAT, Trace
from . import codes
from ..ir import parse_ptx
from . import ctl as C
from . import decode as D
from . import machine as M
from .device_memory import DeviceMemory
from .errors import EmuError
from .limits import (
    LOG_BYTES_PER_EVENT, MAX_BLOCK, MAX_CTA_THREADS, MAX_GRID, MAX_LOCAL_BYTES, MAX_SHARED_BYTES, TRACE_SHARE,
    available_bytes, default_max_insts, dim3, gib, size_text,
)
from .texture import Texture

# the interpreter's cold compile CPU time, measured by bench/bench_compile.py on a 2-core machine
EMULATOR_COLD_COMPILE_SECONDS = 45

__all__ = ["launch", "Launch", "EmuError", "load_kernel", "Kernel", "Texture"]

BATCH_THREADS = 1 << 16  # threads per CTA batch: bounds event buffers and trace batches
EV_SOFT_LIMIT = 1 << 24  # block events (8 bytes each) after which a batch is flushed early
MEM_LOG_BYTES_PER_EVENT = 12  # a memory access in the emulator's log: int32 thread, uint64 address


@dataclass
class Kernel:
    """A kernel ready to run: the inlined function, its CFG arrays and its decoded program."""


    module: Module
    func: Function  # the inlined kernel
    flat: dict
    program: D.Program
    source_sha256: str
    is_leader: np.ndarray
    block_of: np.ndarray
    blk_mem: np.ndarray

    @property
    def name(self) -> str:
        return self.func.name


@dataclass
class Launch:
    """The result of :func:`launch`."""


    kernel: str
    grid: tuple
    block: tuple
    thread_insts: int  # dynamic thread instructions (every instruction on every thread's path)
    device_ptrs: dict = field(default_factory=dict)  # argument index -> the device address it was passed as
    trace_path: Optional[Path] = None
    _trace: Optional[Trace] = field(default=None, repr=False)

    @property
    def trace(self) -> Optional[Trace]:
        """The launch's :class:`Trace` (read back from ``trace_path`` if it was streamed to a file)."""
        if self._trace is None and self.trace_path is not None:
            self._trace = Trace.load(self.trace_path)
        return self._trace


def _read_source(ptx):
    if isinstance(ptx, Module):
        return ptx, ptx.source or ""

    if isinstance(ptx, os.PathLike) or (isinstance(ptx, str) and "\n" not in ptx and ptx.endswith(".ptx")):
        text = Path(ptx).read_text(encoding="utf-8", errors="replace") if Path(ptx).is_file() else None
        if text is None:
            raise FileNotFoundError(f"PTX file not found: {ptx}")
        return parse_ptx(text, path=str(ptx)), text
    return parse_ptx(ptx), ptx


def load_kernel(ptx, kernel=None) -> Kernel:
    """Parse (if needed), inline and decode ``kernel`` of ``ptx``; PTXError on anything unsupported."""
    module, text = _read_source(ptx)
    func = kernel if isinstance(kernel, Function) else module.find_kernel(kernel)
    inlined = inline_calls(module, func)
    cfg = build_cfg(inlined)
    flat = flatten(inlined, cfg)
    program = D.decode(module, inlined)
    flat["mem_bytes"] = program.mem_bytes
    flat["mem_kind"] = program.mem_kind
    n = program.n_instrs
    is_leader = np.zeros(n + 1, np.uint8)
    block_of = np.empty(n + 1, np.int32)
    block_of[:n] = cfg.block_of_instr
    block_of[n] = cfg.exit
    for b in cfg.blocks:
        if b.end > b.start:
            is_leader[b.start] = 1
    is_leader[n] = 1
    n_blocks = cfg.n_blocks
    blk_mem = np.zeros(n_blocks, np.int32)  # /mem entries per thread per execution of each block
    for b in cfg.blocks:
        blk_mem[b.id] = int(np.count_nonzero(program.mem_rec[b.start : b.end]))
    sha = hashlib.sha256(text.encode()).hexdigest() if text else ""
    return Kernel(module, inlined, flat, program, sha, is_leader, block_of, blk_mem)


_SCALAR_DTYPES = {
    (1, codes.KIND_U): ("uint8", "int8"), (1, codes.KIND_S): ("int8", "uint8"),
    (2, codes.KIND_U): ("uint16", "int16"), (2, codes.KIND_S): ("int16", "uint16"),
    (4, codes.KIND_U): ("uint32", "int32"), (4, codes.KIND_S): ("int32", "uint32"), (4, codes.KIND_F): ("float32",),
    (8, codes.KIND_U): ("uint64", "int64"), (8, codes.KIND_S): ("int64", "uint64"), (8, codes.KIND_F): ("float64",),
}


def _param_type(p) -> str:
    return f".{p.dtype}" + (f"[{p.count}]" if p.count != 1 else "")


def _check_args(func: Function, args) -> None:
    """Every argument against its .param, before anything runs (one sentence per problem)."""
    params = func.params
    if len(args) != len(params):
        raise EmuError(
            f"kernel '{func.name}' takes {len(params)} parameter(s) ({', '.join(_param_type(p) for p in params)}) "
            f"but {len(args)} argument(s) were given"
        )
    for k, (p, a) in enumerate(zip(params, args)):
        where = f"argument {k} ({p.name}, {_param_type(p)})"
        if isinstance(a, np.ndarray):
            if p.count != 1 or p.elem_size != 8 or p.dtype.startswith("f"):
                raise EmuError(f"{where} is a by-value parameter but a numpy array was given (arrays are device buffers, passed to 64-bit pointer parameters)")
            if not a.flags.c_contiguous:
                raise EmuError(f"{where}: the array must be C-contiguous (use np.ascontiguousarray)")
            if not a.flags.writeable:
                raise EmuError(f"{where}: the array must be writeable (results are copied back into it)")
            continue
        if isinstance(a, Texture):
            if p.count != 1 or p.elem_size != 8 or p.dtype.startswith("f"):
                raise EmuError(f"{where} is not a 64-bit parameter, so it cannot take a texture object")
            continue
        if isinstance(a, (bytes, bytearray)):
            if len(a) != p.size:
                raise EmuError(f"{where} is {p.size} bytes but {len(a)} bytes were given")
            continue
        if isinstance(a, np.generic):
            ty = codes.TYPES.get(p.dtype)
            if ty is None or p.count != 1:
                raise EmuError(f"{where} cannot take a numpy scalar (pass {p.size} raw bytes)")
            ok = _SCALAR_DTYPES.get((D.tsize(ty), D.tkind(ty)), ())
            if a.dtype.name not in ok:
                raise EmuError(f"{where} needs a numpy scalar of dtype {' or '.join(ok)}, got {a.dtype.name}")
            continue
        raise EmuError(
            f"{where}: got a {type(a).__name__}; pass a numpy array (device buffer), a Texture or a numpy "
            f"scalar of the parameter's type (e.g. np.int32(5))"
        )


def _fault_message(kern: Kernel, ctl: np.ndarray, grid: tuple, block: tuple, memory: DeviceMemory) -> str:
    code = int(ctl[C.F_CODE])
    pc = int(ctl[C.F_PC])
    ins = kern.func.instructions[pc] if 0 <= pc < len(kern.func.instructions) else None
    where = f"{kern.func.path}:{ins.line}" if ins is not None else kern.func.path
    text = f" (`{ins.text.strip()}`)" if ins is not None else ""
    cta = int(ctl[C.F_CTA])
    gx, gy = grid[0], grid[1]
    cta3 = (cta % gx, (cta // gx) % gy, cta // (gx * gy))

    def tid(t):
        t = int(t)
        return (t % block[0], (t // block[0]) % block[1], t // (block[0] * block[1]))

    who = f"thread {tid(ctl[C.F_THREAD])} of CTA {cta3}"
    addr = int(ctl[C.F_ADDR]) & 0xFFFFFFFFFFFFFFFF
    if code == C.F_OOB:
        nbytes = int(ctl[C.F_AUX])
        return f"{where}: {who} accessed {nbytes} byte(s) at address {addr:#x}, {_outside(kern, pc, addr, nbytes, memory)}{text}"
    if code == C.F_MISALIGNED:
        return f"{where}: {who} accessed {int(ctl[C.F_AUX])} byte(s) at misaligned address {addr:#x}{text}"
    if code == C.F_BARRIER:
        return (
            f"{where}: barrier deadlock in CTA {cta3}: thread {tid(ctl[C.F_THREAD])} waits at this barrier but "
            f"{addr} thread(s) of the CTA (e.g. thread {tid(ctl[C.F_AUX])}) exited without reaching it{text}"
        )
    if code == C.F_TRAP:
        return f"{where}: {who} executed trap{text}"
    if code == C.F_WARPSYNC:
        if int(ctl[C.F_AUX]) < 0:
            return f"{where}: {who} executes a warp-synchronous instruction whose membermask {addr:#010x} does not include its own lane{text}"
        return (
            f"{where}: {who} executes a warp-synchronous instruction with membermask {addr:#010x}, but thread "
            f"{tid(ctl[C.F_AUX])} named in it is not executing it at the same time{text}"
        )
    if code == C.F_BRX:
        return f"{where}: {who} used index {addr} into a brx.idx jump table of {int(ctl[C.F_AUX])} labels{text}"
    if code == C.F_TEXTURE:
        return (f"{where}: {who} used texture handle {addr:#x}, which is none of the launch's {int(ctl[C.F_AUX])} "
                f"texture object(s) (an unbound .texref? bind it with symbols={{name: Texture(...)}}){text}")
    if code == C.F_CONST_WRITE:
        return f"{where}: {who} stored to constant memory at {addr:#x}{text}"
    return f"{where}: {who} faulted (code {code}){text}"


def _runaway_message(kern: Kernel, ctl: np.ndarray, grid3: tuple, pc: np.ndarray, st: np.ndarray, limit: str) -> str:
    """The one sentence of a launch stopped by a budget (an endless loop, most likely): the kernel, the
    thread instructions executed, the limit, and the block holding most of the running CTA's unfinished
    threads, with its PTX lines and the instruction they stand at."""
    cta = int(ctl[C.F_CTA] if ctl[C.F_CODE] == C.F_LIMIT else ctl[C.CTA])
    cta3 = (cta % grid3[0], (cta // grid3[0]) % grid3[1], cta // (grid3[0] * grid3[1]))
    running = np.flatnonzero(st != C.DONE)
    instrs = kern.func.instructions
    where, at = kern.func.path, f"CTA {cta3} was running"
    if len(running) and len(instrs):
        blocks = kern.block_of[np.minimum(pc[running], len(instrs))]
        b = int(np.bincount(blocks).argmax())
        start, end = (int(x) for x in kern.flat["block_start"][b : b + 2])
        lo, hi = instrs[start].line, instrs[max(start, end - 1)].line
        ins = instrs[min(int(pc[running[blocks == b][0]]), len(instrs) - 1)]
        label = kern.flat["label"][b]
        lines = f"PTX line {lo}" if hi == lo else f"PTX lines {lo}-{hi}"
        where = f"{kern.func.path}:{ins.line}"
        at = (f"{int(np.count_nonzero(blocks == b))} of the {len(running)} unfinished threads of CTA {cta3} were in "
              f"block {b} ({f'{label}, ' if label else ''}{lines}), at `{ins.text.strip()}`")
    return (f"{where}: kernel '{kern.name}' stopped after {int(ctl[C.INSTS])} thread instructions: {limit}; {at} "
            f"(an endless loop?)")


def _trace_budget(given: Optional[int], limit: int, avail: int) -> str:
    why = "" if given is not None else f", an eighth of the {size_text(avail)} of memory available; raise it with max_trace_bytes"
    return f"what it holds for its trace reached max_trace_bytes={limit} ({size_text(limit)}{why})"


def _insts_budget(given: Optional[int], limit: int, longest: int) -> str:
    why = "" if given is not None else (f" (the most a trace within max_trace_bytes can hold: 8 bytes per block event, "
                                        f"each at most the kernel's longest block of {longest} instructions; raise it "
                                        f"with max_insts)")
    return f"it reached max_insts={limit}{why}"


def _count(name: str, v) -> int:
    """A non-negative integer option (never a bool, a float or a string)."""
    if isinstance(v, bool) or not hasattr(v, "__index__") or int(v.__index__()) < 0:
        raise EmuError(f"{name} must be a non-negative integer, got {v!r}")
    return int(v.__index__())


def _launch_size(grid, block) -> tuple:
    grid3 = dim3("grid", grid, MAX_GRID)
    block3 = dim3("block", block, MAX_BLOCK)
    T = block3[0] * block3[1] * block3[2]
    if T > MAX_CTA_THREADS:
        raise EmuError(f"block {block3} has {T} threads; a CTA has at most {MAX_CTA_THREADS}")
    return grid3, block3


def _check_sizes(kern: Kernel, grid3, block3, shared_bytes: int, max_insts: int, in_memory: bool,
                 max_trace_bytes: int) -> None:
    """What the launch would need, against CUDA's limits and this machine, before anything is allocated."""
    lay = kern.program.layout
    T = block3[0] * block3[1] * block3[2]
    n_threads = grid3[0] * grid3[1] * grid3[2] * T
    if lay.shared_static + shared_bytes > MAX_SHARED_BYTES:
        raise EmuError(f"shared_bytes={shared_bytes} plus the kernel's {lay.shared_static} static bytes is more "
                       f"shared memory than a CUDA block can have ({MAX_SHARED_BYTES} bytes)")
    if lay.local_size > MAX_LOCAL_BYTES:
        raise EmuError(f"the kernel needs {lay.local_size} bytes of local memory per thread; CUDA allows {MAX_LOCAL_BYTES}")
    entry = int(kern.flat["block_start"][1] - kern.flat["block_start"][0])
    if entry and n_threads * entry > max_insts:
        raise EmuError(f"grid {grid3} x block {block3} runs {n_threads} threads, each executing at least the "
                       f"{entry} instruction(s) of the entry block: more than max_insts={max_insts} thread "
                       f"instructions (raise max_insts to run it)")
    if in_memory:
        least = n_threads * (8 + 2 * path_dtype(len(kern.flat["block_start"]) - 1).itemsize)
        if least > max_trace_bytes:
            raise EmuError(f"an in-memory trace of {n_threads} threads needs at least {gib(least)}, more than "
                           f"max_trace_bytes={max_trace_bytes} ({gib(max_trace_bytes)}); stream it with trace_path= "
                           f"or pass trace=False")


_SPACE_NAMES = {codes.S_SHARED: "shared", codes.S_LOCAL: "local", codes.S_CONST: "constant", codes.S_PARAM: "parameter"}


def _outside(kern: Kernel, pc: int, addr: int, nbytes: int, memory: DeviceMemory) -> str:
    """Where an out-of-bounds access missed: the nearest global buffer, or the bounds of its space."""
    space = int(kern.program.space[pc]) if 0 <= pc < kern.program.n_instrs else codes.S_GLOBAL
    if space == codes.S_GENERIC:
        window = addr >> codes.WINDOW_SHIFT
        space = {0: codes.S_GLOBAL, 1: codes.S_SHARED, 2: codes.S_LOCAL, 3: codes.S_CONST, 4: codes.S_PARAM}.get(window)
        if space is None:
            return "a generic address in no state space"
        addr -= codes.WINDOW.get(space, 0)
    if space == codes.S_GLOBAL:
        return f"outside every buffer; {memory.nearest_buffer(addr, nbytes)}"
    size = int(memory.rgn[{codes.S_CONST: C.RG_CONST_N, codes.S_PARAM: C.RG_PARAM_N, codes.S_SHARED: C.RG_SHARED_N,
                           codes.S_LOCAL: C.RG_LOCAL_N}[space]])
    return f"outside the {size}-byte {_SPACE_NAMES[space]} memory (offset {addr:#x})"


def launch(
    ptx,
    kernel,
    grid,
    block,
    args,
    shared_bytes: int = 0,
    trace: bool = True,
    trace_path=None,
    max_insts: Optional[int] = None,
    record_mem: bool = True,
    progress: Optional[Callable[[int, int], None]] = None,
    batch_threads: int = BATCH_THREADS,
    attrs: Optional[dict] = None,
    ev_soft_limit: int = EV_SOFT_LIMIT,
    symbols: Optional[dict] = None,
    max_trace_bytes: Optional[int] = None,
) -> Launch:
    """Emulate ``kernel`` of ``ptx`` on ``grid`` x ``block`` threads with ``args``.

    ``ptx``: a path, PTX text, a parsed :class:`Module` or a :class:`Kernel` from
    :func:`load_kernel`; ``kernel``: mangled name or unique substring. ``args`` follow the
    kernel's ``.param`` list: numpy arrays are device buffers (copied in, and their contents copied
    back in place after the launch; arrays that share memory are one allocation, each argument a
    pointer into it), :class:`Texture` objects are texture objects, numpy scalars are by-value
    parameters whose dtype must match the parameter type. ``symbols`` maps names of the module's
    ``__constant__``/``__device__`` variables to arrays written into them before the launch and
    read back after (and ``.texref`` names to textures). ``trace_path`` streams the trace to an HDF5 file CTA batch by CTA batch
    (nothing is written unless the launch completes); otherwise, with ``trace=True``, the trace is
    built in memory. The trace records the address of every memory access (/mem: one entry per
    memory instruction on each thread's path, DESIGN §3); ``record_mem=False`` leaves /mem out.
    ``progress(done_threads, total_threads)`` is called after every batch.

    Sizes are checked before anything is allocated: CUDA's limits (grid, block, shared and local
    memory) and this machine's memory. A running launch stops with one sentence (the limit, the
    kernel, the instructions executed, the block its threads are in) when what it holds for its
    trace -- the running batch's event logs and the in-memory trace -- would outgrow
    ``max_trace_bytes`` (default: an eighth of the memory available when it starts), or after
    ``max_insts`` thread instructions (default: the most a trace within ``max_trace_bytes`` can
    hold), whichever comes first: an endless loop never exhausts memory.
    """
    if isinstance(ptx, Kernel):
        kern = ptx
        if kernel is not None and not (isinstance(kernel, str) and kernel in kern.name):
            raise EmuError(f"launch was given the loaded kernel '{kern.name}' but kernel={kernel!r} names another; "
                           f"pass kernel=None with a loaded kernel")
    else:
        kern = load_kernel(ptx, kernel)
    grid3, block3 = _launch_size(grid, block)
    T = block3[0] * block3[1] * block3[2]
    if trace:
        attrs = {**(attrs or {}), "syncwarp": syncwarp_blocks(kern)}
    args = list(args)
    _check_args(kern.func, args)
    n_ctas = grid3[0] * grid3[1] * grid3[2]
    n_threads = n_ctas * T
    avail = available_bytes() if max_trace_bytes is None else 0
    budget = avail // TRACE_SHARE if max_trace_bytes is None else _count("max_trace_bytes", max_trace_bytes)
    longest = int(np.diff(kern.flat["block_start"]).max(initial=1))
    insts_limit = default_max_insts(budget, longest) if max_insts is None else _count("max_insts", max_insts)
    _check_sizes(kern, grid3, block3, _count("shared_bytes", shared_bytes), insts_limit, trace and trace_path is None,
                 budget)
    prog = kern.program
    memory = DeviceMemory(kern, args, T, shared_bytes, symbols)
    RS = prog.n_regs + 1
    regs = np.zeros(T * RS, np.uint64)
    sregs = np.zeros(T * codes.N_SREGS, np.uint64)
    pc = np.zeros(T, np.int64)
    st = np.zeros(T, np.int8)
    lanes = np.zeros(32, np.int64)
    act = np.zeros(32, np.uint8)
    vals = np.zeros(32, np.uint64)
    barv = np.zeros(T, np.uint8)
    ctl = np.zeros(C.CTL_SIZE, np.int64)
    ctl[C.MAX_INSTS] = insts_limit
    ctl[C.EV_SOFT] = int(ev_soft_limit)
    ctas_per_batch = max(1, int(batch_threads) // T)
    # the logs start at most a quarter of the budget each, and grow (doubling) within it
    ev_cap = min(max(1024, ctas_per_batch * T * 8), max(1, budget // (4 * LOG_BYTES_PER_EVENT)))
    ev_t = np.empty(ev_cap, np.int32)
    ev_b = np.empty(ev_cap, np.int32)
    mev_cap = 1
    if record_mem and kern.blk_mem.any():
        mev_cap = min(max(1024, ctas_per_batch * T * 4), max(1, budget // (4 * MEM_LOG_BYTES_PER_EVENT)))
    mev_t = np.empty(mev_cap, np.int32)
    mev_a = np.empty(mev_cap, np.uint64)
    flat = _launch_facts(kern, memory)
    pdt = path_dtype(len(flat["block_start"]) - 1)
    writer = None
    in_memory = trace and trace_path is None
    paths, ptrs, mems, mptrs = [], [], [], []
    held = 0  # bytes of the in-memory trace so far
    over_budget = _trace_budget(max_trace_bytes, budget, avail)
    if trace_path is not None:
        writer = TraceWriter(
            trace_path, kernel=kern.name, grid=grid3, block=block3, cfg=flat,
            source_sha256=kern.source_sha256, attrs=attrs, with_mem=record_mem, mem_format=MEM_FORMAT,
        )
    announce_compile(M.run, "the PTX emulator", EMULATOR_COLD_COMPILE_SECONDS)
    try:
        first = 0
        while first < n_ctas:
            last = min(n_ctas, first + ctas_per_batch)
            ctl[C.CTA], ctl[C.CTA_END], ctl[C.BATCH_CTA0], ctl[C.PHASE] = first, last, first, 0
            ctl[C.NEV] = 0
            ctl[C.NMEV] = 0
            while True:
                status = M.run(
                    prog.op, prog.fast, prog.ty, prog.ty2, prog.md, prog.sub, prog.okind, prog.oval, prog.ooff, prog.space,
                    prog.vec, prog.amask, prog.mem_rec, prog.gpred, prog.gneg, prog.target, prog.jt_ptr,
                    prog.jt_idx, kern.is_leader, kern.block_of, kern.blk_mem, prog.n_regs,
                    np.array(grid3, np.int64), np.array(block3, np.int64), int(shared_bytes),
                    memory.mem, memory.gbuf_lo, memory.gbuf_hi, memory.gbuf_off, memory.rgn, memory.texd,
                    regs, sregs, pc, st, lanes, act, vals, barv,
                    ctl, ev_t, ev_b, bool(record_mem), mev_t, mev_a,
                )
                if status == C.ST_DONE or status == C.ST_FLUSH:
                    break
                if status == C.ST_EV_FULL or status == C.ST_MEV_FULL:
                    # the trace grows: the log that is full doubles, within what the budget leaves it
                    grow_ev = status == C.ST_EV_FULL
                    other = MEM_LOG_BYTES_PER_EVENT * len(mev_t) if grow_ev else LOG_BYTES_PER_EVENT * len(ev_t)
                    size = LOG_BYTES_PER_EVENT if grow_ev else MEM_LOG_BYTES_PER_EVENT
                    cap = len(ev_t) if grow_ev else len(mev_t)
                    cap = min(max(2 * cap, 1024), (budget - held - other) // size)
                    if cap <= (len(ev_t) if grow_ev else len(mev_t)):
                        raise EmuError(_runaway_message(kern, ctl, grid3, pc, st, over_budget))
                    if grow_ev:
                        ev_t = _grow(ev_t, int(ctl[C.NEV]), cap)
                        ev_b = _grow(ev_b, int(ctl[C.NEV]), cap)
                    else:
                        mev_t = _grow(mev_t, int(ctl[C.NMEV]), cap)
                        mev_a = _grow(mev_a, int(ctl[C.NMEV]), cap)
                elif status == C.ST_FAULT and ctl[C.F_CODE] == C.F_LIMIT:
                    raise EmuError(_runaway_message(kern, ctl, grid3, pc, st, _insts_budget(max_insts, insts_limit,
                                                                                             longest)))
                else:
                    raise EmuError(_fault_message(kern, ctl, grid3, block3, memory))
            last = int(ctl[C.CTA])  # == the batch end, or earlier after ST_FLUSH
            bt = (last - first) * T
            if writer is not None or in_memory:
                nev = int(ctl[C.NEV])
                path = np.empty(nev, np.int32)
                ptr = M.events_to_csr(ev_t, ev_b, nev, bt, path)
                path = path.astype(pdt)
                mptr = maddr = None
                if record_mem:
                    nm = int(ctl[C.NMEV])
                    maddr = np.empty(nm, np.uint64)
                    mptr = M.events_to_csr(mev_t, mev_a, nm, bt, maddr)
                if writer is not None:
                    writer.append(ptr, path, mptr, maddr)
                else:
                    paths.append(path)
                    ptrs.append(ptr)
                    held += path.nbytes + ptr.nbytes
                    if record_mem:
                        mems.append(maddr)
                        mptrs.append(mptr)
                        held += maddr.nbytes + mptr.nbytes
                    if held > budget:  # the logs were within the budget, but their CSR adds the per-thread offsets
                        raise EmuError(f"the in-memory trace of kernel '{kern.name}' outgrew max_trace_bytes={budget} "
                                       f"({gib(budget)}) after {last * T} of {n_threads} threads; stream it to a file "
                                       f"with trace_path=")
            if progress is not None:
                progress(last * T, n_threads)
            first = last
    except BaseException:
        if writer is not None:
            writer.abort()
        raise
    memory.copy_back()
    result = Launch(kern.name, grid3, block3, int(ctl[C.INSTS]), dict(memory.arg_addr))
    if writer is not None:
        result.trace_path = writer.close()
    elif in_memory:
        result._trace = _build_trace(kern, flat, grid3, block3, paths, ptrs, mems if record_mem else None, mptrs, attrs)
    return result


def _grow(a: np.ndarray, used: int, cap: int) -> np.ndarray:
    out = np.empty(cap, a.dtype)
    out[:used] = a[:used]
    return out


def _concat_csr(ptrs, values, dtype):
    total = sum(len(p) - 1 for p in ptrs)
    ptr = np.zeros(total + 1, np.int64)
    k = 0
    base = 0
    for p in ptrs:
        m = len(p) - 1
        ptr[k + 1 : k + 1 + m] = p[1:] + base
        base += int(p[-1])
        k += m
    vals = np.concatenate(values).astype(dtype, copy=False) if values else np.zeros(0, dtype)
    return ptr, vals


def _launch_facts(kern: Kernel, memory: DeviceMemory) -> dict:
    """The kernel's flat CFG/instruction arrays for this launch's trace: a texture fetch accesses one
    texel, whose size depends on the textures passed (the widest of them)."""
    is_tex = kern.program.op == codes.OP_TEX
    if not is_tex.any() or not memory.texel_bytes:
        return kern.flat
    flat = dict(kern.flat)
    flat["mem_bytes"] = np.where(is_tex, memory.texel_bytes, flat["mem_bytes"]).astype(np.uint8)
    return flat


def syncwarp_blocks(kern: Kernel) -> np.ndarray:
    """Where the compiler puts ``syncwarp`` for the stackless mechanism (Lee et al. 2013, §5.2): the
    convergence + variance analysis of the kernel (block ids of the trace's CFG). Stored in every
    trace this emulator writes, so the timing model never needs the PTX (docs/trace.md)."""
    return np.asarray(sorted(analyze_convergence(kern.func).syncwarp_blocks), np.int64)


def _build_trace(kern: Kernel, flat: dict, grid, block, paths, ptrs, mems, mptrs, attrs) -> Trace:
    pdt = path_dtype(len(flat["block_start"]) - 1)
    path_ptr, path = _concat_csr(ptrs, paths, pdt)
    tr = Trace(
        kernel=kern.name, grid=grid, block=block, source_sha256=kern.source_sha256,
        block_start=flat["block_start"], succ_ptr=flat["succ_ptr"], succ_idx=flat["succ_idx"], ipdom=flat["ipdom"],
        label=list(flat["label"]), has_barrier=flat["has_barrier"], op_class=flat["op_class"],
        dst_reg=flat["dst_reg"], src_reg=flat["src_reg"], text=list(flat["text"]),
        mem_bytes=flat["mem_bytes"], mem_kind=flat["mem_kind"],
        path_ptr=path_ptr, path=path, attrs=dict(attrs or {}),
    )
    if mems is not None:
        tr.mem_ptr, tr.mem_addr = _concat_csr(mptrs, mems, np.uint64)
        tr.mem_format = MEM_FORMAT
    return tr
