"""Accel-Sim trace files written by the tests: a line formatter, a file writer, and a random SIMT
machine that runs small structured SASS-like programs and prints what the NVBit tracer would
(``mask = active & guard``), keeping every thread's true PC sequence and memory entries as the
ground truth the importer's recovered paths are compared with."""

from __future__ import annotations

import hashlib
import lzma
import random
from dataclasses import dataclass, field
from pathlib import Path

NO_ACCESS = 0xFFFF_FFFF_FFFF_FFFF
SHMEM_BASE = 0x7F00_0000_0000
LOCAL_BASE = 0x7F01_0000_0000


def line(pc, mask, opcode, dst=(), src=(), mem=None, imm=None, lineno=None) -> str:
    """One trace line: ``mem`` is ``(width, mode, *fields)`` with fields as written (strings/ints)."""
    parts = [] if lineno is None else [str(lineno)]
    parts += [f"{pc:04x}", f"{mask:08x}", str(len(dst)), *dst, opcode, str(len(src)), *src]
    if mem is None:
        parts.append("0")
    else:
        parts += [str(f) for f in mem]
    if imm is not None:
        parts.append(str(imm))
    return " ".join(parts) + " "


def header(name="_Z6kernelPi", grid=(1, 1, 1), block=(32, 1, 1), version=4, lineinfo=False, extra=()) -> list:
    out = [f"-kernel name = {name}", "-kernel id = 1", "-grid dim = ({},{},{})".format(*grid),
           "-block dim = ({},{},{})".format(*block), "-shmem = 0", "-nregs = 16", "-binary version = 70",
           "-cuda stream id = 0", f"-shmem base_addr = {SHMEM_BASE:#018x}", f"-local mem base_addr = {LOCAL_BASE:#018x}",
           "-nvbit version = 1.5.5", f"-accelsim tracer version = {version}"]
    if version >= 4:
        out.append(f"-enable lineinfo = {int(lineinfo)}")
    out += list(extra)
    out += ["", "#traces format = [line_num] PC mask dest_num [reg_dests] opcode src_num [reg_srcs] mem_width "
                "[adrrescompress?] [mem_addresses] immediate", "", ""]
    return out


def trace_text(ctas: dict, **hdr) -> str:
    """``ctas``: {(x, y, z): [warp 0 lines, warp 1 lines, ...]} in the order to write them."""
    out = header(**hdr)
    for cta, warps in ctas.items():
        out += ["#BEGIN_TB", "", "thread block = {},{},{}".format(*cta)]
        for w, lines in enumerate(warps):
            out += ["", f"warp = {w}", f"insts = {len(lines)}", *lines]
        out += ["", "#END_TB", ""]
    return "\n".join(out) + "\n"


def write(path, text: str) -> Path:
    path = Path(path)
    if path.name.endswith(".xz"):
        path.write_bytes(lzma.compress(text.encode(), preset=1))
    else:
        path.write_text(text)
    return path


# ---------------------------------------------------------------------------------------------
# A random SIMT machine
# ---------------------------------------------------------------------------------------------


@dataclass
class Ins:
    opcode: str
    guard: float | None = None  # probability that a thread's guard is true; None: unguarded
    target: object = None  # label (while building), then instruction index, of a BRA
    mem: str = ""  # "global" / "shared" / "local" for memory instructions
    max_taken: int = 0  # loop latches: a thread's guard is false after this many taken iterations


def _pad(rng: random.Random, opcode: str, guarded: bool) -> Ins:
    """The instruction at a branch target: unguarded as nvcc emits it, unless ``guarded``."""
    return Ins(opcode, rng.uniform(0.0, 0.7) if guarded and rng.random() < 0.5 else None)


