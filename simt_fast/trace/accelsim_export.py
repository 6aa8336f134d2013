"""Accel-Sim traces out: a simt-fast trace -> an Accel-Sim trace directory (docs/trace.md, *Exporting*).

:func:`export` writes ``kernelslist.g`` and ``kernel-1.traceg`` (or ``.traceg.xz``) in the format
Accel-Sim's trace parser reads and its NVBit tracer writes (tracer version 4): header lines
(kernel name, grid, block, shared memory, registers, ``-binary version``, the shared and local
window bases), then per CTA ``#BEGIN_TB``, ``thread block = x,y,z``, per warp ``warp = n``,
``insts = n`` and one line per warp instruction::

    PC mask n_dst [R..] OPCODE n_src [R.. ...] mem_width [mode addresses...] immediate

The warp instructions are what a single-path IPDOM warp issues for the trace's per-thread paths
(:mod:`simt_fast.trace.ipdom_walk`, the ``sps`` core's order), each with the mask of the lanes that
executed it with a true guard as far as the trace knows the guard
(:mod:`simt_fast.trace.accelsim_export_lines`): so ``simt-fast import-accelsim`` of the directory
recovers the same per-thread paths and ``/mem`` entries, and Accel-Sim's ``gpu_sim_insn`` is the sum
of the masks' popcounts. Opcodes come from :mod:`simt_fast.trace.ptx_to_sass` (an imported trace
keeps its own), registers from :mod:`simt_fast.trace.register_allocation`, addresses from ``/mem``
(shared and local offsets moved into the generic windows the header names). A trace without
per-instruction addresses is refused. The text is written CTA range by CTA range, so memory stays
bounded whatever the launch's size.
"""

from __future__ import annotations

import lzma
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional

import numpy as np

from .. import __version__
from ..ir.model import OpClass
from . import sass
from .accelsim_export_lines import DIRECT, EXIT, INDIRECT, MEMORY, MODE_DELTA, MODE_STRIDE, PLAIN, warp_lines
from .ipdom_walk import cta_chunks, issue_stream
from .model import NO_ACCESS, Trace, TraceError
from .ptx_to_sass import BINARY_VERSIONS, sass_opcode, split_ptx
from .register_allocation import N_PHYSICAL, allocate
from .validate import require_valid

WARP_SIZE = 32  # Accel-Sim's traces are per 32-thread warp
TRACER_VERSION = 4
DEFAULT_BINARY_VERSION = 70  # V100
# Generic windows of shared and local memory the header names: above every address the emulator hands
# out to global memory (from 2**40), below its other generic windows (k << 56); shared below local, as
# Accel-Sim's generic-access rule expects (shmem base <= shared < local base)
SHMEM_BASE = 0x0000_7F00_0000_0000
LOCAL_BASE = 0x0000_7F01_0000_0000
KERNEL_FILE = "kernel-1.traceg"
FORMAT_LINE = ("#traces format = [line_num] PC mask dest_num [reg_dests] opcode src_num [reg_srcs] mem_width "
               "[adrrescompress?] [mem_addresses] immediate")
STEPS_PER_CHUNK = 1 << 18  # path steps walked at a time: bounds the issue records and lines in memory
_SASS_TEXT = re.compile(r"^/\*([0-9a-fA-F]+)\*/ (\S+)")
# families whose NVBit lines carry no address (the tracer reports addresses of memory-reference operands
# only: LDC/ULDC read a constant-bank operand, textures and surfaces a descriptor); an imported trace
# keeps them that way
ADDRESSLESS = frozenset({"LDC", "ULDC", "TEX", "TEXS", "TLD", "TLDS", "TLD4", "TLD4S", "TMML", "TXD", "SULD", "SUST",
                         "SUATOM", "SURED"})
Progress = Optional[Callable[[int, int], None]]  # (CTAs written, CTAs)


