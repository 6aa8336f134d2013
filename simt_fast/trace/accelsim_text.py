"""Accel-Sim trace text line by line, in plain Python: the format's specification.

:class:`LineReader` takes one line at a time (``feed``) and either stores what it says in a
:class:`LineStore` or raises the one-sentence :class:`TraceError` naming the file and line. It is
used two ways:

* as the reference importer (:mod:`simt_fast.trace.accelsim_reference` feeds it every line);
* by the compiled scanner (:mod:`simt_fast.trace.accelsim_scan`), which takes the lines it can
  prove well formed itself and hands every other line to ``feed`` — the header, the first line
  at each PC (whose opcode and registers are decoded here), and any line it does not accept. So
  every error message comes from this module, whichever importer meets it.

The reader's state between lines lives in one int64 array (``st``, indices below) and the store's
numpy arrays, which the scanner reads and updates in place: handing a line back and forth costs
no copying.

**The store** keeps about a tenth of the text. Per instruction line, in file order, one flag
byte: its address kind (``K_NONE`` the line lists no address; ``K_LIST`` one address per thread
of the mask; ``K_STRIDE`` mode 1's base and stride), ``NEW_SLOT`` when its *slot* (its PC's
index in order of first appearance) is not the previous line's plus one, ``NEW_MASK`` when its
mask differs from the previous line's; the new slots and masks go to two streams, so straight
code with an unchanging mask costs one byte a line. Addresses go to a byte stream as LEB128
varints of zigzag-coded differences: each listed address minus the previous address of the
warp's stream (so a mode-2 line is its deltas), for ``K_STRIDE`` the base minus that, then the
stride; 64-bit wrapping arithmetic, so every uint64 address is kept exactly. Per warp (key
``cta * warps_per_cta + warp``) ``warp_info`` holds where its lines start in each array, its line
count + 1 (``DONE``, 0 while not complete) and the file lines of its first and last instruction.
"""

from __future__ import annotations

import lzma
import queue
import threading
from dataclasses import dataclass
from itertools import accumulate
from pathlib import Path
from typing import Callable, Iterator, Optional

import numpy as np

from . import sass
from .model import TraceError

MIN_TRACER_VERSION = 3
READ_CHUNK = 1 << 22  # bytes read (and hashed) at a time
LANES = 32
# progress(done, total[, stage]): bytes of the file read while reading it, then (convert) thread
# blocks written with the stage "writing"
Progress = Optional[Callable[..., None]]

# ``st``: the reader's state between lines. N_LINES, N_SLOTS, N_MASKS, N_BYTES: the store's fill;
# CUR_*: where the open warp's lines start; PREV_*: its last line's slot and mask, its last address
PHASE, CTA, WARP, EXPECTED, WARP_NO, COUNT, N_LINES, MASK_INSTS, LINE_NO, N_SLOTS, N_MASKS, N_BYTES, CUR_ROW0, \
    CUR_SLOT0, CUR_MASK0, CUR_BYTE0, CUR_FIRST_NO, CUR_LAST_NO, PREV_SLOT, PREV_MASK, PREV_ADDR = range(21)