def _statements(rng: random.Random, depth: int, budget: list, labels: list, guarded: bool = False) -> list:
    items = []
    while budget[0] > 0 and rng.random() < 0.8:
        budget[0] -= 1
        r = rng.random()
        guard = rng.choice([None, None, rng.uniform(0.2, 0.8)])
        if r < 0.3 or depth >= 3:
            op = rng.choice(["IADD3", "FFMA", "LDG.E", "STG.E", "LDS", "STL", "MUFU.RCP", "ATOMG.E.ADD"])
            mem = {"LDG.E": "global", "STG.E": "global", "ATOMG.E.ADD": "global", "LDS": "shared", "STL": "local"}
            items.append(Ins(op, guard, mem=mem.get(op, "")))
        elif r < 0.5:  # if / else
            l_else, l_end = len(labels), len(labels) + 1
            labels += [None, None]
            items.append(Ins("BRA", rng.uniform(0.2, 0.8), target=l_else))
            items += _statements(rng, depth + 1, budget, labels, guarded)
            items.append(Ins("BRA", None, target=l_end))
            items += [("label", l_else), _pad(rng, "IADD3", guarded)]
            items += _statements(rng, depth + 1, budget, labels, guarded)
            items += [("label", l_end), _pad(rng, "NOP", guarded)]
        elif r < 0.65:  # if-then
            l_end = len(labels)
            labels.append(None)
            items.append(Ins("BRA", rng.uniform(0.2, 0.8), target=l_end))
            items += _statements(rng, depth + 1, budget, labels, guarded)
            items += [("label", l_end), _pad(rng, "NOP", guarded)]
        elif r < 0.85:  # loop with a bottom test
            l_head = len(labels)
            labels.append(None)
            items += [("label", l_head), _pad(rng, "NOP", guarded)]
            items += _statements(rng, depth + 1, budget, labels, guarded)
            items.append(Ins("BRA", rng.uniform(0.3, 0.8), target=l_head, max_taken=3))
        elif r < 0.93:
            items.append(Ins("EXIT", rng.uniform(0.05, 0.4)))  # an early exit, guarded
        elif r < 0.96:  # BRA.DIV: jumps over its body only when the warp is diverged
            l_end = len(labels)
            labels.append(None)
            # the converged path starts unguarded, as nvcc emits it (a thread predicated off on the
            # instruction after a not-taken BRA.DIV would look as if it had jumped)
            items += [Ins("BRA.DIV", None, target=l_end), Ins("IADD3")]
            items += _statements(rng, depth + 1, budget, labels, guarded)
            items += [("label", l_end), _pad(rng, "NOP", guarded)]
        else:
            items.append(Ins("BRA", 0.0, target=None))  # a branch nobody takes (target set below)
    return items


def random_program(rng: random.Random, barrier: bool, guarded_targets: bool = False) -> list:
    """A structured program; every branch target is an unguarded instruction (as nvcc emits)
    unless ``guarded_targets``, where half of them carry a random guard."""
    labels: list = []
    body = [Ins("S2R")] + _statements(rng, 0, [rng.randint(2, 14)], labels, guarded_targets)
    if barrier:
        body += [Ins("BAR.SYNC")] + _statements(rng, 0, [rng.randint(0, 4)], labels, guarded_targets)
    body += [Ins("EXIT")]
    program = []
    for item in body:
        if isinstance(item, tuple):
            labels[item[1]] = len(program)
        else:
            program.append(item)
    for ins in program:
        if ins.opcode.startswith("BRA"):
            ins.target = labels[ins.target] if ins.target is not None else len(program) - 1
    return program


def _chance(seed, *key) -> float:
    h = hashlib.blake2b(repr((seed, *key)).encode(), digest_size=8).digest()
    return int.from_bytes(h, "little") / 2**64


@dataclass
class WarpRun:
    lines: list = field(default_factory=list)  # (pc index, mask, {lane: address})
    pcs: dict = field(default_factory=dict)  # lane -> true PC index sequence
    mem: dict = field(default_factory=dict)  # lane -> true /mem entries


def run_warp(program: list, lanes: int, seed, thread0: int, mode: str, rng: random.Random) -> WarpRun:
    """Execute one warp. ``mode``: "merge" (threads at one PC always execute together; the
    group to run is random) or "split" (groups split at branches, never merge, run in random
    order: two groups at one PC execute it separately, as independent thread scheduling may)."""
    run = WarpRun(pcs={t: [] for t in range(lanes)}, mem={t: [] for t in range(lanes)})
    count: dict = {}
    groups = [[0, set(range(lanes))]]  # [pc, lanes]
    alive = set(range(lanes))  # not exited
    while groups:
        if mode == "merge":
            merged: dict = {}
            for pc, g in groups:
                merged.setdefault(pc, set()).update(g)
            groups = [[pc, g] for pc, g in merged.items()]
        gi = rng.randrange(len(groups))
        pc, group = groups.pop(gi)
        ins = program[pc]
        mask = 0
        addrs = {}
        for t in sorted(group):
            k = count.get((t, pc), 0)
            count[(t, pc)] = k + 1
            on = ins.guard is None or _chance(seed, thread0 + t, pc, k) < ins.guard
            if ins.max_taken and k >= ins.max_taken:
                on = False
            run.pcs[t].append(pc)
            if ins.mem:
                address = _address(ins.mem, thread0 + t, pc, k, seed)
                run.mem[t].append(address if on else NO_ACCESS)
                addrs[t] = _generic(ins.mem, address)
            if on:
                mask |= 1 << t
        run.lines.append((pc, mask, {t: a for t, a in addrs.items() if mask >> t & 1}))
        on_lanes = {t for t in group if mask >> t & 1}
        off_lanes = group - on_lanes
        if ins.opcode == "BRA":
            nxt = [(ins.target, on_lanes), (pc + 1, off_lanes)]
        elif ins.opcode == "BRA.DIV":
            nxt = [(pc + 1 if group == alive else ins.target, group)]
        elif ins.opcode == "EXIT":
            nxt = [(pc + 1, off_lanes)]
            alive -= on_lanes
        else:
            nxt = [(pc + 1, group)]
        for p, g in nxt:
            if g:
                groups.insert(gi, [p, g])
    return run