@dataclass
class ExportSummary:
    """What one export wrote and the counts that tie it to Accel-Sim's and simt-fast's."""

    kernel: str
    source: str
    out: str  # the kernel trace file
    grid: tuple
    block: tuple
    binary_version: int
    warp_lines: int  # warp-instruction lines written
    mask_thread_insts: int  # sum of the lines' mask popcounts: what Accel-Sim's gpu_sim_insn counts
    ipdom_thread_insts: int  # thread instructions of the IPDOM issue records (= trace.total_thread_insts())
    guard_false: int  # thread instructions the trace knows ran with a false guard: NO_ACCESS entries and
    #                   threads falling through a branch or exit
    registers: int  # -nregs: physical registers the allocation used
    registers_needed: int  # colours the allocation needed; > 255 means registers share numbers
    shmem_bytes: int  # -shmem: the highest shared offset + width the accesses reach
    sass_source: bool  # the trace came from SASS (an Accel-Sim import): its own PCs and opcodes
    unknown_ops: list = field(default_factory=list)  # PTX operations exported by their class's default

    @property
    def registers_folded(self) -> bool:
        return self.registers_needed > N_PHYSICAL


@dataclass
class _Program:
    """Everything per instruction and per block a line needs."""

    prefix: list  # per instruction: "PC " (hex, as the tracer)
    middle: list  # per instruction: "n_dst [R..] OPCODE n_src [R..] "
    width: list  # per instruction: mem_width field text (None: a memory line without addresses)
    imm: list  # per instruction: the immediate field text (a direct branch's target PC, else "0 ")
    kind: np.ndarray
    addr_base: np.ndarray
    fall: np.ndarray
    registers: int
    registers_needed: int
    unknown: list
    sass_source: bool


def _sass_texts(trace: Trace):
    """(PCs, opcodes) when every instruction text is an imported SASS line (``/*0040*/ LDG.E R2, R4``)."""
    if not trace.n_instrs:
        return None
    found = [_SASS_TEXT.match(t) for t in trace.text]
    if not all(found):
        return None
    return [int(m.group(1), 16) for m in found], [m.group(2) for m in found]


