"""Accel-Sim traces in: one kernel's ``.traceg`` (NVBit tracer, versions 3 and later) -> a Trace.

The Accel-Sim tracer writes, per kernel, a text file of header lines (``-kernel name = ...``,
``-grid dim = (x,y,z)``, ``-block dim = ...``, ``-accelsim tracer version = 3``, ...) and then,
per thread block, ``#BEGIN_TB`` / ``thread block = x,y,z`` / per warp ``warp = n`` and
``insts = n`` followed by one line per warp instruction::

    [line_num] PC mask n_dst dst... OPCODE n_src src... mem_width [mode addresses...] [immediate]

with the addresses of a memory instruction in one of three modes: 0 one hex address per thread
in the mask, 1 ``base stride`` (thread k of the mask at base + k*stride), 2 ``base delta...``
(each thread's address minus the previous one's). ``kernelslist.g`` lists a run's kernels;
the files are plain (``kernel-1.traceg``) or xz-compressed (``kernel-1.traceg.xz``).

* :func:`load` — one kernel trace file -> :class:`~simt_fast.trace.Trace` in memory;
* :func:`convert` — the same, streamed into a trace file (HDF5) with :class:`TraceWriter`;
* :func:`kernel_files` / :func:`import_directory` — every kernel of a ``kernelslist.g``.

The stages: :mod:`simt_fast.trace.accelsim_scan` reads the text chunk by chunk into flat arrays
(a numba scanner; the lines it does not take, and every error, go through the plain-Python reader
of :mod:`simt_fast.trace.accelsim_text`); :mod:`simt_fast.trace.accelsim_paths` recovers the
thread paths and the CFG and writes each thread's path and /mem entries, CTA batch by CTA batch
(numba); opcodes and registers come from :mod:`simt_fast.trace.sass`. docs/trace.md describes
the rules; :mod:`simt_fast.trace.accelsim_reference` is the same import in plain Python, which
the differential tests compare with this one. Every malformed line is a :class:`TraceError`
naming the file and line.
"""

from __future__ import annotations

import hashlib
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator, Optional

import numpy as np

from ..ir.model import OpClass
from . import accelsim_paths as paths
from .accelsim_export import export  # noqa: F401  (traces out: simt_fast.trace.accelsim.export)
from . import mem_rows, sass
from .accelsim_scan import scan_kernel
from .accelsim_text import (DONE, FIRST_NO, GROUP0, LANES, LAST_NO, ROW0, SLOT0, LineReader, LineStore, Progress,
                            ScannedKernel, cta_text, text_lines)
from .accelsim_text import Header, Instruction, MIN_TRACER_VERSION, READ_CHUNK  # noqa: F401 (public here before)
from .io import TraceWriter
from .model import MEM_FORMAT, MEM_NONE, Trace, TraceError

TRACE_SUFFIXES = (".traceg", ".traceg.xz")
WARP = LANES
# An imported trace's /mem is often several times the text (a mode-1 line of 30 bytes is 32 addresses):
# gzip level 2 writes it in about half the time of the emulator's level 4, for files ~13% larger
# (measured on a replicated 200-CTA matrixMul trace: 0.92 s vs 1.75 s for 447 MB of /mem, 8.7 vs 7.7 MB)
GZIP_LEVEL = 2
BATCH_ROWS = 1 << 16  # trace lines per batch of CTAs written at once (some 10 MB of paths and /mem)
# threads recovering the warps' paths (parts of the file, merged after): the host's cores, up to 4
RECOVER_WORKERS = min(4, os.cpu_count() or 1)


@dataclass
class ImportSummary:
    """What the import of one kernel found (printed by `simt-fast import-accelsim`)."""

    kernel: str
    source: str
    out: Optional[str]
    grid: tuple
    block: tuple
    warp_lines: int  # warp-instruction lines in the file
    mask_thread_insts: int  # sum of the masks' popcounts: Accel-Sim's gpu_sim_insn
    thread_insts: int  # sum over threads of the instructions on their paths (Trace.total_thread_insts)
    predicated_off: int  # thread instructions executed with a false guard: the difference
    n_threads: int
    n_blocks: int
    n_edges: int
    empty_lines: int  # lines no thread executed (mask 0 and no thread at that PC)
    addressless_mem_lines: int  # memory instructions whose lines carry no address (LDC, TEX, ...)
    unknown_opcodes: list = field(default_factory=list)


