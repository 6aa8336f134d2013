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

Paths and the CFG come from :mod:`simt_fast.trace.accelsim_paths`, opcodes and registers from
:mod:`simt_fast.trace.sass`; docs/trace.md describes the rules. Every malformed line is a
:class:`TraceError` naming the file and line.
"""

from __future__ import annotations

import hashlib
import lzma
from itertools import accumulate
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator, Optional

import numpy as np

from ..ir.model import OpClass
from . import accelsim_paths as paths
from .accelsim_export import export  # noqa: F401  (traces out: simt_fast.trace.accelsim.export)
from . import sass
from .io import TraceWriter
from .model import MEM_FORMAT, MEM_NONE, NO_ACCESS, Trace, TraceError

MIN_TRACER_VERSION = 3
READ_CHUNK = 1 << 22  # bytes read (and hashed) at a time
TRACE_SUFFIXES = (".traceg", ".traceg.xz")
WARP = paths.LANES
Progress = Optional[Callable[[int, int], None]]  # (bytes read, file size)


# ---------------------------------------------------------------------------------------------
# Parsed form
# ---------------------------------------------------------------------------------------------


@dataclass
class Header:
    kernel: str = ""
    kernel_id: int = 0
    grid: tuple = ()
    block: tuple = ()
    shmem_bytes: int = 0
    nregs: int = 0
    binary_version: int = 0
    cuda_stream_id: int = 0
    shmem_base: int = 0
    local_base: int = 0
    nvbit_version: str = ""
    tracer_version: int = 0
    lineinfo: bool = False


@dataclass
class Instruction:
    """What every line at one PC shares (the static instruction)."""

    pc: int
    opcode: str
    info: sass.OpInfo
    dst: int  # simt-fast register id, -1 none
    src: tuple  # up to three register ids, -1 padded
    regs: tuple  # the register tokens, for the instruction text
    static_tokens: list  # n_dst ... srcs: compared with later lines at this PC
    mem_width: int  # the trace's mem-width field (0: no address list)
    line: int  # first line at this PC

    @property
    def text(self) -> str:
        return f"/*{self.pc:04x}*/ {self.opcode}" + (" " + ", ".join(self.regs) if self.regs else "")


@dataclass
class WarpLines:
    cta: tuple
    warp: int
    pc: np.ndarray  # raw PCs (int64)
    mask: np.ndarray  # uint32
    line: np.ndarray  # file line numbers (int64)
    has_addr: np.ndarray  # bool: the line lists addresses
    addr_ptr: np.ndarray  # int64: first address of the line in ``addrs``
    addrs: np.ndarray  # uint64: the listed addresses, thread by thread of the mask


@dataclass
class ParsedKernel:
    name: str  # the file, for messages
    header: Header
    instrs: dict  # pc -> Instruction
    warps: dict  # (cta linear id, warp) -> WarpLines
    sha256: str
    n_lines: int = 0  # warp instruction lines
    mask_insts: int = 0  # sum of the masks' popcounts


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
# Reading the text
# ---------------------------------------------------------------------------------------------


def _lines(path: Path, progress: Progress, digest) -> Iterator[tuple]:
    """(line number, text) of a plain or xz-compressed trace; hashes the text into ``digest``."""
    name = str(path)
    if not path.exists():
        raise TraceError(f"{name} does not exist")
    if path.is_dir():
        raise TraceError(f"{name} is a directory, not an Accel-Sim kernel trace")
    size = path.stat().st_size
    number = 0
    tail = b""
    with open(path, "rb") as raw:
        stream = lzma.LZMAFile(raw) if name.endswith(".xz") else raw
        while True:
            try:
                chunk = stream.read(READ_CHUNK)
            except (lzma.LZMAError, EOFError) as e:
                raise TraceError(f"{name} is not a readable xz file ({e}); re-compress it or pass the plain "
                                 f".traceg") from None
            if not chunk:
                break
            digest.update(chunk)
            chunk = tail + chunk
            cut = chunk.rfind(b"\n") + 1
            tail = chunk[cut:]
            for text in chunk[:cut].decode("utf-8", "replace").split("\n")[:-1]:
                number += 1
                yield number, text
            if progress is not None:
                progress(raw.tell(), size)
    if tail:
        yield number + 1, tail.decode("utf-8", "replace")


def _triple(name, number, text, value) -> tuple:
    parts = value.strip().strip("()").split(",")
    try:
        dims = tuple(int(v) for v in parts)
    except ValueError:
        dims = ()
    if len(dims) != 3 or min(dims) < 1:
        raise TraceError(f"{name}:{number}: '{text.strip()}' must give three positive integers as (x,y,z)")
    return dims


def _header_line(h: Header, name: str, number: int, text: str) -> None:
    key, sep, value = text[1:].partition("=")
    key = " ".join(key.split())
    if not sep:
        raise TraceError(f"{name}:{number}: header line '{text.strip()}' has no '=' (expected '-key = value')")
    value = value.strip()
    ints = {"kernel id": "kernel_id", "shmem": "shmem_bytes", "nregs": "nregs", "binary version": "binary_version",
            "cuda stream id": "cuda_stream_id", "accelsim tracer version": "tracer_version"}
    hexes = {"shmem base_addr": "shmem_base", "local mem base_addr": "local_base"}
    try:
        if key == "kernel name":
            h.kernel = value
        elif key == "grid dim":
            h.grid = _triple(name, number, text, value)
        elif key == "block dim":
            h.block = _triple(name, number, text, value)
        elif key in ints:
            setattr(h, ints[key], int(value, 10))
        elif key in hexes:
            setattr(h, hexes[key], int(value, 16))
        elif key == "enable lineinfo":
            h.lineinfo = int(value, 10) != 0
        elif key == "nvbit version":
            h.nvbit_version = value
        # other keys (later tracer versions) carry nothing the import needs
    except TraceError:
        raise
    except ValueError:
        raise TraceError(f"{name}:{number}: header '{key}' has the value '{value}', which is not a number") from None


def _check_header(h: Header, name: str, number: int) -> None:
    for what, ok in (("-kernel name", h.kernel), ("-grid dim", h.grid), ("-block dim", h.block),
                     ("-accelsim tracer version", h.tracer_version)):
        if not ok:
            raise TraceError(f"{name}:{number}: the trace starts its thread blocks before the header line '{what} = ...'"
                             + (" (tracer versions before 3 are not supported)" if what.startswith("-accelsim") else ""))
    if h.tracer_version < MIN_TRACER_VERSION:
        raise TraceError(f"{name}: written by Accel-Sim tracer version {h.tracer_version}; simt-fast reads versions "
                         f"{MIN_TRACER_VERSION} and later")


class _WarpBuilder:
    def __init__(self, cta: tuple, warp: int, expected: int, number: int):
        self.cta, self.warp, self.expected, self.number = cta, warp, expected, number
        self.pc: list = []
        self.mask: list = []
        self.line: list = []
        self.addr_ptr: list = []
        self.has_addr: list = []
        self.addrs: list = []

    def finish(self, name: str) -> WarpLines:
        if len(self.pc) != self.expected:
            raise TraceError(f"{name}:{self.number}: warp {self.warp} of thread block {_cta_text(self.cta)} announces "
                             f"{self.expected} instructions but {len(self.pc)} follow")
        return WarpLines(cta=self.cta, warp=self.warp, pc=np.array(self.pc, np.int64),
                         mask=np.array(self.mask, np.uint32), line=np.array(self.line, np.int64),
                         has_addr=np.array(self.has_addr, np.bool_), addr_ptr=np.array(self.addr_ptr, np.int64),
                         addrs=np.array(self.addrs, np.uint64))


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "es" if noun.endswith("s") else "s")


def _left(n: int) -> str:
    return "1 field is left" if n == 1 else f"{n} fields are left"


def _cta_text(cta) -> str:
    return "(" + ",".join(str(v) for v in cta) + ")"


class _LineParser:
    """One instruction line -> (pc, mask, addresses or None); static parts checked per PC."""

    def __init__(self, name: str, header: Header):
        self.name = name
        self.header = header
        self.first = 1 if header.lineinfo else 0
        self.instrs: dict = {}
        self.checked: set = set()  # texts (mask blanked) of address-free lines already parsed

    def bad(self, number: int, what: str):
        return TraceError(f"{self.name}:{number}: {what}")

    def parse(self, number: int, tokens: list) -> tuple:
        o = self.first
        if len(tokens) < o + 6:
            raise self.bad(number, f"instruction line has {len(tokens)} fields, too few for "
                                   f"'{'line_num ' if o else ''}PC mask n_dst ... opcode n_src ... mem_width'")
        try:
            pc = int(tokens[o], 16)
        except ValueError:
            raise self.bad(number, f"PC '{tokens[o]}' is not a hex number") from None
        try:
            mask = int(tokens[o + 1], 16)
        except ValueError:
            mask = -1
        if not 0 <= mask <= 0xFFFF_FFFF or pc < 0:
            raise self.bad(number, f"active mask '{tokens[o + 1]}' is not a 32-bit hex number" if pc >= 0
                           else f"PC '{tokens[o]}' is negative")
        # A line without addresses repeats exactly but for its mask: check each such text once.
        tokens[o + 1] = ""
        key = tuple(tokens)
        if key in self.checked:
            return pc, mask, None
        addrs = self._rest(number, tokens, pc, mask)
        if addrs is None:
            self.checked.add(key)
        return pc, mask, addrs

    def _rest(self, number: int, tokens: list, pc: int, mask: int) -> Optional[list]:
        """Check the fields after the mask; the decoded addresses, or None for a line without."""
        o = self.first
        ins = self.instrs.get(pc)
        start = o + 2
        if ins is None or tokens[start:start + len(ins.static_tokens)] != ins.static_tokens:
            ins = self._static(number, pc, tokens, start, ins)
        k = start + len(ins.static_tokens)
        try:
            width = int(tokens[k], 10)
        except (IndexError, ValueError):
            raise self.bad(number, f"mem_width '{tokens[k] if k < len(tokens) else ''}' after the source registers "
                                   f"is not a number") from None
        if width < 0:
            raise self.bad(number, f"mem_width {width} is negative")
        addrs = None
        k += 1
        if width and sass.family(ins.opcode) in sass.TMA_FAMILIES:
            return None  # bulk-copy transfer list: not per-thread addresses (sass.TMA_FAMILIES)
        if width:
            addrs, k = self._addresses(number, tokens, k, mask)
            if ins.mem_width == 0:
                ins.mem_width = width
        if len(tokens) - k > 1:
            raise self.bad(number, f"{len(tokens) - k} fields follow the {'addresses' if width else 'mem_width'}; "
                                   f"at most one (the immediate) may")
        if len(tokens) - k == 1:
            try:
                int(tokens[k], 10)
            except ValueError:
                raise self.bad(number, f"the last field '{tokens[k]}' is not an immediate value (a decimal integer)") from None
        return addrs

    def _registers(self, number: int, tokens: list, k: int, role: str) -> tuple:
        try:
            n = int(tokens[k], 10)
        except (IndexError, ValueError):
            raise self.bad(number, f"the {role} register count '{tokens[k] if k < len(tokens) else ''}' is not a "
                                   f"number") from None
        if not 0 <= n <= 8 or k + 1 + n > len(tokens):
            raise self.bad(number, f"the {role} register count {n} does not match the fields that follow")
        regs = tokens[k + 1:k + 1 + n]
        ids = []
        for r in regs:
            rid = sass.register_id(r)
            if rid is None:
                raise self.bad(number, f"{role} register '{r}' is not a SASS register (R0..R255, UR0..UR63, P0..P7, UP0..UP7)")
            ids.append(rid)
        return regs, ids, k + 1 + n

    def _static(self, number: int, pc: int, tokens: list, start: int, seen) -> Instruction:
        dsts, dst_ids, k = self._registers(number, tokens, start, "destination")
        if k >= len(tokens):
            raise self.bad(number, "the line ends before the opcode")
        opcode = tokens[k]
        if not opcode[:1].isalpha():
            raise self.bad(number, f"'{opcode}' is not a SASS opcode (expected after {len(dsts)} destination registers)")
        srcs, src_ids, k = self._registers(number, tokens, k + 1, "source")
        if seen is not None:
            raise self.bad(number, f"PC {pc:#06x} is '{seen.text}' on line {seen.line} but '{opcode}' with registers "
                                   f"{' '.join(dsts + srcs) or 'none'} here; one PC is one instruction (a trace that mixes "
                                   f"the code of two functions, e.g. a call into a non-inlined device function, cannot "
                                   f"be imported)")
        kept = []
        for rid in src_ids:  # sources left to right, no duplicates, capped at 3 (DESIGN §8)
            if rid >= 0 and rid not in kept:
                kept.append(rid)
        ins = Instruction(
            pc=pc, opcode=opcode, info=sass.classify(opcode, sum(1 for r in src_ids if r >= 0)),
            dst=next((r for r in dst_ids if r >= 0), -1), src=tuple((kept + [-1, -1, -1])[:3]),
            regs=tuple(dsts + srcs), static_tokens=tokens[start:k], mem_width=0, line=number,
        )
        self.instrs[pc] = ins
        return ins

    def _addresses(self, number: int, tokens: list, k: int, mask: int) -> tuple:
        n = mask.bit_count()
        try:
            mode = int(tokens[k], 10)
        except (IndexError, ValueError):
            raise self.bad(number, f"address mode '{tokens[k] if k < len(tokens) else ''}' is not 0, 1 or 2") from None
        k += 1
        try:
            if mode == 0:  # one address per thread of the mask
                if k + n > len(tokens):
                    raise self.bad(number, f"address mode 0 needs {_count(n, 'address')} (one per thread of the "
                                           f"mask) but {_left(len(tokens) - k)}")
                addrs = [int(a, 16) for a in tokens[k:k + n]]
                k += n
            elif mode == 1:  # base and stride
                if k + 2 > len(tokens):
                    raise self.bad(number, "address mode 1 needs a base address and a stride")
                base, stride = int(tokens[k], 16), int(tokens[k + 1], 10)
                addrs = list(range(base, base + n * stride, stride)) if stride else [base] * n
                k += 2
            elif mode == 2:  # base and the deltas between consecutive threads of the mask
                n_deltas = max(n - 1, 0)
                if k + 1 + n_deltas > len(tokens):
                    raise self.bad(number, f"address mode 2 needs a base address and {_count(n_deltas, 'delta')} (one "
                                           f"per thread of the mask after the first) but {_left(len(tokens) - k)}")
                addrs = list(accumulate(map(int, tokens[k + 1:k + 1 + n_deltas]), initial=int(tokens[k], 16)))[:n]
                k += 1 + n_deltas
            else:
                raise self.bad(number, f"address mode {mode} is not 0 (list), 1 (base+stride) or 2 (base+deltas)")
        except TraceError:
            raise
        except ValueError:
            raise self.bad(number, f"an address field of mode {mode} is not a number") from None
        if addrs and (min(addrs) < 0 or max(addrs) > 0xFFFF_FFFF_FFFF_FFFE):
            raise self.bad(number, "the addresses leave the 64-bit address space")
        return addrs, k


def parse_kernel(path, progress: Progress = None) -> ParsedKernel:
    """Read one ``.traceg`` / ``.traceg.xz`` into per-warp arrays; malformed lines raise TraceError."""
    path = Path(path)
    name = str(path)
    header = Header()
    digest = hashlib.sha256()
    parser: Optional[_LineParser] = None
    warps: dict = {}
    seen_ctas: set = set()
    cta = None  # (x, y, z) of the open thread block; None outside one
    cta_lin = -1
    warp: Optional[_WarpBuilder] = None
    n_lines = mask_insts = 0
    last = 0

    def close_warp():
        nonlocal warp
        if warp is not None:
            warps[(cta_lin, warp.warp)] = warp.finish(name)
            warp = None

    for number, text in _lines(path, progress, digest):
        last = number
        tokens = text.split()
        if len(tokens) >= 6 and warp is not None and warp.expected >= 0 and tokens[0][0] != "#":
            # an instruction line (every block/warp keyword line has at most four fields)
            pc, mask, addrs = parser.parse(number, tokens)
            warp.pc.append(pc)
            warp.mask.append(mask)
            warp.line.append(number)
            warp.addr_ptr.append(len(warp.addrs))
            warp.has_addr.append(addrs is not None)
            if addrs:
                warp.addrs.extend(addrs)
            n_lines += 1
            mask_insts += mask.bit_count()
            continue
        stripped = text.strip()
        if not stripped:
            continue
        if parser is None:  # header
            if stripped.startswith("-"):
                _header_line(header, name, number, stripped)
                continue
            if stripped.startswith("#BEGIN_TB"):
                _check_header(header, name, number)
                parser = _LineParser(name, header)
            elif stripped.startswith("#"):
                continue
            else:
                raise TraceError(f"{name}:{number}: expected a '-key = value' header line or '#BEGIN_TB', found "
                                 f"'{stripped[:60]}'")
        if stripped.startswith("#BEGIN_TB"):
            if cta is not None or warp is not None:
                raise TraceError(f"{name}:{number}: '#BEGIN_TB' before the previous thread block's '#END_TB'")
            cta = ()
            continue
        if stripped.startswith("#END_TB"):
            if cta is None:
                raise TraceError(f"{name}:{number}: '#END_TB' without a '#BEGIN_TB'")
            close_warp()
            _check_cta_complete(name, number, header, cta, cta_lin, warps)
            cta = None
            continue
        if stripped.startswith("#"):
            continue
        if cta is None:
            raise TraceError(f"{name}:{number}: '{stripped[:60]}' is outside a thread block (#BEGIN_TB ... #END_TB)")
        if "=" in stripped:
            key, _, value = stripped.partition("=")
            key = " ".join(key.split())
            if key == "thread block":
                if cta != ():
                    raise TraceError(f"{name}:{number}: a second 'thread block =' line in one thread block")
                cta = _triple_in_grid(name, number, stripped, value, header.grid)
                cta_lin = cta[0] + header.grid[0] * (cta[1] + header.grid[1] * cta[2])
                if cta_lin in seen_ctas:
                    raise TraceError(f"{name}:{number}: thread block {_cta_text(cta)} appears twice")
                seen_ctas.add(cta_lin)
            elif key == "warp":
                close_warp()
                if cta == ():
                    raise TraceError(f"{name}:{number}: 'warp =' before the block's 'thread block =' line")
                w = _int_field(name, number, stripped, value)
                if w >= _warps_per_cta(header) or (cta_lin, w) in warps:
                    raise TraceError(f"{name}:{number}: warp {w} is not a new warp of a {np.prod(header.block)}-thread "
                                     f"block ({_warps_per_cta(header)} warps)")
                warp = _WarpBuilder(cta, w, -1, number)
            elif key == "insts":
                if warp is None or warp.expected >= 0:
                    raise TraceError(f"{name}:{number}: 'insts =' must follow a 'warp =' line")
                warp.expected = _int_field(name, number, stripped, value)
            # other 'key = value' lines of a block (cluster id, cluster rank, ...) carry nothing we need
            continue
        if warp is None or warp.expected < 0:
            raise TraceError(f"{name}:{number}: an instruction line before the warp's 'warp =' and 'insts =' lines")
        parser.parse(number, tokens)  # too few fields for an instruction: raises, naming what is missing
    if parser is None:
        raise TraceError(f"{name}: no thread block (#BEGIN_TB) follows the header, so the trace has no instructions")
    if cta is not None:
        raise TraceError(f"{name}:{last}: the file ends inside a thread block (no '#END_TB')")
    n_ctas = int(np.prod(header.grid))
    if len(seen_ctas) != n_ctas:
        missing = next(c for c in range(n_ctas) if c not in seen_ctas)
        gx, gy = header.grid[0], header.grid[1]
        xyz = (missing % gx, (missing // gx) % gy, missing // (gx * gy))
        raise TraceError(f"{name}: thread block {_cta_text(xyz)} of the {n_ctas}-block grid is missing, so its "
                         f"threads' paths are unknown (was the trace cut short?)")
    return ParsedKernel(name=name, header=header, instrs=parser.instrs, warps=warps, sha256=digest.hexdigest(),
                        n_lines=n_lines, mask_insts=mask_insts)


def _int_field(name, number, text, value) -> int:
    try:
        v = int(value.strip(), 10)
    except ValueError:
        v = -1
    if v < 0:
        raise TraceError(f"{name}:{number}: '{text}' needs a non-negative integer")
    return v


def _triple_in_grid(name, number, text, value, grid) -> tuple:
    try:
        xyz = tuple(int(v) for v in value.strip().split(","))
    except ValueError:
        xyz = ()
    if len(xyz) != 3 or any(not 0 <= v < g for v, g in zip(xyz, grid)):
        raise TraceError(f"{name}:{number}: '{text}' is not a thread block of the grid {_cta_text(grid)}")
    return xyz


def _warps_per_cta(header: Header) -> int:
    return -(-int(np.prod(header.block)) // WARP)


def _check_cta_complete(name, number, header, cta, cta_lin, warps) -> None:
    if cta == ():
        raise TraceError(f"{name}:{number}: thread block without a 'thread block = x,y,z' line")
    for w in range(_warps_per_cta(header)):
        lines = warps.get((cta_lin, w))
        if lines is None or not len(lines.pc):
            raise TraceError(f"{name}:{number}: warp {w} of thread block {_cta_text(cta)} has no instructions, so "
                             f"its threads' paths are unknown")


# ---------------------------------------------------------------------------------------------
# Paths, CFG, trace
# ---------------------------------------------------------------------------------------------


@dataclass
class _Kernel:
    """A parsed kernel with its recovered groups and CFG: everything a trace file needs."""

    parsed: ParsedKernel
    pcs: np.ndarray  # sorted executed PCs; PC index = position
    instrs: list  # Instruction per PC index
    groups: dict  # (cta, warp) -> uint32 group per line
    pc_index: dict  # (cta, warp) -> int64 PC index per line
    cfg: paths.KernelCFG
    is_mem: np.ndarray  # per PC index: a memory instruction (one /mem entry per execution)
    addr_base: np.ndarray  # per PC index: window base subtracted from shared/local addresses


def _lane_error(k: ParsedKernel, lines: WarpLines, err: paths.PathError) -> TraceError:
    thread = lines.warp * WARP + err.lane
    other = f"line {int(lines.line[err.other])}" if err.other >= 0 else ""
    what = err.what.replace("{other}", other)
    return TraceError(f"{k.name}:{int(lines.line[err.line])}: thread {thread} of thread block {_cta_text(lines.cta)} "
                      f"(lane {err.lane} of warp {lines.warp}) {what}")


def _recover(k: ParsedKernel) -> _Kernel:
    pcs = np.unique(np.concatenate([w.pc for w in k.warps.values()]))
    instrs = [k.instrs[int(p)] for p in pcs]
    n_pcs = len(pcs)
    flow = np.array([ins.info.flow for ins in instrs], np.int64)
    is_barrier = np.array([ins.info.op_class == OpClass.BARRIER for ins in instrs], np.bool_)
    pc_index = {key: np.searchsorted(pcs, w.pc) for key, w in k.warps.items()}
    entry = None
    for key in sorted(k.warps):
        first = int(pc_index[key][0])
        if entry is None:
            entry = first
        elif first != entry:
            w = k.warps[key]
            raise TraceError(f"{k.name}:{int(w.line[0])}: warp {w.warp} of thread block {_cta_text(w.cta)} starts at PC "
                             f"{int(w.pc[0]):#06x}, but the kernel's first warp starts at {int(pcs[entry]):#06x}")
    target = np.full(n_pcs, n_pcs, np.int64)
    for key, w in k.warps.items():
        paths.lowest_direct_landings(pc_index[key], w.mask, flow, target)
    tpc = int(np.prod(k.header.block))
    groups = {}
    codes = []
    for key, w in k.warps.items():
        n_lanes = min(WARP, tpc - w.warp * WARP)
        try:
            g = paths.recover_groups(pc_index[key], w.mask, flow, target, (1 << n_lanes) - 1, entry)
        except paths.PathError as e:
            raise _lane_error(k, w, e) from None
        groups[key] = g
        codes.append(paths.transitions(pc_index[key], g, n_pcs))
    cfg = paths.build_cfg(np.unique(np.concatenate(codes)), n_pcs, (flow != sass.FLOW_NONE) | is_barrier,
                          is_barrier, entry)
    is_mem = np.array([ins.info.op_class in sass.MEMORY_CLASSES for ins in instrs], np.bool_)
    bases = {OpClass.MEM_SHARED: k.header.shmem_base, OpClass.MEM_LOCAL: k.header.local_base}
    addr_base = np.array([bases.get(ins.info.op_class, 0) for ins in instrs], np.uint64)
    return _Kernel(parsed=k, pcs=pcs, instrs=instrs, groups=groups, pc_index=pc_index, cfg=cfg, is_mem=is_mem,
                   addr_base=addr_base)


def _cfg_arrays(kern: _Kernel) -> dict:
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


def _warp_threads(kern: _Kernel, key, n_lanes: int) -> tuple:
    """One warp's block paths and /mem entries: (path lengths, path, mem counts, mem addresses)."""
    w = kern.parsed.warps[key]
    pci, groups = kern.pc_index[key], kern.groups[key]
    lane_of, line_of = paths.lane_sequences(groups)
    seq = pci[line_of]
    lead = kern.cfg.is_leader[seq]
    blocks, block_lanes = kern.cfg.block_of_pc[seq[lead]], lane_of[lead]
    exit_block = kern.cfg.n_blocks - 1
    lanes = np.arange(n_lanes)
    order = np.lexsort((np.concatenate([np.flatnonzero(lead), np.full(n_lanes, len(seq))]),
                        np.concatenate([block_lanes, lanes])))
    path = np.concatenate([blocks, np.full(n_lanes, exit_block)])[order]
    path_len = np.bincount(block_lanes, minlength=WARP)[:n_lanes] + 1

    mem = kern.is_mem[seq]
    lines, mem_lanes = line_of[mem], lane_of[mem].astype(np.uint64)
    masks = w.mask[lines].astype(np.uint64)
    in_mask = ((masks >> mem_lanes) & 1).astype(np.bool_)
    addr = np.where(in_mask, np.uint64(0), NO_ACCESS)  # lines without addresses (LDC, TEX, ...): offset 0
    listed = in_mask & w.has_addr[lines]
    below = masks[listed] & ((np.uint64(1) << mem_lanes[listed]) - np.uint64(1))
    picked = w.addrs[w.addr_ptr[lines[listed]] + np.bitwise_count(below).astype(np.int64)]
    base = kern.addr_base[pci[lines[listed]]]
    # shared/local addresses in the generic window become offsets in the CTA's / thread's window
    addr[listed] = np.where((base > 0) & (picked >= base), picked - base, picked)
    mem_len = np.bincount(mem_lanes.astype(np.int64), minlength=WARP)[:n_lanes]
    return path_len, path, mem_len, addr