def _program(trace: Trace, binary_version: Optional[int], name: str) -> tuple:
    """(the per-instruction parts of every line, the binary version they are written for)."""
    imported = _sass_texts(trace)
    own = int(trace.attrs.get("binary_version") or 0) if imported is not None else 0
    if own:  # imported SASS keeps its opcodes, hence its binary version
        if binary_version not in (None, own):
            raise TraceError(f"{name} holds SASS of binary version {own}; its opcodes cannot be renamed for "
                             f"binary version {binary_version} (omit --binary-version)")
        binary_version = own
    else:
        binary_version = DEFAULT_BINARY_VERSION if binary_version is None else int(binary_version)
        if binary_version not in BINARY_VERSIONS:
            raise TraceError(f"binary version {binary_version} has no opcode table the export knows; use one of "
                             + ", ".join(f"{v} ({n})" for v, n in BINARY_VERSIONS.items()))
    n = trace.n_instrs
    op_class = np.asarray(trace.op_class)
    mem_kind = np.zeros(n, np.int64) if trace.mem_kind is None else np.asarray(trace.mem_kind, np.int64)
    mem_bytes = np.full(n, 4, np.int64) if trace.mem_bytes is None else np.asarray(trace.mem_bytes, np.int64)
    dst_in, src_in = np.asarray(trace.dst_reg), np.asarray(trace.src_reg).reshape(-1, 3)
    highest = int(max(dst_in.max(initial=-1), src_in.max(initial=-1)))
    if imported is not None and highest < N_PHYSICAL:  # SASS registers R0..R254: keep their numbers
        dst, src, used, needed = dst_in, src_in, highest + 1, highest + 1
    else:
        alloc = allocate(trace)
        dst, src, used, needed = alloc.dst_reg, alloc.src_reg, alloc.n_registers, alloc.needed
    pcs = imported[0] if imported is not None else [16 * i for i in range(n)]
    is_mem = np.isin(op_class, [int(c) for c in sass.MEMORY_CLASSES])
    kind = np.full(n, PLAIN, np.int64)
    prefix, middle, width, unknown = [], [], [], set()
    for i in range(n):
        if imported is not None:
            opcode = imported[1][i]
        else:
            opcode, known = sass_opcode(trace.text[i], int(op_class[i]), int(mem_kind[i]), int(mem_bytes[i]),
                                        dst_in[i] >= 0)
            if not known:
                base, modifiers, _ = split_ptx(trace.text[i])
                unknown.add(".".join([base, *modifiers]))
        srcs = list(dict.fromkeys(int(r) for r in src[i] if r >= 0))  # distinct, left to right
        # a PTX branch's register is its guard predicate: bra is direct, brx indirect (an imported
        # branch keeps the importer's reading of its line)
        flow = sass.classify(opcode, len(srcs) if imported is not None else 0).flow
        if is_mem[i]:
            kind[i] = MEMORY
        elif op_class[i] == OpClass.EXIT:
            kind[i] = EXIT
        elif op_class[i] == OpClass.BRANCH:
            kind[i] = DIRECT if flow == sass.FLOW_DIRECT else INDIRECT
        prefix.append(f"{pcs[i]:04x} ")
        middle.append((f"1 R{int(dst[i])} " if dst[i] >= 0 else "0 ") + f"{opcode} {len(srcs)} "
                      + "".join(f"R{r} " for r in srcs))
        # the width field: the bytes one thread accesses (an imported line's own field; a prefetch hint, 0
        # bytes, is written as a 4-byte access); None: an imported family whose lines carry no address
        if imported is not None and sass.family(opcode) in ADDRESSLESS:
            width.append(None)
        else:
            width.append(f"{int(mem_bytes[i]) or 4} ")
    bases = {OpClass.MEM_SHARED: SHMEM_BASE, OpClass.MEM_LOCAL: LOCAL_BASE}
    addr_base = np.array([bases.get(OpClass(int(c)), 0) for c in op_class], np.uint64)
    nb = trace.n_blocks
    fall = np.arange(1, nb + 1, dtype=np.int64)
    fall[nb - 2:] = -1  # the last real block falls into nothing (the exit has no instructions)
    imm = [f"{v} " for v in branch_immediates(trace, kind, pcs, fall)]
    prog = _Program(prefix, middle, width, imm, kind, addr_base, fall, used, needed, sorted(unknown),
                    imported is not None)
    return prog, binary_version


def branch_immediates(trace: Trace, kind: np.ndarray, pcs: list, fall: np.ndarray) -> list:
    """Every instruction's immediate: for the direct branch that ends a block, the PC of the block it
    jumps to (its successor other than the next block in code order and the exit), as the NVBit
    tracer writes a BRA's target operand; 0 for every other instruction and for a branch no thread
    took. The importer reads the target from it (docs/trace.md, *Thread paths*)."""
    imm = [0] * trace.n_instrs
    starts = np.asarray(trace.block_start, np.int64)
    succ_ptr, succ = np.asarray(trace.succ_ptr, np.int64), np.asarray(trace.succ_idx, np.int64)
    for b in range(trace.n_blocks - 1):
        last = starts[b + 1] - 1
        if last < starts[b] or kind[last] != DIRECT:
            continue
        taken = [t for t in succ[succ_ptr[b]:succ_ptr[b + 1]] if t != fall[b] and t != trace.exit]
        if taken:
            imm[last] = pcs[starts[taken[0]]]
    return imm


def _guard_false(trace: Trace, prog: _Program) -> int:
    """Thread instructions the trace shows with a false guard, counted from its paths and /mem."""
    starts = np.asarray(trace.block_start, np.int64)
    nb = trace.n_blocks
    ends_in_jump = np.zeros(nb, np.bool_)
    sizes = np.diff(starts)
    real = np.flatnonzero(sizes > 0)
    ends_in_jump[real] = np.isin(prog.kind[starts[real + 1] - 1], [DIRECT, EXIT])
    path = np.asarray(trace.path, np.int64)
    step_from, step_to = path[:-1], path[1:]
    within = np.ones(len(step_from), np.bool_)
    ends = np.asarray(trace.path_ptr, np.int64)[1:-1] - 1
    within[ends[ends < len(within)]] = False  # a thread's last step does not lead into the next thread
    falls = within & ends_in_jump[step_from] & (step_to == prog.fall[step_from])
    return int(falls.sum()) + int((np.asarray(trace.mem_addr) == NO_ACCESS).sum())