def _address(space, thread, pc, k, seed) -> int:
    style = int(_chance(seed, "style", pc) * 3)
    if space == "global":
        base = 0x7F5C_1B00_0000 + pc * 0x10000 + k * 0x400
        return base + [4 * thread, 8 * (thread // 2), int(_chance(seed, thread, pc, k, "r") * 4096) * 4][style]
    if space == "shared":
        return 0x100 * pc % 0x4000 + [4 * thread, 0, 4 * (thread * 3 % 32)][style]
    return 16 * k + [0, 4, 8][style]  # local: the thread's own frame


def _generic(space, address) -> int:
    """What NVBit reports: shared/local offsets inside their generic windows."""
    return address + {"global": 0, "shared": SHMEM_BASE, "local": LOCAL_BASE}[space]


def format_lines(program: list, run: WarpRun, rng: random.Random, lineinfo: bool, imm: bool,
                 drop_empty: bool = False, stated_targets: bool = False) -> list:
    """The tracer's lines of a warp run; ``drop_empty``: as a tracer that omits lines no thread's
    guard was true on (which leaves some jumps to land where the lines do not carry a thread);
    ``stated_targets``: a BRA's immediate is its target PC, as the NVBit tracer writes it (else every
    immediate is a small random number)."""
    out = []
    for pc, mask, addrs in run.lines:
        ins = program[pc]
        if drop_empty and not mask:
            continue
        dst, src = (("R2",), ("R4", "R255")) if ins.opcode not in ("BRA", "BRA.DIV", "EXIT", "NOP", "BSYNC",
                                                                   "BAR.SYNC") else ((), ())
        mem = None
        if ins.mem:
            mem = _encode(4, [addrs[t] for t in sorted(addrs)], mask, rng)
        value = rng.randint(-5, 5)
        if stated_targets and ins.opcode.startswith("BRA"):
            value = 16 * ins.target
        out.append(line(pc * 16, mask, ins.opcode, dst, src, mem, imm=value if imm else None,
                        lineno=rng.randint(1, 900) if lineinfo else None))
    return out


def _encode(width, addrs, mask, rng) -> tuple:
    """The tracer's address compression: base+stride for a run of threads at one stride, else
    base+deltas; or the plain list (compression off)."""
    lanes = [t for t in range(32) if mask >> t & 1]
    contiguous = bool(lanes) and lanes == list(range(lanes[0], lanes[0] + len(lanes)))
    strides = {b - a for a, b in zip(addrs, addrs[1:])}
    if rng.random() < 0.25:
        return (width, 0, *[f"{a:#018x}" for a in addrs])
    if not addrs:
        return (width, 1, "0x0", 0)
    if contiguous and len(addrs) > 1 and len(strides) == 1:
        return (width, 1, f"{addrs[0]:#x}", strides.pop())
    return (width, 2, f"{addrs[0]:#x}", *[b - a for a, b in zip(addrs, addrs[1:])])


@dataclass
class MachineTrace:
    text: str  # the trace file
    pcs: list  # per thread: its true PC sequence
    mem: list  # per thread: its true /mem entries
    on: list  # per thread: the PCs of the lines with it in the mask


def machine_trace(seed, mode: str, guarded_targets: bool, drop_empty: bool = False,
                  stated_targets: bool = False) -> MachineTrace:
    """A random program (1-70 threads, 1-2 CTAs, tracer versions 3-5, line numbers or not) run by
    the SIMT machine, printed as the tracer would (``drop_empty``, ``stated_targets``: see
    :func:`format_lines`; ``stated_targets`` writes tracer version 4 or 5, which have immediates)."""
    rng = random.Random(seed)
    program = random_program(rng, barrier=rng.random() < 0.3, guarded_targets=guarded_targets)
    n_threads, n_ctas = rng.randint(1, 70), rng.randint(1, 2)
    lineinfo, version = rng.random() < 0.3, rng.choice([3, 4, 5])
    if stated_targets:
        version = max(version, 4)
    out = MachineTrace("", [], [], [])
    ctas = {}
    for cta in range(n_ctas):
        warps = []
        for w in range(-(-n_threads // 32)):
            lanes = min(32, n_threads - 32 * w)
            run = run_warp(program, lanes, seed, cta * n_threads + 32 * w, mode, rng)
            warps.append(format_lines(program, run, rng, lineinfo and version >= 4, version >= 4, drop_empty,
                                      stated_targets))
            out.pcs += [[16 * p for p in run.pcs[t]] for t in range(lanes)]
            out.mem += [run.mem[t] for t in range(lanes)]
            out.on += [[16 * pc for pc, mask, _ in run.lines if mask >> t & 1] for t in range(lanes)]
        ctas[(cta, 0, 0)] = warps
    out.text = trace_text(ctas, grid=(n_ctas, 1, 1), block=(n_threads, 1, 1), version=version,
                          lineinfo=lineinfo and version >= 4)
    return out
