"""Plain-Python reference model of the interpreter loop (:func:`simt_fast.emu.machine.run`).

It shares the decoded program and the per-thread ALU semantics (:func:`simt_fast.emu.alu.alu`,
tested on its own against Python integers and exact rationals), but nothing else: it runs each
thread **alone** until it exits or reaches a barrier (no warps, no lock step), resolves addresses
with its own code, and builds paths directly. For race-free kernels without warp-level
instructions the per-thread paths, the instruction count and the memory contents must equal the
numba interpreter's (tests/test_emu_reference.py) -- which checks the claim of docs/emu.md that
per-thread control flow does not depend on the scheduling order.
"""

from __future__ import annotations

import numpy as np

from ..ir.model import OpClass
from ..trace.model import NO_ACCESS, PARAM_TAG
from . import codes as C
from .alu import alu
from .exec_memory import atom_apply
from .device_memory import DeviceMemory
from .errors import EmuError
from .host import Kernel, _check_args, _launch_size

_MEM_CLASSES = (OpClass.MEM_GLOBAL, OpClass.MEM_SHARED, OpClass.MEM_LOCAL, OpClass.MEM_CONST)
_WINDOWS = {1: C.S_SHARED, 2: C.S_LOCAL, 3: C.S_CONST, 4: C.S_PARAM}


def _resolve(mem: DeviceMemory, space: int, addr: int, size: int, t: int) -> tuple:
    """(byte offset of an access in the flat memory, its state space, its address in that space)."""
    if space == C.S_GENERIC:
        w = addr >> C.WINDOW_SHIFT
        if w == 0:
            space = C.S_GLOBAL
        elif w in _WINDOWS:
            space = _WINDOWS[w]
            addr -= C.WINDOW[space]
        else:
            raise EmuError(f"reference: generic address {addr:#x} is in no state space")
    if addr % size:
        raise EmuError(f"reference: misaligned {size}-byte access at {addr:#x}")
    if space == C.S_GLOBAL:
        for lo, hi, off in zip(mem.gbuf_lo.tolist(), mem.gbuf_hi.tolist(), mem.gbuf_off.tolist()):
            if lo <= addr and addr + size <= hi:
                return off + addr - lo, space, addr
        raise EmuError(f"reference: global access at {addr:#x} outside every buffer")
    base, limit = {
        C.S_SHARED: (mem.shared_off, mem.shared_size),
        C.S_LOCAL: (mem.local_off + t * mem.local_size, mem.local_size),
        C.S_CONST: (mem.const_off, int(mem.rgn[1])),
        C.S_PARAM: (mem.param_off, int(mem.rgn[3])),
    }[space]
    if addr + size > limit:
        raise EmuError(f"reference: access at {addr:#x} beyond its {limit}-byte state space")
    return base + addr, space, addr


def _mem_entry(op_class: int, modifiers, space: int, addr: int) -> int:
    """The /mem value of an access (DESIGN §3), from the trace's op_class of the instruction."""
    if op_class == OpClass.MEM_GLOBAL:  # global, generic, texture: the address the thread used
        return addr if space == C.S_GLOBAL else addr + C.WINDOW[space]
    if op_class == OpClass.MEM_CONST and any(m.split("::")[0] == "param" for m in modifiers):
        return addr | int(PARAM_TAG)
    return addr


def _load(buf: np.ndarray, off: int, size: int) -> int:
    return int.from_bytes(buf[off : off + size].tobytes(), "little")


def _store(buf: np.ndarray, off: int, size: int, value: int) -> None:
    buf[off : off + size] = np.frombuffer((value & ((1 << (8 * size)) - 1)).to_bytes(size, "little"), np.uint8)