def _shmem_bytes(trace: Trace) -> int:
    """The highest shared-memory offset + width any access reaches (what ``-shmem`` can know)."""
    op_class = np.asarray(trace.op_class)
    is_mem = np.isin(op_class, [int(c) for c in sass.MEMORY_CLASSES])
    if not (op_class == OpClass.MEM_SHARED).any():
        return 0
    # the /mem entries follow the paths: entry k of step s is the k-th memory instruction of its block
    block_start = np.asarray(trace.block_start, np.int64)
    before = np.concatenate(([0], np.cumsum(is_mem)))
    per_step = (before[block_start[1:]] - before[block_start[:-1]])[np.asarray(trace.path, np.int64)]
    first = np.repeat(before[block_start[:-1]][np.asarray(trace.path, np.int64)] - np.cumsum(per_step) + per_step,
                      per_step)
    instr = np.flatnonzero(is_mem)[first + np.arange(len(first))]
    addr = np.asarray(trace.mem_addr)
    shared = (op_class[instr] == OpClass.MEM_SHARED) & (addr != NO_ACCESS)
    if not shared.any():
        return 0
    width = np.full(len(op_class), 4, np.int64) if trace.mem_bytes is None else np.asarray(trace.mem_bytes, np.int64)
    return int((addr[shared].astype(np.int64) + width[instr[shared]]).max())


def header(trace: Trace, binary_version: int, registers: int, shmem_bytes: int) -> str:
    g, b = tuple(int(v) for v in trace.grid), tuple(int(v) for v in trace.block)
    lines = [f"-kernel name = {trace.kernel}", "-kernel id = 1", "-grid dim = ({},{},{})".format(*g),
             "-block dim = ({},{},{})".format(*b), f"-shmem = {shmem_bytes}", f"-nregs = {registers}",
             f"-binary version = {binary_version}", "-cuda stream id = 0", f"-shmem base_addr = {SHMEM_BASE:#018x}",
             f"-local mem base_addr = {LOCAL_BASE:#018x}", f"-simt-fast version = {__version__}",
             f"-accelsim tracer version = {TRACER_VERSION}", "-enable lineinfo = 0", "", FORMAT_LINE, ""]
    return "\n".join(lines) + "\n"