# ---------------------------------------------------------------------------------------------
# Paths, CFG, trace
# ---------------------------------------------------------------------------------------------


@dataclass
class RecoveredKernel:
    """A scanned kernel with its per-PC tables, recovered groups and CFG: everything a trace file needs."""

    scanned: ScannedKernel
    pcs: np.ndarray  # sorted executed PCs; PC index = position
    pc_of_slot: np.ndarray  # PC index of every slot
    instrs: list  # Instruction per PC index
    flow: np.ndarray  # FLOW_* per PC index
    is_barrier: np.ndarray
    is_mem: np.ndarray  # per PC index: a memory instruction (one /mem entry per execution)
    addr_base: np.ndarray  # per PC index: window base subtracted from shared/local addresses
    entry: int  # PC index every warp starts at
    target: Optional[np.ndarray] = None  # direct-branch target per PC index (n_pcs: unknown)
    groups: Optional[np.ndarray] = None  # the recovered groups where they change (accelsim_paths.recover_warps)
    cfg: Optional[paths.KernelCFG] = None
    thread_insts: int = 0
    empty_lines: int = 0
    addressless: int = 0

    @property
    def n_pcs(self) -> int:
        return len(self.pcs)


def row_number(k: ScannedKernel, key: int, j: int) -> int:
    """The file line of warp ``key``'s ``j``-th instruction line. Its lines are consecutive in the
    files the tracer writes; otherwise the file is read again up to that warp (errors only)."""
    first, last, done = (int(v) for v in k.warp_info[key, [FIRST_NO, LAST_NO, DONE]])
    if last - first + 1 == done - 1:
        return first + j
    reader = LineReader(k.name, LineStore())
    reader.rows_of_warp = key
    for number, text in text_lines(k.path, None, hashlib.sha256()):
        reader.feed(number, text)
        if reader.store.warp_info.shape[0] and reader.store.warp_info[key, DONE]:
            break
    return reader.rows_numbers[j]


def path_error(k: ScannedKernel, key: int, err: paths.PathError) -> TraceError:
    """The one sentence for a warp whose lines no set of paths explains."""
    wpc = k.header.warps_per_cta
    cta, warp = divmod(key, wpc)
    other = f"line {row_number(k, key, err.other)}" if err.other >= 0 else ""
    return TraceError(f"{k.name}:{row_number(k, key, err.line)}: thread {warp * WARP + err.lane} of thread block "
                      f"{cta_text(k.header.cta_xyz(cta))} (lane {err.lane} of warp {warp}) "
                      f"{err.what.replace('{other}', other)}")


def file_order(k: ScannedKernel) -> np.ndarray:
    """Warp keys in the order their lines come in the file (the first inconsistent warp is reported)."""
    return np.argsort(k.warp_info[:, ROW0], kind="stable")


def _file_parts(k: ScannedKernel, n: int) -> list:
    """`file_order` cut into at most ``n`` consecutive parts of about as many trace lines each (the path
    recovery's work), for as many threads; one part for a trace of fewer than BATCH_ROWS lines."""
    order = file_order(k)
    rows = np.cumsum(np.maximum(k.warp_info[order, DONE] - 1, 0))
    if n <= 1 or len(order) < n or rows[-1] < BATCH_ROWS:  # (a small trace: not worth the threads)
        return [order]
    cuts = np.searchsorted(rows, rows[-1] * np.arange(1, n) / n, side="right")
    return [part for part in np.split(order, cuts) if len(part)]