def _sregs(t: int, cta: int, grid, block) -> dict:
    bx, by, _ = block
    gx, gy, _ = grid
    lane = t % 32
    bit = 1 << lane
    vals = {
        ("%tid", "x"): t % bx, ("%tid", "y"): (t // bx) % by, ("%tid", "z"): t // (bx * by),
        ("%ntid", "x"): block[0], ("%ntid", "y"): block[1], ("%ntid", "z"): block[2],
        ("%ctaid", "x"): cta % gx, ("%ctaid", "y"): (cta // gx) % gy, ("%ctaid", "z"): cta // (gx * gy),
        ("%nctaid", "x"): grid[0], ("%nctaid", "y"): grid[1], ("%nctaid", "z"): grid[2],
        ("%laneid", None): lane, ("%warpid", None): t // 32, ("%nwarpid", None): (bx * by * block[2] + 31) // 32,
        ("%lanemask_eq", None): bit, ("%lanemask_le", None): (bit << 1) - 1, ("%lanemask_lt", None): bit - 1,
        ("%lanemask_ge", None): (~(bit - 1)) & 0xFFFFFFFF, ("%lanemask_gt", None): (~((bit << 1) - 1)) & 0xFFFFFFFF,
        ("%smid", None): 0, ("%nsmid", None): 1,
    }
    return {C.SREG_ID[k]: v for k, v in vals.items()}


def run_reference(kern: Kernel, grid, block, args, shared_bytes: int = 0, max_insts: int = 10**8, mem_out=None):
    """Run the kernel thread by thread; returns (list of per-thread block paths, thread_insts).

    Array arguments are updated in place, as with :func:`simt_fast.emu.launch`. ``mem_out``, a
    list, receives each thread's /mem entries (a list of ints per thread, DESIGN §3).
    """
    grid3, block3 = _launch_size(grid, block)
    args = list(args)
    _check_args(kern.func, args)
    T = block3[0] * block3[1] * block3[2]
    prog = kern.program
    n = prog.n_instrs
    mem = DeviceMemory(kern, args, T, shared_bytes)
    buf = mem.mem
    block_of = kern.block_of.tolist()
    op_class = kern.flat["op_class"].tolist()
    instrs = kern.func.instructions
    leader = kern.is_leader.tolist()
    paths = []
    insts = 0
    cc = prog.n_regs
    for cta in range(grid3[0] * grid3[1] * grid3[2]):
        buf[mem.shared_off : mem.shared_off + mem.shared_size] = 0
        buf[mem.local_off : mem.local_off + T * mem.local_size] = 0
        regs = [[0] * (prog.n_regs + 1) for _ in range(T)]
        pcs = [0] * T
        done = [False] * T
        cta_paths = [[block_of[0]] for _ in range(T)]
        cta_mem = [[] for _ in range(T)]
        sregs = [_sregs(t, cta, grid3, block3) for t in range(T)]
        barpred = {}
        while not all(done):
            waiting = 0
            for t in range(T):
                if done[t]:
                    continue
                r = regs[t]

                def rd(i, j):
                    k = int(prog.okind[i, j])
                    v = int(prog.oval[i, j])
                    if k == C.K_REG:
                        return r[v]
                    if k == C.K_SREG:
                        return sregs[t].get(v, 0)
                    return v if k == C.K_IMM else 0

                def wr(i, j, value):
                    if int(prog.okind[i, j]) == C.K_REG:
                        r[int(prog.oval[i, j])] = int(value) & 0xFFFFFFFFFFFFFFFF

                while True:
                    i = pcs[t]
                    o = int(prog.op[i])
                    insts += 1
                    if insts > max_insts:
                        raise EmuError("reference: max_insts exceeded")
                    gp = int(prog.gpred[i])
                    active = gp < 0 or ((r[gp] & 1) != int(prog.gneg[i]))
                    npc = i + 1
                    stop = False
                    if o in (C.OP_BRA, C.OP_BRX, C.OP_EXIT):
                        if active:
                            if o == C.OP_BRA:
                                npc = int(prog.target[i])
                            elif o == C.OP_EXIT:
                                npc = n
                            else:
                                idx = rd(i, 1) & 0xFFFFFFFF
                                lo, hi = int(prog.jt_ptr[i]), int(prog.jt_ptr[i + 1])
                                if idx >= hi - lo:
                                    raise EmuError("reference: brx.idx index out of range")
                                npc = int(prog.jt_idx[lo + idx])
                        stop = True
                    elif o == C.OP_BAR:
                        stop = True
                    elif o in (C.OP_SHFL, C.OP_VOTE, C.OP_ACTIVEMASK):
                        raise EmuError("reference: warp-level instructions need the lock-step interpreter")
                    elif o == C.OP_TEX:
                        raise EmuError("reference: texture fetches are not modelled by the reference")
                    elif o == C.OP_TRAP:
                        if active:
                            raise EmuError("reference: trap")
                    elif op_class[i] in _MEM_CLASSES and (not active or o == C.OP_MEMHINT):
                        cta_mem[t].append(int(NO_ACCESS))
                    elif not active or o == C.OP_NOP:
                        pass
                    elif o in (C.OP_LD, C.OP_ST, C.OP_ATOM):
                        ty = int(prog.ty[i])
                        sz = ty & 0xF
                        k0 = int(prog.okind[i, 0])
                        base = (r[int(prog.oval[i, 0])] + int(prog.ooff[i, 0])) if k0 == C.K_ADDR else int(prog.oval[i, 0])
                        base &= 0xFFFFFFFFFFFFFFFF
                        for j in range(int(prog.vec[i])):
                            off, space, addr = _resolve(mem, int(prog.space[i]), base + j * sz, sz, t)
                            if j == 0:
                                cta_mem[t].append(_mem_entry(op_class[i], instrs[i].modifiers, space, addr))
                            if o == C.OP_LD:
                                v = _load(buf, off, sz)
                                if ty >> 4 == C.KIND_S and v >> (8 * sz - 1):
                                    v -= 1 << (8 * sz)
                                wr(i, 1 + j, v)
                            elif o == C.OP_ST:
                                _store(buf, off, sz, rd(i, 1 + j))
                            else:
                                old = _load(buf, off, sz)
                                new = atom_apply(int(prog.sub[i]), ty, np.uint64(old), np.uint64(rd(i, 2)), np.uint64(rd(i, 3)))
                                _store(buf, off, sz, int(new))
                                if ty >> 4 == C.KIND_S and old >> (8 * sz - 1):
                                    old -= 1 << (8 * sz)
                                wr(i, 1, old)
                    elif o == C.OP_CVTA:
                        win = C.WINDOW.get(int(prog.space[i]), 0)
                        v = rd(i, 1) - win if int(prog.sub[i]) == 1 else rd(i, 1) + win
                        wr(i, 0, v & ((1 << (8 * (int(prog.ty[i]) & 0xF))) - 1))
                    elif o == C.OP_PACK:
                        esz = 8 * int(prog.ty2[i])
                        v = 0
                        for j in range(int(prog.vec[i])):
                            v |= (rd(i, 1 + j) & ((1 << esz) - 1)) << (esz * j)
                        wr(i, 0, v)
                    elif o == C.OP_UNPACK:
                        esz = 8 * int(prog.ty2[i])
                        v = rd(i, 0)
                        for j in range(int(prog.vec[i])):
                            wr(i, 1 + j, (v >> (esz * j)) & ((1 << esz) - 1))
                    else:
                        a, b, c, d = (np.uint64(rd(i, j)) for j in (1, 2, 3, 4))
                        args5 = (o, int(prog.ty[i]), int(prog.ty2[i]), int(prog.md[i]), int(prog.sub[i]))
                        if o == C.OP_SETP:
                            res, aux = alu(*args5, b, c, d, np.uint64(0), np.uint64(0))
                            wr(i, 0, res)
                            wr(i, 1, aux)
                        else:
                            res, aux = alu(*args5, a, b, c, d, np.uint64(r[cc]))
                            wr(i, 0, res)
                            if int(prog.md[i]) & C.M_CC:
                                r[cc] = int(aux)
                    pcs[t] = npc
                    if npc >= n:
                        done[t] = True
                    if leader[npc]:
                        cta_paths[t].append(block_of[npc])
                    if o == C.OP_BAR and active and int(prog.sub[i]):
                        barpred[t] = rd(i, 2) & 1
                    if done[t] or (o == C.OP_BAR and active):
                        break
                    if stop and leader[npc]:
                        continue
                if not done[t]:
                    waiting += 1
            if waiting and any(done):
                raise EmuError("reference: barrier not reached by exited threads")
            if barpred:  # bar.red: popc / and / or of the CTA's predicates, written to every thread
                pop = sum(barpred.values())
                for t in range(T):
                    i = pcs[t] - 1
                    kind = int(prog.sub[i])
                    if not done[t] and int(prog.op[i]) == C.OP_BAR and kind and int(prog.okind[i, 0]) == C.K_REG:
                        regs[t][int(prog.oval[i, 0])] = pop if kind == 1 else int(pop == waiting if kind == 2 else pop > 0)
                barpred.clear()
        paths.extend(cta_paths)
        if mem_out is not None:
            mem_out.extend(cta_mem)
    mem.copy_back()
    return paths, insts