def _cta_texts(trace: Trace, prog: _Program, lines, cta_start: int, cta_stop: int):
    """The text of each CTA of a range, one string per CTA."""
    gx, gy = int(trace.grid[0]), int(trace.grid[1])
    wpc = -(-trace.threads_per_cta // WARP_SIZE)
    prefix, middle, width, imm = prog.prefix, prog.middle, prog.width, prog.imm
    instr, mask, mode = lines.instr.tolist(), lines.mask.tolist(), lines.mode.tolist()
    stride, addr_ptr, addr = lines.stride.tolist(), lines.addr_ptr.tolist(), lines.addr.tolist()
    warp_ptr = lines.warp_ptr.tolist()
    w = 0
    for cta in range(cta_start, cta_stop):
        out = ["\n#BEGIN_TB\n\nthread block = {},{},{}\n".format(cta % gx, (cta // gx) % gy, cta // (gx * gy))]
        for wi in range(wpc):
            a, b = warp_ptr[w], warp_ptr[w + 1]
            out.append(f"\nwarp = {wi}\ninsts = {b - a}\n")
            for k in range(a, b):
                i = instr[k]
                m = mode[k]
                if m == 0 or width[i] is None:
                    out.append(f"{prefix[i]}{mask[k]:08x} {middle[i]}0 {imm[i]}\n")
                    continue
                p, q = addr_ptr[k], addr_ptr[k + 1]
                if m == MODE_STRIDE:
                    where = f"1 {addr[p] if q > p else 0:#x} {stride[k]} "
                else:
                    values = addr[p:q]
                    where = f"2 {values[0]:#x} " + "".join(f"{(y - x + (1 << 63)) % (1 << 64) - (1 << 63)} "
                                                          for x, y in zip(values, values[1:]))
                out.append(f"{prefix[i]}{mask[k]:08x} {middle[i]}{width[i]}{where}{imm[i]}\n")
            w += 1
        out.append("\n#END_TB\n")
        yield "".join(out)


def export(trace, out_dir, *, binary_version: Optional[int] = None, compress: bool = False,
           progress: Progress = None, name: Optional[str] = None) -> ExportSummary:
    """Write ``trace`` (a :class:`Trace` or a trace file) as an Accel-Sim trace directory ``out_dir``
    (``kernelslist.g`` + ``kernel-1.traceg``, ``.traceg.xz`` with ``compress``) for the SASS of
    ``binary_version`` (default 70, V100; an imported trace keeps its own). ``name`` names the trace in
    messages (default: its file, or its kernel). Returns the summary."""
    name = name or (f"trace of kernel '{trace.kernel}'" if isinstance(trace, Trace) else str(trace))
    t = trace if isinstance(trace, Trace) else Trace.load(trace)
    require_valid(t, name=name)
    if not t.has_mem:
        raise TraceError(f"{name} has no per-instruction memory addresses (/mem), which an Accel-Sim trace lists "
                         f"for every memory instruction; trace it again with addresses (simt-fast trace records "
                         f"them unless --no-mem)")
    prog, binary_version = _program(t, binary_version, name)
    out_dir = Path(out_dir)
    if out_dir.exists() and not out_dir.is_dir():
        raise TraceError(f"{out_dir} exists and is not a directory")
    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / (KERNEL_FILE + (".xz" if compress else ""))
    tmp = out_dir / f".{target.name}.{os.getpid()}.tmp"
    shmem = _shmem_bytes(t)
    n_lines = mask_insts = ipdom_insts = 0
    sizes = t.block_sizes()
    try:
        with (lzma.open(tmp, "wt", preset=1) if compress else open(tmp, "w")) as fh:
            fh.write(header(t, binary_version, prog.registers, shmem))
            done = 0
            for a, b in cta_chunks(t, STEPS_PER_CHUNK):
                stream = issue_stream(t, WARP_SIZE, a, b)
                lines = warp_lines(stream, t, prog.kind, prog.addr_base, prog.fall)
                ipdom_insts += int((np.bitwise_count(stream.mask).astype(np.int64) * sizes[stream.block]).sum())
                n_lines += len(lines.instr)
                mask_insts += int(np.bitwise_count(lines.mask).sum())
                for text in _cta_texts(t, prog, lines, a, b):
                    fh.write(text)
                    done += 1
                    if progress is not None:
                        progress(done, t.n_ctas)
        os.replace(tmp, target)
        other = out_dir / (KERNEL_FILE if compress else KERNEL_FILE + ".xz")
        other.unlink(missing_ok=True)  # a previous export's other variant: kernelslist.g names this one
        (out_dir / "kernelslist.g").write_text(target.name + "\n")
    except OSError as e:
        raise TraceError(f"cannot write {target}: {(e.strerror or str(e)).lower()}") from None
    finally:
        if tmp.exists():
            tmp.unlink()
    return ExportSummary(
        kernel=t.kernel, source=name, out=str(target), grid=tuple(int(v) for v in t.grid),
        block=tuple(int(v) for v in t.block), binary_version=binary_version, warp_lines=n_lines,
        mask_thread_insts=mask_insts, ipdom_thread_insts=ipdom_insts, guard_false=_guard_false(t, prog),
        registers=prog.registers, registers_needed=prog.registers_needed, shmem_bytes=shmem,
        sass_source=prog.sass_source, unknown_ops=prog.unknown,
    )