def prepare(k: ScannedKernel) -> RecoveredKernel:
    """Per-PC tables and the entry PC (every warp must start there)."""
    slot_pcs = np.array([ins.pc for ins in k.instrs], np.int64)
    pcs = np.unique(slot_pcs)
    pc_of_slot = np.searchsorted(pcs, slot_pcs)
    instrs = [None] * len(pcs)
    for slot, ins in enumerate(k.instrs):
        instrs[pc_of_slot[slot]] = ins
    first = pc_of_slot[k.slots[k.warp_info[:, SLOT0]]]  # a warp's first line always starts a new slot run
    wrong = np.flatnonzero(first != first[0])
    if len(wrong):
        key = int(wrong[0])
        cta, warp = divmod(key, k.header.warps_per_cta)
        raise TraceError(f"{k.name}:{int(k.warp_info[key, FIRST_NO])}: warp {warp} of thread block "
                         f"{cta_text(k.header.cta_xyz(cta))} starts at PC {int(pcs[first[key]]):#06x}, but the kernel's "
                         f"first warp starts at {int(pcs[first[0]]):#06x}")
    bases = {OpClass.MEM_SHARED: k.header.shmem_base, OpClass.MEM_LOCAL: k.header.local_base}
    return RecoveredKernel(
        scanned=k, pcs=pcs, pc_of_slot=pc_of_slot, instrs=instrs,
        flow=np.array([ins.info.flow for ins in instrs], np.int64),
        is_barrier=np.array([ins.info.op_class == OpClass.BARRIER for ins in instrs], np.bool_),
        is_mem=np.array([ins.info.op_class in sass.MEMORY_CLASSES for ins in instrs], np.bool_),
        addr_base=np.array([bases.get(ins.info.op_class, 0) for ins in instrs], np.uint64),
        entry=int(first[0]))


def with_cfg(kern: RecoveredKernel, codes: np.ndarray) -> RecoveredKernel:
    """The CFG from the step codes of every warp's recovered threads."""
    kern.cfg = paths.build_cfg(codes, kern.n_pcs, (kern.flow != sass.FLOW_NONE) | kern.is_barrier, kern.is_barrier,
                               kern.entry)
    return kern


def _geometry(kern: RecoveredKernel) -> tuple:
    h = kern.scanned.header
    return h.warps_per_cta, h.threads_per_cta


def stated_targets(kern: RecoveredKernel) -> np.ndarray:
    """Per PC index, the PC index a branch's line names as its target, ``n_pcs`` where it names none.
    Tracer versions 4 and later write an instruction's immediate operand as the line's last field, and
    a BRA's immediate is its target; taken for a branch that can encode one (``sass.encodes_target``)
    when it is an executed PC other than 0 (the entry: traces that write no target write 0)."""
    n = kern.n_pcs
    out = np.full(n, n, np.int64)
    if kern.scanned.header.tracer_version < 4:
        return out
    for i, ins in enumerate(kern.instrs):
        if ins.imm and kern.flow[i] != sass.FLOW_NONE and sass.encodes_target(ins.opcode):
            j = int(np.searchsorted(kern.pcs, ins.imm))
            if j < n and kern.pcs[j] == ins.imm:
                out[i] = j
    return out


def branch_rules(kern: RecoveredKernel, inferred: np.ndarray) -> list:
    """(flow, direct-branch target, always jumps) per PC index to recover the paths with, in order of
    preference: first every branch whose line states a target is direct with that target (a register
    it reads is then its guard, as in simt-fast's exports) and every thread of its mask jumps there
    (``sass.jumps_in_mask``), the others as classified with the inferred targets (rule 2); then all as
    classified with the inferred targets (when no line states a target, or the lines contradict the
    stated ones)."""
    stated = stated_targets(kern)
    given = stated < kern.n_pcs
    never = np.zeros(kern.n_pcs, np.bool_)
    if not given.any():
        return [(kern.flow, inferred, never)]
    always = given & np.array([sass.jumps_in_mask(ins.opcode) for ins in kern.instrs], np.bool_)
    return [(np.where(given, sass.FLOW_DIRECT, kern.flow), np.where(given, stated, inferred), always),
            (kern.flow, inferred, never)]