N_STATE = 21
HEADER, BODY = 0, 1  # st[PHASE]
NO_CTA, CTA_WITHOUT_ID = -1, -2  # st[CTA] outside a thread block / inside, before 'thread block ='
# store.warp_info columns (DONE: the warp's line count + 1 once its block of lines is complete, 0 before;
# GROUP0: where the path recovery put the warp's first group, in its own stream of groups)
DONE, ROW0, SLOT0, MASK0, BYTE0, FIRST_NO, LAST_NO, GROUP0 = range(8)
N_WARP_INFO = 8
K_NONE, K_LIST, K_STRIDE = range(3)  # row flags: bits 0-1
KIND_BITS, NEW_SLOT, NEW_MASK, NEW_GROUP = 3, 4, 8, 16  # NEW_GROUP: set by the path recovery
MAX_LINE_BYTES = 32 * 10 + 2 * 10  # a line's addresses as varints, at most (32 of 10 bytes; base and stride)


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

    @property
    def n_ctas(self) -> int:
        return int(np.prod(self.grid))

    @property
    def threads_per_cta(self) -> int:
        return int(np.prod(self.block))

    @property
    def warps_per_cta(self) -> int:
        return -(-self.threads_per_cta // LANES)

    def cta_xyz(self, cta: int) -> tuple:
        gx, gy = self.grid[0], self.grid[1]
        return cta % gx, (cta // gx) % gy, cta // (gx * gy)


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
    imm: Optional[int] = None  # the immediate field of the first line at this PC (None: the line has none)

    @property
    def text(self) -> str:
        return f"/*{self.pc:04x}*/ {self.opcode}" + (" " + ", ".join(self.regs) if self.regs else "")


# ---------------------------------------------------------------------------------------------
# Reading the bytes
# ---------------------------------------------------------------------------------------------


def chunks(path: Path, progress: Progress, digest) -> Iterator[bytes]:
    """The decompressed bytes of a plain or xz-compressed trace, READ_CHUNK at a time; hashes them
    into ``digest`` and reports (bytes of the file read, file size) to ``progress``."""
    name = str(path)
    if not path.exists():
        raise TraceError(f"{name} does not exist")
    if path.is_dir():
        raise TraceError(f"{name} is a directory, not an Accel-Sim kernel trace")
    size = path.stat().st_size
    with open(path, "rb") as raw:
        stream = lzma.LZMAFile(raw) if name.endswith(".xz") else raw
        while True:
            try:
                chunk = stream.read(READ_CHUNK)
            except (lzma.LZMAError, EOFError) as e:
                raise TraceError(f"{name} is not a readable xz file ({e}); re-compress it or pass the plain "
                                 f".traceg") from None
            if not chunk:
                return
            digest.update(chunk)
            yield chunk
            if progress is not None:
                progress(raw.tell(), size)


def read_ahead(chunks_: Iterator[bytes], depth: int = 2) -> Iterator[bytes]:
    """The items of ``chunks_`` (`chunks`), taken on a second thread up to ``depth`` ahead of their
    consumer: reading, xz decompression and hashing release the GIL, so they run beside the
    compiled scanner (which releases it too) instead of between its chunks. An error the reading
    raises reaches the consumer where the chunk it stopped would have."""
    ready = queue.Queue(depth)
    stop = threading.Event()

    def put(item) -> bool:
        while not stop.is_set():
            try:
                ready.put(item, timeout=0.05)
                return True
            except queue.Full:
                continue
        return False

    def produce() -> None:
        try:
            for chunk in chunks_:
                if not put((True, chunk)):
                    return
            put((True, None))
        except BaseException as e:  # (handed to the consumer, raised there)
            put((False, e))

    reader = threading.Thread(target=produce, name="simt-fast-read", daemon=True)
    reader.start()
    try:
        while True:
            ok, item = ready.get()
            if not ok:
                raise item
            if item is None:
                return
            yield item
    finally:
        stop.set()
        reader.join()


def text_lines(path: Path, progress: Progress, digest) -> Iterator[tuple]:
    """(line number, text) of every line: split at newlines only, decoded as UTF-8 (errors replaced)."""
    number = 0
    tail = b""
    for chunk in chunks(path, progress, digest):
        chunk = tail + chunk
        cut = chunk.rfind(b"\n") + 1
        tail = chunk[cut:]
        for text in chunk[:cut].decode("utf-8", "replace").split("\n")[:-1]:
            number += 1
            yield number, text
    if tail:
        yield number + 1, tail.decode("utf-8", "replace")


# ---------------------------------------------------------------------------------------------
# Header
# ---------------------------------------------------------------------------------------------


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


# ---------------------------------------------------------------------------------------------
# Instruction lines
# ---------------------------------------------------------------------------------------------


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "es" if noun.endswith("s") else "s")


def _left(n: int) -> str:
    return "1 field is left" if n == 1 else f"{n} fields are left"


def cta_text(cta) -> str:
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
        if not 0 <= pc < 2**63:
            raise self.bad(number, f"PC '{tokens[o]}' is " + ("negative" if pc < 0 else "beyond any code address "
                                                                                       "(2**63 and up)"))
        if not 0 <= mask <= 0xFFFF_FFFF:
            raise self.bad(number, f"active mask '{tokens[o + 1]}' is not a 32-bit hex number")
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
                imm = int(tokens[k], 10)
            except ValueError:
                raise self.bad(number, f"the last field '{tokens[k]}' is not an immediate value (a decimal integer)") from None
            if ins.line == number:  # a direct branch's target (accelsim.stated_targets)
                ins.imm = imm
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


# ---------------------------------------------------------------------------------------------
# What the lines say, stored
# ---------------------------------------------------------------------------------------------


def _grown(a: np.ndarray, need: int) -> np.ndarray:
    """``a`` with room for at least ``need`` entries along its first axis, zeros after the old ones.
    Resized in place: a large array is remapped, not copied, so it is never held twice; by a quarter
    at a time, because numpy writes the zeros (the room costs memory before it is used)."""
    if need > len(a):
        a.resize((max(need, len(a) + len(a) // 4 + 1024),) + a.shape[1:], refcheck=False)
    return a


HASH_EMPTY = -1


def pc_hash(pc: int, size: int) -> int:
    """First bucket of ``pc`` in a table of ``size`` (a power of two) buckets; linear probing.
    SASS PCs step by 16 (8 before Volta), so consecutive instructions take consecutive buckets."""
    return ((pc >> 3) ^ (pc >> 20)) & (size - 1)


def varint(z: int) -> bytes:
    """LEB128 bytes of ``z`` (0 <= z < 2**64)."""
    out = bytearray()
    while z >= 0x80:
        out.append(z & 0x7F | 0x80)
        z >>= 7
    out.append(z)
    return bytes(out)


def zigzag(d: int) -> int:
    """The signed 64-bit difference ``d`` (any int, taken mod 2**64) as 0, -1, 1, -2, ... -> 0, 1, 2, 3, ..."""
    d %= 2**64
    if d >= 2**63:
        d -= 2**64
    return (d << 1) ^ (d >> 63)


def unzigzag(z: int) -> int:
    return (z >> 1) ^ -(z & 1)


class LineStore:
    """The instruction lines of one kernel trace (see *The store* in the module docstring), and
    the static instruction of every PC by slot."""

    def __init__(self, rows: int = 1 << 16, nbytes: int = 1 << 16):
        self.instrs: list = []  # Instruction per slot
        self.slot_of: dict = {}  # PC -> slot
        self.hash_pc = np.full(1 << 10, HASH_EMPTY, np.int64)  # open addressing: PC -> slot, for the scanner
        self.hash_slot = np.zeros(1 << 10, np.int32)
        self.static_bytes = np.zeros(1 << 12, np.uint8)  # per slot: its static tokens joined by one space
        self.static_ptr = np.zeros(1 << 8, np.int64)
        self.slot_tma = np.zeros(1 << 8, np.uint8)  # bulk copy: the address fields are not read
        self.slot_width = np.zeros(1 << 8, np.int64)  # the first mem-width field of a line with addresses
        self.row_flags = np.zeros(rows, np.uint8)
        self.slots = np.zeros(max(rows // 8, 1), np.int32)
        self.masks = np.zeros(max(rows // 8, 1), np.uint32)
        self.addr_bytes = np.zeros(nbytes, np.uint8)
        self.cta_seen = np.zeros(0, np.uint8)
        self.warp_info = np.zeros((0, N_WARP_INFO), np.int64)

    def begin(self, header: Header) -> None:
        """Size the per-CTA and per-warp tables (zero pages: only the touched ones cost memory)."""
        self.cta_seen = np.zeros(header.n_ctas, np.uint8)
        self.warp_info = np.zeros((header.n_ctas * header.warps_per_cta, N_WARP_INFO), np.int64)

    def slot(self, ins: Instruction) -> int:
        """The slot of ``ins``'s PC, registering it on first sight."""
        slot = self.slot_of.get(ins.pc)
        if slot is not None:
            return slot
        slot = len(self.instrs)
        self.instrs.append(ins)
        self.slot_of[ins.pc] = slot
        static = " ".join(ins.static_tokens).encode()
        self.static_ptr = _grown(self.static_ptr, slot + 2)
        start = int(self.static_ptr[slot])
        self.static_bytes = _grown(self.static_bytes, start + len(static))
        self.static_bytes[start:start + len(static)] = np.frombuffer(static, np.uint8)
        self.static_ptr[slot + 1] = start + len(static)
        self.slot_tma = _grown(self.slot_tma, slot + 1)
        self.slot_width = _grown(self.slot_width, slot + 1)
        self.slot_tma[slot] = sass.family(ins.opcode) in sass.TMA_FAMILIES
        if 2 * (slot + 1) > len(self.hash_pc):
            self._rehash(4 * len(self.hash_pc))
        else:
            self._hash_insert(ins.pc, slot)
        return slot

    def _hash_insert(self, pc: int, slot: int) -> None:
        size = len(self.hash_pc)
        b = pc_hash(pc, size)
        while self.hash_pc[b] != HASH_EMPTY:
            b = (b + 1) & (size - 1)
        self.hash_pc[b] = pc
        self.hash_slot[b] = slot

    def _rehash(self, size: int) -> None:
        self.hash_pc = np.full(size, HASH_EMPTY, np.int64)
        self.hash_slot = np.zeros(size, np.int32)
        for pc, slot in self.slot_of.items():
            self._hash_insert(pc, slot)

    def grow(self, st: np.ndarray) -> None:
        """Room for at least one more line of any kind (doubling what is short)."""
        self.row_flags = _grown(self.row_flags, int(st[N_LINES]) + 1)
        self.slots = _grown(self.slots, int(st[N_SLOTS]) + 1)
        self.masks = _grown(self.masks, int(st[N_MASKS]) + 1)
        self.addr_bytes = _grown(self.addr_bytes, int(st[N_BYTES]) + MAX_LINE_BYTES)

    def append(self, st: np.ndarray, slot: int, mask: int, addrs: Optional[list]) -> None:
        """One line of the open warp, with its addresses as a list (or None: the line lists none)."""
        self.grow(st)
        flags = K_NONE if addrs is None else K_LIST
        if st[COUNT] == 0 or slot != st[PREV_SLOT] + 1:
            flags |= NEW_SLOT
            self.slots[st[N_SLOTS]] = slot
            st[N_SLOTS] += 1
        if st[COUNT] == 0 or mask != st[PREV_MASK]:
            flags |= NEW_MASK
            self.masks[st[N_MASKS]] = mask
            st[N_MASKS] += 1
        st[PREV_SLOT], st[PREV_MASK] = slot, mask
        if addrs:
            before = [int(st[PREV_ADDR])] + addrs[:-1]
            data = b"".join(varint(zigzag(a - b)) for a, b in zip(addrs, before))
            start = int(st[N_BYTES])
            self.addr_bytes[start:start + len(data)] = np.frombuffer(data, np.uint8)
            st[N_BYTES] = start + len(data)
            st[PREV_ADDR] = addrs[-1] - 2**64 if addrs[-1] >= 2**63 else addrs[-1]  # int64 bits
        self.row_flags[st[N_LINES]] = flags


# ---------------------------------------------------------------------------------------------
# The line reader
# ---------------------------------------------------------------------------------------------


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
        raise TraceError(f"{name}:{number}: '{text}' is not a thread block of the grid {cta_text(grid)}")
    return xyz


class LineReader:
    """Feed it the lines of one kernel trace in order; :meth:`finish` after the last."""

    def __init__(self, name: str, store: LineStore):
        self.name = name
        self.store = store
        self.header = Header()
        self.parser: Optional[_LineParser] = None
        self.st = np.zeros(N_STATE, np.int64)
        self.st[CTA] = NO_CTA
        self.st[WARP] = -1
        self.st[EXPECTED] = -1
        self.rows_of_warp: Optional[int] = None  # set to a warp key to collect its lines' numbers
        self.rows_numbers: list = []

    def feed(self, number: int, text: str) -> None:
        st, name = self.st, self.name
        st[LINE_NO] = number
        tokens = text.split()
        if len(tokens) >= 6 and st[WARP] >= 0 and st[EXPECTED] >= 0 and tokens[0][0] != "#":
            # an instruction line (every block/warp keyword line has at most four fields)
            self._instruction(number, tokens)
            return
        stripped = text.strip()
        if not stripped:
            return
        if st[PHASE] == HEADER:
            if stripped.startswith("-"):
                _header_line(self.header, name, number, stripped)
                return
            if stripped.startswith("#BEGIN_TB"):
                _check_header(self.header, name, number)
                self.parser = _LineParser(name, self.header)
                self.store.begin(self.header)
                st[PHASE] = BODY
            elif stripped.startswith("#"):
                return
            else:
                raise TraceError(f"{name}:{number}: expected a '-key = value' header line or '#BEGIN_TB', found "
                                 f"'{stripped[:60]}'")
        if stripped.startswith("#BEGIN_TB"):
            if st[CTA] != NO_CTA or st[WARP] >= 0:
                raise TraceError(f"{name}:{number}: '#BEGIN_TB' before the previous thread block's '#END_TB'")
            st[CTA] = CTA_WITHOUT_ID
            return
        if stripped.startswith("#END_TB"):
            if st[CTA] == NO_CTA:
                raise TraceError(f"{name}:{number}: '#END_TB' without a '#BEGIN_TB'")
            self._close_warp()
            self._check_cta_complete(number)
            st[CTA] = NO_CTA
            return
        if stripped.startswith("#"):
            return
        if st[CTA] == NO_CTA:
            raise TraceError(f"{name}:{number}: '{stripped[:60]}' is outside a thread block (#BEGIN_TB ... #END_TB)")
        if "=" in stripped:
            key, _, value = stripped.partition("=")
            key = " ".join(key.split())
            if key == "thread block":
                self._thread_block(number, stripped, value)
            elif key == "warp":
                self._warp(number, stripped, value)
            elif key == "insts":
                if st[WARP] < 0 or st[EXPECTED] >= 0:
                    raise TraceError(f"{name}:{number}: 'insts =' must follow a 'warp =' line")
                st[EXPECTED] = _int_field(name, number, stripped, value)
            # other 'key = value' lines of a block (cluster id, cluster rank, ...) carry nothing we need
            return
        if st[WARP] < 0 or st[EXPECTED] < 0:
            raise TraceError(f"{name}:{number}: an instruction line before the warp's 'warp =' and 'insts =' lines")
        self.parser.parse(number, tokens)  # too few fields for an instruction: raises, naming what is missing

    def _instruction(self, number: int, tokens: list) -> None:
        st, store = self.st, self.store
        pc, mask, addrs = self.parser.parse(number, tokens)
        ins = self.parser.instrs[pc]
        slot = store.slot(ins)
        if store.slot_width[slot] == 0:  # the first width at this PC, whoever read the line
            store.slot_width[slot] = ins.mem_width
        store.append(st, slot, mask, addrs)
        st[N_LINES] += 1
        st[MASK_INSTS] += mask.bit_count()
        st[COUNT] += 1
        if st[COUNT] == 1:
            st[CUR_FIRST_NO] = number
        st[CUR_LAST_NO] = number
        if self.rows_of_warp == int(st[CTA]) * self.header.warps_per_cta + int(st[WARP]):
            self.rows_numbers.append(number)

    def _cta(self) -> tuple:
        return self.header.cta_xyz(int(self.st[CTA]))

    def _close_warp(self) -> None:
        st = self.st
        if st[WARP] < 0:
            return
        if st[COUNT] != st[EXPECTED]:
            raise TraceError(f"{self.name}:{st[WARP_NO]}: warp {st[WARP]} of thread block {cta_text(self._cta())} "
                             f"announces {st[EXPECTED]} instructions but {st[COUNT]} follow")
        key = int(st[CTA]) * self.header.warps_per_cta + int(st[WARP])
        self.store.warp_info[key, :GROUP0] = (st[COUNT] + 1, st[CUR_ROW0], st[CUR_SLOT0], st[CUR_MASK0],
                                              st[CUR_BYTE0], st[CUR_FIRST_NO], st[CUR_LAST_NO])
        st[WARP] = -1

    def _check_cta_complete(self, number: int) -> None:
        st = self.st
        if st[CTA] == CTA_WITHOUT_ID:
            raise TraceError(f"{self.name}:{number}: thread block without a 'thread block = x,y,z' line")
        wpc = self.header.warps_per_cta
        for w in range(wpc):
            if self.store.warp_info[int(st[CTA]) * wpc + w, DONE] <= 1:
                raise TraceError(f"{self.name}:{number}: warp {w} of thread block {cta_text(self._cta())} has no "
                                 f"instructions, so its threads' paths are unknown")

    def _thread_block(self, number: int, stripped: str, value: str) -> None:
        st, h = self.st, self.header
        if st[CTA] != CTA_WITHOUT_ID:
            raise TraceError(f"{self.name}:{number}: a second 'thread block =' line in one thread block")
        cta = _triple_in_grid(self.name, number, stripped, value, h.grid)
        lin = cta[0] + h.grid[0] * (cta[1] + h.grid[1] * cta[2])
        if self.store.cta_seen[lin]:
            raise TraceError(f"{self.name}:{number}: thread block {cta_text(cta)} appears twice")
        self.store.cta_seen[lin] = 1
        st[CTA] = lin

    def _warp(self, number: int, stripped: str, value: str) -> None:
        st, h = self.st, self.header
        self._close_warp()
        if st[CTA] == CTA_WITHOUT_ID:
            raise TraceError(f"{self.name}:{number}: 'warp =' before the block's 'thread block =' line")
        w = _int_field(self.name, number, stripped, value)
        if w >= h.warps_per_cta or self.store.warp_info[int(st[CTA]) * h.warps_per_cta + w, DONE]:
            raise TraceError(f"{self.name}:{number}: warp {w} is not a new warp of a {h.threads_per_cta}-thread "
                             f"block ({h.warps_per_cta} warps)")
        st[WARP], st[EXPECTED], st[WARP_NO], st[COUNT] = w, -1, number, 0
        st[CUR_ROW0], st[CUR_SLOT0], st[CUR_MASK0], st[CUR_BYTE0] = st[N_LINES], st[N_SLOTS], st[N_MASKS], st[N_BYTES]
        st[PREV_ADDR] = 0

    def finish(self) -> None:
        """After the last line: everything the file must have had."""
        st, name = self.st, self.name
        if st[PHASE] == HEADER:
            raise TraceError(f"{name}: no thread block (#BEGIN_TB) follows the header, so the trace has no instructions")
        if st[CTA] != NO_CTA:
            raise TraceError(f"{name}:{st[LINE_NO]}: the file ends inside a thread block (no '#END_TB')")
        missing = np.flatnonzero(self.store.cta_seen == 0)
        if len(missing):
            raise TraceError(f"{name}: thread block {cta_text(self.header.cta_xyz(int(missing[0])))} of the "
                             f"{self.header.n_ctas}-block grid is missing, so its threads' paths are unknown (was the "
                             f"trace cut short?)")


@dataclass
class ScannedKernel:
    """Every instruction line of one kernel trace (the store's arrays, trimmed) and its header."""

    path: Path
    header: Header
    instrs: list  # Instruction per slot, mem_width final
    row_flags: np.ndarray
    slots: np.ndarray
    masks: np.ndarray
    addr_bytes: np.ndarray
    warp_info: np.ndarray  # per warp key: DONE, ROW0, SLOT0, MASK0, BYTE0, FIRST_NO, LAST_NO, GROUP0
    sha256: str
    n_lines: int
    mask_insts: int

    @property
    def name(self) -> str:
        return str(self.path)

    @property
    def nbytes(self) -> int:
        """What the store holds, in bytes."""
        return sum(a.nbytes for a in (self.row_flags, self.slots, self.masks, self.addr_bytes, self.warp_info))


def scanned(path: Path, reader: LineReader, sha256: str) -> ScannedKernel:
    """What ``reader`` stored, once its last line was fed (the arrays shrunk in place to their fill)."""
    reader.finish()
    store, st = reader.store, reader.st
    for slot, ins in enumerate(store.instrs):
        ins.mem_width = int(store.slot_width[slot])
    arrays = [store.row_flags, store.slots, store.masks, store.addr_bytes]
    for a, n in zip(arrays, (st[N_LINES], st[N_SLOTS], st[N_MASKS], st[N_BYTES])):
        a.resize(int(n), refcheck=False)
    return ScannedKernel(path=path, header=reader.header, instrs=store.instrs, row_flags=arrays[0], slots=arrays[1],
                         masks=arrays[2], addr_bytes=arrays[3], warp_info=store.warp_info, sha256=sha256,
                         n_lines=int(st[N_LINES]), mask_insts=int(st[MASK_INSTS]))


def addressless_note(trace) -> Optional[str]:
    """The one-line note for a run with the memory model on a trace imported with memory lines that
    carry no address (LDC, texture, surface: docs/trace.md, *Memory addresses*); None otherwise."""
    n = int(trace.attrs.get("accelsim_addressless_mem_lines", 0) or 0)
    if not n:
        return None
    return (f"{n} memory warp instructions of this Accel-Sim trace carry no address (LDC, texture, surface); the "
            f"memory model sees every thread of them access offset 0")
