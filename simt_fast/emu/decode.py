"""Decode an (inlined) kernel into flat numeric tables for the numba interpreter.

Decoding happens once per kernel, in plain Python, and is where every unsupported opcode, type or
modifier is rejected with a :class:`~simt_fast.ir.model.PTXError` naming the opcode and the PTX
line -- the interpreter never meets an instruction it cannot execute.

Tables (one row per instruction, SoA):

* ``op`` (int32): an ``OP_*`` id; ``ty`` / ``ty2`` (int32): type codes ``size | kind << 4``
  (kind 0 = bit/unsigned, 1 = signed, 2 = float, 3 = predicate); ``ty2`` is the source type of
  ``cvt``/``set``/``slct`` and the element size of vector ``mov``;
* ``md`` (int32): modifier bits (``M_*``; the low 3 bits are the rounding mode ``R_*``);
  ``sub`` (int32): the op's sub-code (comparison, boolean op, atomic op, shuffle/vote mode...);
* ``okind``/``oval``/``ooff`` ([n, 8]): operand slots -- kind ``K_*``, value (register id,
  immediate bit pattern as uint64, special-register id, absolute address) and address offset;
* ``space`` (int32): memory space ``S_*`` of ld/st/atom/cvta; ``vec``: vector length;
* ``gpred``/``gneg``: guard predicate register (-1 = none) and its negation;
* ``target``: branch target instruction index (``n_instrs`` = the virtual exit);
  ``jt_ptr``/``jt_idx``: ``brx.idx`` jump tables as instruction indices;
* ``amask``: the width at which a ``[reg+imm]`` address wraps (its register's);
* ``mem_bytes``/``mem_kind``/``mem_rec``: the memory facts of the trace and how each /mem entry is
  formed (:mod:`simt_fast.emu.decode_memory`, which decodes the memory family).

Operand slot conventions: slot 0 is the destination; sources follow in PTX order. ``ld``/``st``/
``atom``/``red``: slot 0 is the address, ld destinations / st sources / atom operands follow.
``setp``: (p, q, a, b, c). ``shfl``: (d, p, a, b, c, membermask). ``vote``: (d, a, membermask).
``tex``: (texture, d0..d3, x, y, z).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

import numpy as np

from ..ir.flat import register_ids
from ..ir.model import Address, Function, Imm, Module, PTXError, Reg, SpecialReg, Symbol, Vector
from .codes import (
    BOOL, CMP, FAST_ADD, FAST_AND, FAST_CVT_SEXT, FAST_CVT_ZEXT, FAST_DADD, FAST_DFMA, FAST_DMUL, FAST_DSUB,
    FAST_FADD, FAST_FFMA, FAST_FMUL, FAST_FSETP, FAST_FSUB, FAST_MAD, FAST_MOV, FAST_MUL, FAST_MULWIDE_S,
    FAST_MULWIDE_U, FAST_OR, FAST_SELP, FAST_SETP, FAST_SHL, FAST_SHR_S, FAST_SHR_U, FAST_SUB, FAST_XOR,
    IGNORED_MODS, KIND_F, KIND_P, KIND_S, KIND_U, K_ADDR, K_IMM, K_REG, K_SINK, K_SREG, M_APPROX, M_CC, M_CIN,
    M_FTZ, M_HI, M_IRND, M_RMASK, M_SAT, M_WIDE, N_SLOTS, OP_ABS, OP_ACTIVEMASK, OP_ADD, OP_AND, OP_BAR, OP_BFE,
    OP_BFI, OP_BFIND, OP_BRA, OP_BREV, OP_BRX, OP_CLZ, OP_CNOT, OP_COPYSIGN, OP_COS, OP_CVT, OP_DIV, OP_EX2,
    OP_EXIT, OP_FMA, OP_LG2, OP_LOP3, OP_MAD, OP_MAD24, OP_MAX, OP_MIN, OP_MOV, OP_MUL, OP_MUL24, OP_NEG,
    OP_NOP, OP_NOT, OP_OR, OP_PACK, OP_POPC, OP_PRMT, OP_RCP, OP_REM, OP_RSQRT, OP_SAD, OP_SELP, OP_SET,
    OP_SETP, OP_SHF, OP_SHFL, OP_SHL, OP_SHR, OP_SIN, OP_SLCT, OP_SQRT, OP_SUB, OP_TANH, OP_TESTP, OP_TRAP,
    OP_UNPACK, OP_VOTE, OP_XOR, PRMT, ROUNDING, R_NONE, R_RN, SHFL, SREG_ID, TESTP, TYPES, VOTE, tkind, tsize,
)
from .decode_memory import MemoryDecoding
from .layout import Layout, layout_symbols


def fast_code(op: int, ty: int, md: int, sub: int, okind_row, ty2: int = 0) -> int:
    """The interpreter fast-path code of a decoded instruction (0 = use alu())."""
    kind = tkind(ty)
    if op == OP_MOV:
        return FAST_MOV
    if op == OP_SELP:
        return FAST_SELP
    if kind == KIND_F:
        # f32 add/sub/mul rounded to nearest without .ftz/.sat: one native f32 operation is exact IEEE
        if tsize(ty) == 4 and (md & M_RMASK) in (R_NONE, R_RN) and not md & (M_FTZ | M_SAT):
            if op == OP_SETP:
                return FAST_FSETP if (sub >> 8) == 0 else 0
            return {OP_ADD: FAST_FADD, OP_SUB: FAST_FSUB, OP_MUL: FAST_FMUL, OP_FMA: FAST_FFMA}.get(op, 0)
        if tsize(ty) == 8 and (md & M_RMASK) in (R_NONE, R_RN) and not md & (M_FTZ | M_SAT):
            # f64 add/sub/mul/fma rounded to nearest: the host's IEEE double operations (fma: llvm.fma)
            return {OP_ADD: FAST_DADD, OP_SUB: FAST_DSUB, OP_MUL: FAST_DMUL, OP_FMA: FAST_DFMA}.get(op, 0)
        return 0
    if op == OP_CVT and not md & (M_SAT | M_FTZ | M_RMASK) and tkind(ty2) in (KIND_U, KIND_S) and kind in (KIND_U, KIND_S):
        return FAST_CVT_SEXT if tkind(ty2) == KIND_S else FAST_CVT_ZEXT
    if op == OP_MUL and md == M_WIDE and tsize(ty) <= 4:
        return FAST_MULWIDE_S if kind == KIND_S else FAST_MULWIDE_U
    if md & (M_CC | M_CIN | M_SAT | M_HI | M_WIDE):
        return 0
    if op == OP_SHR and kind == KIND_S:
        return FAST_SHR_S
    if kind == KIND_P:
        return {OP_AND: FAST_AND, OP_OR: FAST_OR, OP_XOR: FAST_XOR}.get(op, 0)
    if op == OP_SETP and (sub >> 8) == 0:
        return FAST_SETP
    table = {OP_ADD: FAST_ADD, OP_SUB: FAST_SUB, OP_MUL: FAST_MUL, OP_AND: FAST_AND, OP_OR: FAST_OR,
             OP_XOR: FAST_XOR, OP_SHL: FAST_SHL, OP_MAD: FAST_MAD}
    if op == OP_SHR and kind == KIND_U:
        return FAST_SHR_U
    return table.get(op, 0)


@dataclass
class Program:
    func: Function
    n_instrs: int
    n_regs: int  # declared registers; the carry flag lives at index n_regs
    reg_ids: dict
    layout: Layout
    op: np.ndarray
    fast: np.ndarray  # fast-path code per instruction (fast_code)
    ty: np.ndarray
    ty2: np.ndarray
    md: np.ndarray
    sub: np.ndarray
    okind: np.ndarray
    oval: np.ndarray
    ooff: np.ndarray
    space: np.ndarray
    vec: np.ndarray
    gpred: np.ndarray
    gneg: np.ndarray
    target: np.ndarray
    jt_ptr: np.ndarray
    jt_idx: np.ndarray
    lines: np.ndarray  # PTX line of each instruction (for fault messages)
    mem_bytes: np.ndarray  # uint8: bytes one thread accesses (vector width x element size); 0 = none
    mem_kind: np.ndarray  # uint8: MEM_NONE / MEM_LOAD / MEM_STORE / MEM_ATOMIC
    mem_rec: np.ndarray  # int8: REC_* -- how the instruction's /mem entry is formed (REC_NONE: no entry)
    amask: np.ndarray  # uint64: a [reg+imm] address wraps at its register's width (this mask)


def _imm_bits(imm: Imm, ty: int) -> int:
    """The bit pattern of an immediate for an operand of type ``ty`` (uint64 value)."""
    if tkind(ty) == KIND_F:
        if imm.is_float and imm.bits is not None:
            nbits = 32 if imm.text.lstrip("+-")[:2].lower() == "0f" else 64
            if nbits == 32 and tsize(ty) == 8:
                return struct.unpack("<Q", struct.pack("<d", struct.unpack("<f", struct.pack("<I", imm.bits & 0xFFFFFFFF))[0]))[0]
            if nbits == 64 and tsize(ty) == 4:
                return struct.unpack("<I", struct.pack("<f", struct.unpack("<d", struct.pack("<Q", imm.bits))[0]))[0]
            return imm.bits & ((1 << (8 * tsize(ty))) - 1)
        value = float(imm.value)
        if tsize(ty) == 4:
            return struct.unpack("<I", struct.pack("<f", value))[0]
        return struct.unpack("<Q", struct.pack("<d", value))[0]
    if imm.is_float:
        if imm.bits is not None:
            return imm.bits & 0xFFFFFFFFFFFFFFFF
        raise ValueError("float immediate for an integer operand")
    return int(imm.value) & 0xFFFFFFFFFFFFFFFF


class _Decoder(MemoryDecoding):
    def __init__(self, module: Module, func: Function, layout: Layout):
        self.module = module
        self.func = func
        self.layout = layout
        self.reg_ids = register_ids(func)
        self.n_regs = len(self.reg_ids)
        n = len(func.instructions)
        self.n = n
        self.op = np.zeros(n, np.int32)
        self.ty = np.zeros(n, np.int32)
        self.ty2 = np.zeros(n, np.int32)
        self.md = np.zeros(n, np.int32)
        self.sub = np.zeros(n, np.int32)
        self.okind = np.zeros((n, N_SLOTS), np.int32)
        self.oval = np.zeros((n, N_SLOTS), np.uint64)
        self.ooff = np.zeros((n, N_SLOTS), np.int64)
        self.space = np.zeros(n, np.int32)
        self.vec = np.ones(n, np.int32)
        self.gpred = np.full(n, -1, np.int32)
        self.gneg = np.zeros(n, np.int32)
        self.target = np.full(n, -1, np.int32)
        self.jt = [[] for _ in range(n)]
        self.mem_bytes = np.zeros(n, np.uint8)
        self.amask = np.full(n, 0xFFFFFFFFFFFFFFFF, np.uint64)
        self.reg_size = {}
        for d in func.reg_decls:
            size = TYPES.get(d.dtype, 8) & 0xF
            for name in d.names:
                self.reg_size[name] = size
        self.mem_kind = np.zeros(n, np.uint8)

    # -- errors ------------------------------------------------------------------------------
    def fail(self, ins, message):
        raise PTXError(message, self.func.path, ins.line, ins.column, ins.text)

    def unsupported(self, ins, what=None):
        self.fail(ins, what or f"opcode '{ins.opcode}' is not supported by the emulator")

    # -- operands ----------------------------------------------------------------------------
    def reg(self, ins, name):
        rid = self.reg_ids.get(name)
        if rid is None:
            self.fail(ins, f"register '{name}' is not declared")
        return rid

    def put(self, i, slot, ins, operand, ty, allow_addr=False, dst=False):
        """Encode one operand in slot ``slot`` of instruction ``i``."""
        if operand is None:
            self.okind[i, slot] = K_SINK
            return
        if isinstance(operand, Reg):
            self.okind[i, slot] = K_REG
            self.oval[i, slot] = self.reg(ins, operand.name)
            return
        if dst:
            self.fail(ins, "the destination operand must be a register")
        if isinstance(operand, Imm):
            try:
                self.okind[i, slot] = K_IMM
                self.oval[i, slot] = _imm_bits(operand, ty)
            except ValueError:
                self.fail(ins, f"floating-point immediate '{operand.text}' where an integer is expected")
            return
        if isinstance(operand, SpecialReg):
            key = (operand.name, operand.component)
            if key not in SREG_ID:
                self.fail(ins, f"special register '{operand.name}{'.' + operand.component if operand.component else ''}' is not supported by the emulator")
            self.okind[i, slot] = K_SREG
            self.oval[i, slot] = SREG_ID[key]
            return
        if isinstance(operand, Symbol):
            # a variable's name used as a value is its address in its own state space
            sp, addr = self.symbol(ins, operand.name)
            self.okind[i, slot] = K_IMM
            self.oval[i, slot] = addr & 0xFFFFFFFFFFFFFFFF
            return
        if isinstance(operand, Address) and allow_addr:
            if isinstance(operand.base, Reg):
                self.okind[i, slot] = K_ADDR
                self.oval[i, slot] = self.reg(ins, operand.base.name)
                self.ooff[i, slot] = operand.offset
                # register + offset is computed at the register's width (nvcc -O3 folds a negative
                # base into a 32-bit shared address and relies on the wrap)
                self.amask[i] = (1 << (8 * self.reg_size.get(operand.base.name, 8))) - 1
            elif isinstance(operand.base, Symbol):
                sp, addr = self.symbol(ins, operand.base.name)
                self.okind[i, slot] = K_IMM
                self.oval[i, slot] = (addr + operand.offset) & 0xFFFFFFFFFFFFFFFF
                return sp
            else:
                self.okind[i, slot] = K_IMM
                self.oval[i, slot] = operand.offset & 0xFFFFFFFFFFFFFFFF
            return None
        self.fail(ins, f"operand '{operand}' is not supported here")

    def symbol(self, ins, name):
        hit = self.layout.symbols.get(name)
        if hit is None:
            if name in self.module.functions:
                self.fail(ins, f"taking the address of function '{name}' is not supported by the emulator")
            self.fail(ins, f"'{name}' is not a declared variable or parameter")
        return hit

    # -- instruction dispatch ----------------------------------------------------------------
    def decode(self):
        func = self.func
        n = self.n
        labels = func.labels
        for i, ins in enumerate(func.instructions):
            if ins.pred is not None:
                self.gpred[i] = self.reg(ins, ins.pred.name)
                self.gneg[i] = 1 if ins.pred_negated else 0
            handler = getattr(self, f"d_{ins.base}", None)
            if handler is None:
                self.unsupported(ins)
            handler(i, ins)
            if ins.base == "bra":
                self.target[i] = min(labels[ins.operands[0].name], n)
            elif ins.base == "brx":
                self.jt[i] = [min(labels[t], n) for t in func.jump_tables[ins.operands[1].name]]
        jt_ptr = np.zeros(n + 1, np.int32)
        for i in range(n):
            jt_ptr[i + 1] = jt_ptr[i] + len(self.jt[i])
        jt_idx = np.array([t for ts in self.jt for t in ts], np.int32)
        fast = np.array(
            [fast_code(int(self.op[i]), int(self.ty[i]), int(self.md[i]), int(self.sub[i]), self.okind[i], int(self.ty2[i])) for i in range(n)],
            np.int32,
        ).reshape(n)
        return Program(
            func=func, n_instrs=n, n_regs=self.n_regs, reg_ids=self.reg_ids, layout=self.layout,
            op=self.op, fast=fast, ty=self.ty, ty2=self.ty2, md=self.md, sub=self.sub, okind=self.okind, oval=self.oval,
            ooff=self.ooff, space=self.space, vec=self.vec, gpred=self.gpred, gneg=self.gneg, target=self.target,
            jt_ptr=jt_ptr, jt_idx=jt_idx, lines=np.array([ins.line for ins in func.instructions], np.int64),
            mem_bytes=self.mem_bytes, mem_kind=self.mem_kind, mem_rec=self._mem_rec(), amask=self.amask,
        )

    def mods(self, ins, allowed=(), types=1):
        """Split modifiers into (types found, flags set, other words); reject unknown ones."""
        found_types, words = [], []
        for m in ins.modifiers:
            if m in TYPES:
                found_types.append(TYPES[m])
            elif m in ("f16", "f16x2", "bf16", "bf16x2", "tf32", "e4m3", "e5m2", "b128"):
                self.fail(ins, f"type '.{m}' in '{ins.opcode}' is not supported by the emulator")
            elif m in IGNORED_MODS or m.startswith("L1::") or m.startswith("L2::"):
                continue
            elif m in allowed:
                words.append(m)
            else:
                self.fail(ins, f"modifier '.{m}' of '{ins.opcode}' is not supported by the emulator")
        if types is not None and len(found_types) != types:
            self.fail(ins, f"'{ins.opcode}' needs {types} type suffix(es)")
        md = 0
        for w in words:
            if w in ROUNDING:
                md |= ROUNDING[w]
                if w.endswith("i"):
                    md |= M_IRND
            elif w == "ftz":
                md |= M_FTZ
            elif w == "sat":
                md |= M_SAT
            elif w == "approx":
                md |= M_APPROX
            elif w == "cc":
                md |= M_CC
            elif w == "hi":
                md |= M_HI
            elif w == "wide":
                md |= M_WIDE
        return found_types, md, words

    def nops(self, ins, k):
        if len(ins.operands) != k:
            self.fail(ins, f"'{ins.opcode}' takes {k} operands, got {len(ins.operands)}")

    def simple(self, i, ins, opid, nsrc, allowed=(), int_only=False, float_only=False, bit_ok=True):
        (t,), md, words = self.mods(ins, allowed)
        if int_only and tkind(t) == KIND_F:
            self.fail(ins, f"'{ins.opcode}': floating-point type is not valid here")
        if float_only and tkind(t) != KIND_F:
            self.fail(ins, f"'{ins.opcode}' needs .f32 or .f64")
        self.nops(ins, nsrc + 1)
        self.op[i] = opid
        self.ty[i] = t
        self.md[i] = md
        self.put(i, 0, ins, ins.operands[0], t, dst=True)
        for k in range(nsrc):
            self.put(i, k + 1, ins, ins.operands[k + 1], t)
        return t, md, words

    # -- families ------------------------------------------------------------------------------
    def d_mov(self, i, ins):
        (t,), md, _ = self.mods(ins)
        self.nops(ins, 2)
        d, a = ins.operands
        if isinstance(d, Vector) or isinstance(a, Vector):
            vec = a if isinstance(a, Vector) else d
            k = len(vec.elems)
            if tsize(t) % k:
                self.fail(ins, "vector mov elements must split the type evenly")
            self.ty[i] = t
            self.ty2[i] = tsize(t) // k
            self.vec[i] = k
            if isinstance(a, Vector):  # pack {a, b} -> d
                self.op[i] = OP_PACK
                self.put(i, 0, ins, d, t, dst=True)
                for j, e in enumerate(a.elems):
                    self.put(i, 1 + j, ins, e, tsize(t) // k)
            else:  # unpack d -> {a, b}
                self.op[i] = OP_UNPACK
                self.put(i, 0, ins, a, t)
                for j, e in enumerate(d.elems):
                    self.put(i, 1 + j, ins, e, tsize(t) // k)
            return
        self.op[i] = OP_MOV
        self.ty[i] = t
        self.put(i, 0, ins, d, t, dst=True)
        self.put(i, 1, ins, a, t)

    def _arith(self, i, ins, opid, nsrc, allowed):
        t, md, words = self.simple(i, ins, opid, nsrc, allowed)
        if tkind(t) == KIND_P:
            self.fail(ins, f"'{ins.opcode}' does not take .pred")
        return t, md, words

    def d_add(self, i, ins):
        self._arith(i, ins, OP_ADD, 2, ("sat", "cc", "ftz", "rn", "rz", "rm", "rp"))

    def d_sub(self, i, ins):
        self._arith(i, ins, OP_SUB, 2, ("sat", "cc", "ftz", "rn", "rz", "rm", "rp"))

    def d_addc(self, i, ins):
        self._arith(i, ins, OP_ADD, 2, ("cc",))
        self.md[i] |= M_CIN

    def d_subc(self, i, ins):
        self._arith(i, ins, OP_SUB, 2, ("cc",))
        self.md[i] |= M_CIN

    def d_mul(self, i, ins):
        t, md, words = self._arith(i, ins, OP_MUL, 2, ("lo", "hi", "wide", "ftz", "sat", "rn", "rz", "rm", "rp"))

    def d_mad(self, i, ins):
        t, md, words = self._arith(i, ins, OP_MAD, 3, ("lo", "hi", "wide", "cc", "ftz", "sat", "rn", "rz", "rm", "rp"))
        if tkind(t) == KIND_F:
            self.op[i] = OP_FMA  # mad.rn.f32/f64 is fused (PTX ISA: mad.f32 with rounding == fma)

    def d_madc(self, i, ins):
        self._arith(i, ins, OP_MAD, 3, ("lo", "hi", "cc"))
        self.md[i] |= M_CIN

    def d_fma(self, i, ins):
        self._arith(i, ins, OP_FMA, 3, ("ftz", "sat", "rn", "rz", "rm", "rp"))

    def d_mul24(self, i, ins):
        self._arith(i, ins, OP_MUL24, 2, ("lo", "hi"))

    def d_mad24(self, i, ins):
        self._arith(i, ins, OP_MAD24, 3, ("lo", "hi", "sat"))

    def d_sad(self, i, ins):
        self._arith(i, ins, OP_SAD, 3, ())

    def d_div(self, i, ins):
        self._arith(i, ins, OP_DIV, 2, ("approx", "full", "ftz", "rn", "rz", "rm", "rp"))
        if "full" in ins.modifiers:
            self.md[i] |= M_APPROX

    def d_rem(self, i, ins):
        self._arith(i, ins, OP_REM, 2, (), )
        if tkind(self.ty[i]) == KIND_F:
            self.fail(ins, "rem is defined for integer types only")

    def d_min(self, i, ins):
        self._arith(i, ins, OP_MIN, 2, ("ftz", "NaN"))
        if "NaN" in ins.modifiers:
            self.md[i] |= M_SAT  # reuse: propagate NaN

    def d_max(self, i, ins):
        self._arith(i, ins, OP_MAX, 2, ("ftz", "NaN"))
        if "NaN" in ins.modifiers:
            self.md[i] |= M_SAT

    def d_abs(self, i, ins):
        self._arith(i, ins, OP_ABS, 1, ("ftz",))

    def d_neg(self, i, ins):
        self._arith(i, ins, OP_NEG, 1, ("ftz",))

    def _logic(self, i, ins, opid, nsrc):
        t, md, _ = self.simple(i, ins, opid, nsrc)
        if tkind(t) == KIND_F or tkind(t) == KIND_S:
            self.fail(ins, f"'{ins.opcode}' needs a .b or .pred type")

    def d_and(self, i, ins):
        self._logic(i, ins, OP_AND, 2)

    def d_or(self, i, ins):
        self._logic(i, ins, OP_OR, 2)

    def d_xor(self, i, ins):
        self._logic(i, ins, OP_XOR, 2)

    def d_not(self, i, ins):
        self._logic(i, ins, OP_NOT, 1)

    def d_cnot(self, i, ins):
        self._logic(i, ins, OP_CNOT, 1)

    def _shift(self, i, ins, opid):
        (t,), md, _ = self.mods(ins)
        self.nops(ins, 3)
        if tkind(t) in (KIND_F, KIND_P):
            self.fail(ins, f"'{ins.opcode}' needs an integer type")
        self.op[i] = opid
        self.ty[i] = t
        self.put(i, 0, ins, ins.operands[0], t, dst=True)
        self.put(i, 1, ins, ins.operands[1], t)
        self.put(i, 2, ins, ins.operands[2], TYPES["u32"])

    def d_shl(self, i, ins):
        self._shift(i, ins, OP_SHL)

    def d_shr(self, i, ins):
        self._shift(i, ins, OP_SHR)

    def d_setp(self, i, ins):
        cmp = [m for m in ins.modifiers if m in CMP]
        bop = [m for m in ins.modifiers if m in ("and", "or", "xor")]
        rest = tuple(m for m in ins.modifiers if m not in CMP and m not in ("and", "or", "xor"))
        if len(cmp) != 1:
            self.fail(ins, "setp needs exactly one comparison operator (.eq, .lt ...)")
        types = [TYPES[m] for m in rest if m in TYPES]
        if len(types) != 1:
            self.fail(ins, "setp needs one type suffix")
        t = types[0]
        md = M_FTZ if "ftz" in rest else 0
        for m in rest:
            if m not in TYPES and m != "ftz":
                self.fail(ins, f"modifier '.{m}' of '{ins.opcode}' is not supported by the emulator")
        ops = ins.operands
        if len(ops) not in (3, 4) or (len(ops) == 4) != bool(bop):
            self.fail(ins, "setp takes p[|q], a, b and, with .and/.or/.xor, a predicate c")
        self.op[i] = OP_SETP
        self.ty[i] = t
        self.md[i] = md
        self.sub[i] = CMP[cmp[0]] | (BOOL[bop[0] if bop else ""] << 8)
        if isinstance(ops[0], Vector):
            self.put(i, 0, ins, ops[0].elems[0], t, dst=True)
            self.put(i, 1, ins, ops[0].elems[1], t, dst=True)
        else:
            self.put(i, 0, ins, ops[0], t, dst=True)
        self.put(i, 2, ins, ops[1], t)
        self.put(i, 3, ins, ops[2], t)
        if bop:
            self.put(i, 4, ins, ops[3], TYPES["pred"])

    def d_set(self, i, ins):
        cmp = [m for m in ins.modifiers if m in CMP]
        bop = [m for m in ins.modifiers if m in ("and", "or", "xor")]
        types = [TYPES[m] for m in ins.modifiers if m in TYPES]
        if len(cmp) != 1 or len(types) != 2:
            self.fail(ins, "set needs a comparison, a destination type and a source type")
        self.op[i] = OP_SET
        self.ty[i], self.ty2[i] = types
        self.md[i] = M_FTZ if "ftz" in ins.modifiers else 0
        self.sub[i] = CMP[cmp[0]] | (BOOL[bop[0] if bop else ""] << 8)
        ops = ins.operands
        self.put(i, 0, ins, ops[0], types[0], dst=True)
        self.put(i, 2, ins, ops[1], types[1])
        self.put(i, 3, ins, ops[2], types[1])
        if bop:
            self.put(i, 4, ins, ops[3], TYPES["pred"])

    def d_selp(self, i, ins):
        (t,), md, _ = self.mods(ins)
        self.nops(ins, 4)
        self.op[i] = OP_SELP
        self.ty[i] = t
        self.put(i, 0, ins, ins.operands[0], t, dst=True)
        self.put(i, 1, ins, ins.operands[1], t)
        self.put(i, 2, ins, ins.operands[2], t)
        self.put(i, 3, ins, ins.operands[3], TYPES["pred"])

    def d_slct(self, i, ins):
        types, md, _ = self.mods(ins, ("ftz",), types=2)
        self.nops(ins, 4)
        self.op[i] = OP_SLCT
        self.ty[i], self.ty2[i] = types
        self.md[i] = md
        self.put(i, 0, ins, ins.operands[0], types[0], dst=True)
        self.put(i, 1, ins, ins.operands[1], types[0])
        self.put(i, 2, ins, ins.operands[2], types[0])
        self.put(i, 3, ins, ins.operands[3], types[1])

    def d_cvt(self, i, ins):
        types, md, words = self.mods(ins, ("ftz", "sat", "rn", "rz", "rm", "rp", "rni", "rzi", "rmi", "rpi"), types=2)
        self.nops(ins, 2)
        d, a = types
        if tkind(d) == KIND_P or tkind(a) == KIND_P:
            self.fail(ins, "cvt does not convert predicates")
        self.op[i] = OP_CVT
        self.ty[i], self.ty2[i] = d, a
        self.md[i] = md
        if tkind(d) != KIND_F and tkind(a) == KIND_F and not (md & M_IRND):
            self.fail(ins, "cvt from float to integer needs an integer rounding modifier (.rni/.rzi/.rmi/.rpi)")
        self.put(i, 0, ins, ins.operands[0], d, dst=True)
        self.put(i, 1, ins, ins.operands[1], a)

    def d_prmt(self, i, ins):
        mode = [m for m in ins.modifiers if m in PRMT]
        rest = [m for m in ins.modifiers if m not in PRMT]
        if rest != ["b32"]:
            self.fail(ins, "prmt needs .b32")
        if mode:
            self.fail(ins, f"prmt mode '.{mode[0]}' is not supported by the emulator (only the generic byte selector)")
        self.nops(ins, 4)
        self.op[i] = OP_PRMT
        self.ty[i] = 4
        self.sub[i] = PRMT[mode[0]] if mode else 0
        for k in range(4):
            self.put(i, k, ins, ins.operands[k], 4, dst=(k == 0))

    def d_bfe(self, i, ins):
        (t,), md, _ = self.mods(ins)
        self.nops(ins, 4)
        self.op[i] = OP_BFE
        self.ty[i] = t
        self.put(i, 0, ins, ins.operands[0], t, dst=True)
        self.put(i, 1, ins, ins.operands[1], t)
        self.put(i, 2, ins, ins.operands[2], 4)
        self.put(i, 3, ins, ins.operands[3], 4)

    def d_bfi(self, i, ins):
        (t,), md, _ = self.mods(ins)
        self.nops(ins, 5)
        self.op[i] = OP_BFI
        self.ty[i] = t
        for k in range(5):
            self.put(i, k, ins, ins.operands[k], t if k < 3 else 4, dst=(k == 0))

    def _bitcount(self, i, ins, opid, allowed=()):
        (t,), md, words = self.mods(ins, allowed)
        self.nops(ins, 2)
        self.op[i] = opid
        self.ty[i] = t
        self.sub[i] = 1 if "shiftamt" in words else 0
        self.put(i, 0, ins, ins.operands[0], 4, dst=True)
        self.put(i, 1, ins, ins.operands[1], t)

    def d_popc(self, i, ins):
        self._bitcount(i, ins, OP_POPC)

    def d_clz(self, i, ins):
        self._bitcount(i, ins, OP_CLZ)

    def d_bfind(self, i, ins):
        self._bitcount(i, ins, OP_BFIND, ("shiftamt",))

    def d_brev(self, i, ins):
        self.simple(i, ins, OP_BREV, 1)

    def d_copysign(self, i, ins):
        self.simple(i, ins, OP_COPYSIGN, 2, float_only=True)

    def _sfu(self, i, ins, opid):
        self.simple(i, ins, opid, 1, ("approx", "ftz", "rn", "rz", "rm", "rp", "full"), float_only=True)

    def d_sqrt(self, i, ins):
        self._sfu(i, ins, OP_SQRT)

    def d_rsqrt(self, i, ins):
        self._sfu(i, ins, OP_RSQRT)

    def d_rcp(self, i, ins):
        self._sfu(i, ins, OP_RCP)

    def d_ex2(self, i, ins):
        self._sfu(i, ins, OP_EX2)

    def d_lg2(self, i, ins):
        self._sfu(i, ins, OP_LG2)

    def d_sin(self, i, ins):
        self._sfu(i, ins, OP_SIN)

    def d_cos(self, i, ins):
        self._sfu(i, ins, OP_COS)

    def d_tanh(self, i, ins):
        self._sfu(i, ins, OP_TANH)

    def d_testp(self, i, ins):
        op = [m for m in ins.modifiers if m in TESTP]
        types = [TYPES[m] for m in ins.modifiers if m in TYPES]
        if len(op) != 1 or len(types) != 1 or tkind(types[0]) != KIND_F:
            self.fail(ins, "testp needs a test (.finite, .notanumber ...) and .f32/.f64")
        self.nops(ins, 2)
        self.op[i] = OP_TESTP
        self.ty[i] = types[0]
        self.sub[i] = TESTP[op[0]]
        self.put(i, 0, ins, ins.operands[0], 0x31, dst=True)
        self.put(i, 1, ins, ins.operands[1], types[0])

    def d_shf(self, i, ins):
        words = set(ins.modifiers)
        if not ({"l", "r"} & words) or not ({"wrap", "clamp"} & words) or "b32" not in words:
            self.fail(ins, "shf needs .l/.r, .wrap/.clamp and .b32")
        self.nops(ins, 4)
        self.op[i] = OP_SHF
        self.ty[i] = 4
        self.sub[i] = (1 if "r" in words else 0) | (2 if "clamp" in words else 0)
        for k in range(4):
            self.put(i, k, ins, ins.operands[k], 4, dst=(k == 0))

    def d_lop3(self, i, ins):
        if ins.modifiers != ("b32",):
            self.fail(ins, "lop3 needs .b32")
        self.nops(ins, 5)
        self.op[i] = OP_LOP3
        self.ty[i] = 4
        for k in range(5):
            self.put(i, k, ins, ins.operands[k], 4, dst=(k == 0))

    def d_bra(self, i, ins):
        self.op[i] = OP_BRA

    def d_brx(self, i, ins):
        if "idx" not in ins.modifiers:
            self.fail(ins, "brx needs .idx")
        self.op[i] = OP_BRX
        self.put(i, 1, ins, ins.operands[0], 4)

    def d_ret(self, i, ins):
        self.op[i] = OP_EXIT

    d_exit = d_ret

    def d_trap(self, i, ins):
        self.op[i] = OP_TRAP

    def d_bar(self, i, ins):
        words = set(ins.modifiers) - {"aligned"}
        if "warp" in words:
            self.op[i] = OP_NOP  # bar.warp.sync: the warp's threads here already run in lock step
            return
        if "red" in words:
            # bar.red.{popc.u32, and.pred, or.pred} d, id, p: __syncthreads_count/_and/_or
            red = words - {"red"}
            kinds = {frozenset({"popc", "u32"}): 1, frozenset({"and", "pred"}): 2, frozenset({"or", "pred"}): 3}
            if frozenset(red) not in kinds or len(ins.operands) != 3:
                self.fail(ins, f"'{ins.opcode}' is not supported (bar.red.popc.u32 / .and.pred / .or.pred d, id, p)")
            self.op[i] = OP_BAR
            self.sub[i] = kinds[frozenset(red)]
            self.put(i, 0, ins, ins.operands[0], 4 if self.sub[i] == 1 else 0x31, dst=True)
            self.put(i, 1, ins, ins.operands[1], 4)
            self.put(i, 2, ins, ins.operands[2], 0x31)
            return
        if words - {"sync"}:
            self.fail(ins, f"'{ins.opcode}' is not supported by the emulator (bar.sync, barrier.sync and bar.red only)")
        if len(ins.operands) == 2:
            self.fail(ins, "bar.sync with an explicit thread count is not supported by the emulator")
        self.op[i] = OP_BAR
        if ins.operands:
            self.put(i, 1, ins, ins.operands[0], 4)

    d_barrier = d_bar

    def d_shfl(self, i, ins):
        mode = [m for m in ins.modifiers if m in SHFL]
        if "sync" not in ins.modifiers or len(mode) != 1 or "b32" not in ins.modifiers:
            self.fail(ins, "shfl needs .sync, a mode (.up/.down/.bfly/.idx) and .b32 (the pre-Volta shfl is not supported)")
        ops = ins.operands
        if len(ops) != 5:
            self.fail(ins, "shfl.sync takes d[|p], a, b, c, membermask")
        self.op[i] = OP_SHFL
        self.ty[i] = 4
        self.sub[i] = SHFL[mode[0]]
        if isinstance(ops[0], Vector):
            self.put(i, 0, ins, ops[0].elems[0], 4, dst=True)
            self.put(i, 1, ins, ops[0].elems[1], 0x31, dst=True)
        else:
            self.put(i, 0, ins, ops[0], 4, dst=True)
        for k in range(4):
            self.put(i, 2 + k, ins, ops[1 + k], 4)

    def d_vote(self, i, ins):
        mode = [m for m in ins.modifiers if m in VOTE]
        if "sync" not in ins.modifiers or len(mode) != 1:
            self.fail(ins, "vote needs .sync and a mode (.all/.any/.uni/.ballot) (the pre-Volta vote is not supported)")
        ops = ins.operands
        if len(ops) != 3:
            self.fail(ins, "vote.sync takes d, predicate, membermask")
        self.op[i] = OP_VOTE
        self.sub[i] = VOTE[mode[0]]
        self.ty[i] = 4 if mode[0] == "ballot" else 0x31
        self.put(i, 0, ins, ops[0], self.ty[i], dst=True)
        self.put(i, 1, ins, ops[1], 0x31)
        self.put(i, 2, ins, ops[2], 4)

    def d_activemask(self, i, ins):
        self.nops(ins, 1)
        self.op[i] = OP_ACTIVEMASK
        self.ty[i] = 4
        self.put(i, 0, ins, ins.operands[0], 4, dst=True)

    def _nop(self, i, ins):
        self.op[i] = OP_NOP

    d_membar = d_fence = d_nanosleep = d_pmevent = d_brkpt = _nop

    def d_call(self, i, ins):
        self.fail(ins, "call must be inlined before decoding (simt_fast.ir.inline.inline_calls)")


def decode(module: Module, func: Function, shared_bytes: int = 0) -> Program:
    """Decode ``func`` (already inlined) into a :class:`Program`; PTXError on anything unsupported."""
    layout = layout_symbols(module, func, shared_bytes)
    return _Decoder(module, func, layout).decode()