def recover(k: ScannedKernel) -> RecoveredKernel:
    """Every thread's path (rules 1-3 of docs/trace.md, compiled) and the CFG; a trace no paths
    explain is a TraceError naming the file, line, thread and warp."""
    kern = prepare(k)
    inferred = np.full(kern.n_pcs, kern.n_pcs, np.int64)
    paths.direct_targets(k.row_flags, k.slots, k.masks, k.warp_info, kern.pc_of_slot, kern.flow, inferred)
    parts = _file_parts(k, RECOVER_WORKERS)
    for flow, target, always in branch_rules(kern, inferred):
        kern.target = target

        def recover_part(order: np.ndarray) -> tuple:
            err = np.zeros(5, np.int64)
            rows = int(np.maximum(k.warp_info[order, DONE] - 1, 0).sum())  # (DONE: its lines + 1)
            groups = np.empty(max(rows, 1), np.uint32)  # pages never written cost no memory
            out = paths.recover_warps(order, k.row_flags, k.slots, k.masks, k.warp_info, *_geometry(kern),
                                      kern.entry, kern.pc_of_slot, flow, target, always, kern.is_mem, kern.n_pcs,
                                      groups, err)
            return out, groups, err

        if len(parts) == 1:
            done = [recover_part(parts[0])]
        else:  # (recover_warps releases the GIL; each part writes only its own warps' rows)
            with ThreadPoolExecutor(len(parts), thread_name_prefix="simt-fast-paths") as pool:
                done = list(pool.map(recover_part, parts))
        err = next((e for _, _, e in done if e[paths.ERR_CODE]), done[0][2])  # the first in file order
        if not err[paths.ERR_CODE]:
            break
    # the parts' groups one after the other: a later part's warps start after the earlier parts' groups
    n_groups = 0
    for order, ((n, _, _, _, _), _, _) in zip(parts, done):
        k.warp_info[order, GROUP0] += n_groups
        n_groups += n
    groups = np.concatenate([g[:n] for (n, _, _, _, _), g, _ in done]) if len(done) > 1 else done[0][1]
    groups.resize(n_groups, refcheck=False)  # in place: the unused tail is given back
    kern.groups = groups
    codes = done[0][0][1] if len(done) == 1 else np.unique(np.concatenate([out[1] for out, _, _ in done]))
    kern.thread_insts, kern.empty_lines, kern.addressless = (sum(int(out[i]) for out, _, _ in done) for i in (2, 3, 4))
    if err[paths.ERR_CODE]:
        what = paths.PathError(int(err[paths.ERR_LINE]), int(err[paths.ERR_LANE]),
                               paths.PATH_ERRORS[int(err[paths.ERR_CODE])], int(err[paths.ERR_OTHER]))
        raise path_error(k, int(err[paths.ERR_KEY]), what)
    return with_cfg(kern, codes)


def cfg_arrays(kern: RecoveredKernel) -> dict:
    """The /cfg and /instr arrays (TraceWriter's ``cfg`` mapping)."""
    cfg = kern.cfg
    instrs = [kern.instrs[int(p)] for p in cfg.instr_pc]
    mem = [ins.info.op_class in sass.MEMORY_CLASSES for ins in instrs]
    leaders = cfg.instr_pc[cfg.block_start[:-2]]
    return dict(
        block_start=cfg.block_start, succ_ptr=cfg.succ_ptr, succ_idx=cfg.succ_idx, ipdom=cfg.ipdom,
        has_barrier=cfg.has_barrier,
        label=[f"{int(kern.pcs[p]):#06x}" for p in leaders] + ["<exit>"],
        op_class=np.array([int(ins.info.op_class) for ins in instrs], np.uint8),
        dst_reg=np.array([ins.dst for ins in instrs], np.int16),
        src_reg=np.array([ins.src for ins in instrs], np.int16).reshape(-1, 3),
        text=[ins.text for ins in instrs],
        # the trace's mem-width field; memory instructions whose lines carry none: the opcode's width
        mem_bytes=np.array([min(255, ins.mem_width or sass.width_from_opcode(ins.opcode)) if m else 0
                            for ins, m in zip(instrs, mem)], np.uint8),
        mem_kind=np.array([ins.info.mem_kind if m else MEM_NONE for ins, m in zip(instrs, mem)], np.uint8),
    )


def cta_ranges(k: ScannedKernel) -> list:
    """Consecutive CTA ranges of about BATCH_ROWS trace lines each."""
    h, batch_rows = k.header, BATCH_ROWS
    rows = (k.warp_info[:, DONE] - 1).reshape(h.n_ctas, h.warps_per_cta).sum(axis=1)
    ends = np.searchsorted(np.cumsum(rows), np.arange(batch_rows, int(rows.sum()), batch_rows), side="right")
    bounds = np.unique(np.concatenate([[0], ends, [h.n_ctas]]))
    return [range(int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:])]