def _cta_batches(kern: _Kernel) -> Iterator[tuple]:
    """(path_ptr, path, mem_ptr, mem_addr) per thread block, in CTA linear order."""
    h = kern.parsed.header
    tpc = int(np.prod(h.block))
    for cta in range(int(np.prod(h.grid))):
        parts = [_warp_threads(kern, (cta, w), min(WARP, tpc - w * WARP)) for w in range(_warps_per_cta(h))]
        path_ptr = np.concatenate([[0], np.cumsum(np.concatenate([p[0] for p in parts]))]).astype(np.int64)
        mem_ptr = np.concatenate([[0], np.cumsum(np.concatenate([p[2] for p in parts]))]).astype(np.int64)
        yield (path_ptr, np.concatenate([p[1] for p in parts]).astype(np.uint32), mem_ptr,
               np.concatenate([p[3] for p in parts]).astype(np.uint64))


def _attrs(kern: _Kernel, summary: ImportSummary) -> dict:
    h = kern.parsed.header
    return {"source": "accel-sim", "accelsim_file": Path(kern.parsed.name).name, "accelsim_kernel_id": h.kernel_id,
            "accelsim_tracer_version": h.tracer_version, "binary_version": h.binary_version,
            "warp_inst_lines": summary.warp_lines, "accelsim_thread_insts": summary.mask_thread_insts,
            "predicated_off_thread_insts": summary.predicated_off}