def cta_batches(kern: RecoveredKernel) -> Iterator[tuple]:
    """(path_ptr, path, mem_ptr, mem_addr) per batch of consecutive thread blocks, in CTA linear order."""
    k, cfg = kern.scanned, kern.cfg
    for ctas in cta_ranges(k):
        yield paths.emit_threads(np.arange(ctas.start, ctas.stop, dtype=np.int64), k.row_flags, k.slots, k.masks,
                                 k.addr_bytes, kern.groups, k.warp_info, *_geometry(kern), kern.pc_of_slot, kern.is_mem,
                                 kern.addr_base, cfg.is_leader, cfg.block_of_pc, cfg.n_blocks - 1)


def summary(kern: RecoveredKernel, out) -> ImportSummary:
    k = kern.scanned
    unknown = sorted({sass.family(ins.opcode) for ins in kern.instrs if not ins.info.known})
    return ImportSummary(
        kernel=k.header.kernel, source=k.name, out=None if out is None else str(out), grid=k.header.grid,
        block=k.header.block, warp_lines=k.n_lines, mask_thread_insts=k.mask_insts, thread_insts=kern.thread_insts,
        predicated_off=kern.thread_insts - k.mask_insts, n_threads=k.header.n_ctas * k.header.threads_per_cta,
        n_blocks=kern.cfg.n_blocks, n_edges=len(kern.cfg.succ_idx), empty_lines=kern.empty_lines,
        addressless_mem_lines=kern.addressless, unknown_opcodes=unknown,
    )


def attrs(kern: RecoveredKernel, s: ImportSummary) -> dict:
    h = kern.scanned.header
    return {"source": "accel-sim", "accelsim_file": Path(kern.scanned.name).name, "accelsim_kernel_id": h.kernel_id,
            "accelsim_tracer_version": h.tracer_version, "binary_version": h.binary_version,
            "warp_inst_lines": s.warp_lines, "accelsim_thread_insts": s.mask_thread_insts,
            "predicated_off_thread_insts": s.predicated_off, "accelsim_addressless_mem_lines": s.addressless_mem_lines}


def trace_of(kern: RecoveredKernel, batches) -> Trace:
    """The whole trace in memory from its CTA batches. Its addresses are encoded batch by batch as
    the rows the timing loops read (`mem_rows`), so they never sit in memory as one word per entry
    (a replicated-CTA trace's 447 MB are 28 MB of rows); they are decoded if something reads
    ``trace.mem_addr``, or at once when rows would take more than the addresses (`mem_rows.pays_off`)."""
    paths_, ptrs, mem_ptrs = [], [np.zeros(1, np.int64)], [np.zeros(1, np.int64)]
    encoder = mem_rows.RowEncoder()
    encoded = []  # (rows, full) per batch, in order: one worker encodes batch k while batch k + 1 is made
    n_steps = n_mem = 0
    with ThreadPoolExecutor(1, thread_name_prefix="simt-fast-rows") as worker:  # (numba releases the GIL)
        for path_ptr, path, mem_ptr, mem_addr in batches:
            paths_.append(np.asarray(path, np.uint32))
            ptrs.append(path_ptr[1:] + n_steps)
            mem_ptrs.append(mem_ptr[1:] + n_mem)
            n_steps += len(path)
            n_mem += len(mem_addr)
            encoded.append(worker.submit(encoder.add, np.diff(mem_ptr), mem_rows.as_int64(mem_addr)))
        encoded.append(worker.submit(encoder.finish))
        encoded = [e.result() for e in encoded]
    rows = [r for r, _ in encoded]
    full = [f for _, f in encoded]
    mem_ptr = np.concatenate(mem_ptrs).astype(np.int64, copy=False)
    rows, full = np.concatenate(rows), np.concatenate(full)
    if not len(full):
        full = np.zeros(1, np.int64)  # (the kernels index it)
    name = kern.scanned.name
    if mem_rows.pays_off(n_mem, full):
        mem_addr = mem_rows.StoredRows(mem_ptr, rows, full, n_mem, None, name)
    else:
        mem_addr = mem_rows.decode(mem_ptr, rows, full)
    h = kern.scanned.header
    return Trace(
        kernel=h.kernel, grid=h.grid, block=h.block, source_sha256=kern.scanned.sha256,
        path_ptr=np.concatenate(ptrs).astype(np.int64, copy=False),
        path=np.concatenate(paths_) if paths_ else np.zeros(0, np.uint32),
        mem_ptr=mem_ptr, mem_addr=mem_addr,
        mem_format=MEM_FORMAT, attrs=attrs(kern, summary(kern, None)), **cfg_arrays(kern),
    )


def load(path, progress: Progress = None) -> Trace:
    """One Accel-Sim kernel trace (``.traceg`` or ``.traceg.xz``) as a simt-fast Trace with /mem."""
    kern = recover(scan_kernel(path, progress))
    return trace_of(kern, cta_batches(kern))


def convert(path, out, progress: Progress = None) -> ImportSummary:
    """Import one kernel trace into the trace file ``out`` (written atomically); returns the summary."""
    kern = recover(scan_kernel(path, progress))
    s = summary(kern, out)
    h = kern.scanned.header
    with TraceWriter(out, kernel=h.kernel, grid=h.grid, block=h.block, cfg=cfg_arrays(kern),
                     source_sha256=kern.scanned.sha256, attrs=attrs(kern, s), with_mem=True, mem_format=MEM_FORMAT,
                     gzip_level=GZIP_LEVEL) as writer:
        for batch in cta_batches(kern):
            writer.append(*batch)
            if progress is not None:  # after reading the text (bytes), writing the threads (CTAs)
                progress(writer.n_threads // h.threads_per_cta, h.n_ctas, "writing")
    return s


# ---------------------------------------------------------------------------------------------
# Trace directories
# ---------------------------------------------------------------------------------------------


def kernel_files(kernelslist) -> list:
    """The kernel trace files a ``kernelslist.g`` names (relative to its directory), in order.

    Memory-copy lines (``MemcpyHtoD,0x...,n``) are skipped; a raw tracer file (``.trace``, before
    Accel-Sim's post-processing) or any other line is refused naming the line.
    """
    listing = Path(kernelslist)
    name = str(listing)
    if not listing.exists():
        raise TraceError(f"{name} does not exist")
    if listing.is_dir():
        raise TraceError(f"{name} is a directory; pass its kernelslist.g")
    files = []
    for number, raw in enumerate(listing.read_text(errors="replace").splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if "," in line:  # MemcpyHtoD,<address>,<bytes> and other commands: not kernels
            continue
        if line.endswith((".trace", ".trace.xz")):
            raise TraceError(f"{name}:{number}: '{line}' is a raw tracer file; run Accel-Sim's post-traces-processing "
                             f"on the directory first, which writes the .traceg files and kernelslist.g")
        if not line.endswith(TRACE_SUFFIXES):
            raise TraceError(f"{name}:{number}: '{line}' is neither a kernel trace (.traceg or .traceg.xz) nor a "
                             f"memory copy line")
        files.append(listing.parent / line)
    if not files:
        raise TraceError(f"{name} lists no kernel trace (.traceg or .traceg.xz)")
    return files


def output_name(kernel_file) -> str:
    """``kernel-3.traceg.xz`` -> ``kernel-3.h5``."""
    base = Path(kernel_file).name
    for suffix in TRACE_SUFFIXES[::-1]:
        if base.endswith(suffix):
            return base[: -len(suffix)] + ".h5"
    return base + ".h5"


def import_directory(kernelslist, out_dir, on_kernel: Optional[Callable[[ImportSummary], None]] = None,
                     progress_for: Optional[Callable[[Path], Progress]] = None) -> list:
    """Convert every kernel of ``kernelslist`` into ``out_dir/<kernel file>.h5``; returns the summaries.

    ``on_kernel`` is called after each kernel; ``progress_for(file)`` may return a progress callback.
    """
    files = kernel_files(kernelslist)
    out_dir = Path(out_dir)
    if out_dir.exists() and not out_dir.is_dir():
        raise TraceError(f"{out_dir} exists and is not a directory")
    summaries = []
    for f in files:
        s = convert(f, out_dir / output_name(f), progress_for(f) if progress_for else None)
        summaries.append(s)
        if on_kernel is not None:
            on_kernel(s)
    return summaries