def _summary(kern: _Kernel, out) -> ImportSummary:
    k = kern.parsed
    thread_insts = sum(int(np.bitwise_count(g).sum()) for g in kern.groups.values())
    empty = sum(int((g == 0).sum()) for g in kern.groups.values())
    addressless = sum(int((kern.is_mem[kern.pc_index[key]] & ~w.has_addr).sum()) for key, w in k.warps.items())
    unknown = sorted({sass.family(ins.opcode) for ins in kern.instrs if not ins.info.known})
    return ImportSummary(
        kernel=k.header.kernel, source=k.name, out=None if out is None else str(out), grid=k.header.grid,
        block=k.header.block, warp_lines=k.n_lines,
        mask_thread_insts=k.mask_insts, thread_insts=thread_insts, predicated_off=thread_insts - k.mask_insts,
        n_threads=int(np.prod(k.header.grid)) * int(np.prod(k.header.block)), n_blocks=kern.cfg.n_blocks,
        n_edges=len(kern.cfg.succ_idx), empty_lines=empty, addressless_mem_lines=addressless,
        unknown_opcodes=unknown,
    )


def load(path, progress: Progress = None) -> Trace:
    """One Accel-Sim kernel trace (``.traceg`` or ``.traceg.xz``) as a simt-fast Trace with /mem."""
    kern = _recover(parse_kernel(path, progress))
    summary = _summary(kern, None)
    batches = list(_cta_batches(kern))
    offsets = np.cumsum([0] + [len(b[1]) for b in batches])
    mem_offsets = np.cumsum([0] + [len(b[3]) for b in batches])
    h = kern.parsed.header
    return Trace(
        kernel=h.kernel, grid=h.grid, block=h.block, source_sha256=kern.parsed.sha256,
        path_ptr=np.concatenate([[0]] + [b[0][1:] + o for b, o in zip(batches, offsets)]).astype(np.int64),
        path=np.concatenate([b[1] for b in batches]).astype(np.uint32),
        mem_ptr=np.concatenate([[0]] + [b[2][1:] + o for b, o in zip(batches, mem_offsets)]).astype(np.int64),
        mem_addr=np.concatenate([b[3] for b in batches]).astype(np.uint64),
        mem_format=MEM_FORMAT, attrs=_attrs(kern, summary), **_cfg_arrays(kern),
    )


def convert(path, out, progress: Progress = None) -> ImportSummary:
    """Import one kernel trace into the trace file ``out`` (written atomically); returns the summary."""
    kern = _recover(parse_kernel(path, progress))
    summary = _summary(kern, out)
    h = kern.parsed.header
    with TraceWriter(out, kernel=h.kernel, grid=h.grid, block=h.block, cfg=_cfg_arrays(kern),
                     source_sha256=kern.parsed.sha256, attrs=_attrs(kern, summary), with_mem=True,
                     mem_format=MEM_FORMAT) as writer:
        for batch in _cta_batches(kern):
            writer.append(*batch)
    return summary


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
