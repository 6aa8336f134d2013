"""Decoding of the memory family (ld, st, atom, red, cvta, tex, prefetch): a mixin of the decoder.

Besides the operand tables, every memory instruction gets its per-instruction facts for the trace
(``mem_bytes``, ``mem_kind``) and how its /mem entry is formed (``mem_rec``, from its op_class).
"""

from __future__ import annotations

import numpy as np

from ..ir.model import Address, OpClass, Reg, Symbol, Vector
from .codes import (
    ATOM, IGNORED_MODS, K_IMM, K_SINK, KIND_F, KIND_P, MEM_ATOMIC, MEM_LOAD, MEM_STORE, OP_ATOM, OP_CVTA, OP_LD,
    OP_MEMHINT, OP_ST, OP_TEX, REC_GENERIC, REC_NO_ACCESS, REC_OFFSET, REC_PARAM, S_CONST, S_GENERIC, S_GLOBAL,
    S_PARAM, S_SHARED, S_LOCAL, SPACES, TEX_VIA_TEXREF, TYPES, tkind, tsize,
)

_MEM_CLASSES = (OpClass.MEM_GLOBAL, OpClass.MEM_SHARED, OpClass.MEM_LOCAL, OpClass.MEM_CONST)


class MemoryDecoding:
    """The memory instructions' ``d_*`` handlers; mixed into the decoder (uses its tables and put())."""

    def _mem_rec(self) -> np.ndarray:
        """How each memory-class instruction's /mem entry is formed (DESIGN §3).

        The class is the instruction's ``op_class`` (what the trace says), so an entry's address
        space always matches it: MEM_GLOBAL (global, generic and texture accesses) records the
        address as the thread used it, MEM_SHARED / MEM_LOCAL / MEM_CONST the offset in their
        space, and ``.param`` accesses (MEM_CONST) the offset tagged with PARAM_TAG."""
        rec = np.zeros(self.n, np.int8)
        for i, ins in enumerate(self.func.instructions):
            cls = ins.op_class
            if cls not in _MEM_CLASSES:
                continue
            if self.op[i] == OP_MEMHINT:
                rec[i] = REC_NO_ACCESS
            elif self.op[i] not in (OP_LD, OP_ST, OP_ATOM, OP_TEX):
                self.fail(ins, f"'{ins.opcode}' is a memory instruction the emulator cannot record")
            elif cls == OpClass.MEM_GLOBAL:
                rec[i] = REC_GENERIC
            elif cls == OpClass.MEM_CONST and "param" in (m.split("::")[0] for m in ins.modifiers):
                rec[i] = REC_PARAM
            else:
                rec[i] = REC_OFFSET
        return rec

    # -- modifier parsing --------------------------------------------------------------------

    def d_cvta(self, i, ins):
        to = "to" in ins.modifiers
        spaces = [SPACES[m] for m in ins.modifiers if m in SPACES]
        types = [TYPES[m] for m in ins.modifiers if m in TYPES]
        if len(spaces) != 1 or len(types) != 1 or tsize(types[0]) not in (4, 8):
            self.fail(ins, "cvta needs a state space and .u32/.u64")
        self.nops(ins, 2)
        self.op[i] = OP_CVTA
        self.ty[i] = types[0]
        self.space[i] = spaces[0]
        self.sub[i] = 1 if to else 0
        self.put(i, 0, ins, ins.operands[0], types[0], dst=True)
        self.put(i, 1, ins, ins.operands[1], types[0])

    def _space(self, ins):
        sp = [SPACES[m] for m in ins.modifiers if m in SPACES]
        return sp[0] if sp else S_GENERIC

    def _vec(self, ins):
        for m in ins.modifiers:
            if m in ("v2", "v4", "v8"):
                return int(m[1:])
        return 1

    def _mem_mods(self, ins, extra=()):
        types = []
        for m in ins.modifiers:
            if m in TYPES:
                types.append(TYPES[m])
            elif m in SPACES or m in ("v2", "v4") or m in IGNORED_MODS or m.startswith(("L1::", "L2::")) or m in extra:
                continue
            else:
                self.fail(ins, f"modifier '.{m}' of '{ins.opcode}' is not supported by the emulator")
        if len(types) != 1:
            self.fail(ins, f"'{ins.opcode}' needs one type suffix")
        return types[0]

    def _mem_operand(self, i, ins, operand, space):
        if not isinstance(operand, Address):
            self.fail(ins, "expected a memory operand [address]")
        sym_space = self.put(i, 0, ins, operand, 0, allow_addr=True)
        if sym_space is not None:
            # a named variable: its own state space decides (call-site .param buffers are per-thread)
            if space == S_GENERIC:
                space = sym_space
            elif sym_space != space and not (space == S_PARAM and sym_space == S_LOCAL):
                self.fail(ins, f"'{operand.base.name}' is not in the .{ins.modifiers[0]} state space")
            else:
                space = sym_space
        return space

    def d_ld(self, i, ins):
        t = self._mem_mods(ins)
        if tkind(t) == KIND_P:
            self.fail(ins, "ld cannot load a predicate")
        self.nops(ins, 2)
        space = self._mem_operand(i, ins, ins.operands[1], self._space(ins))
        self.op[i] = OP_LD
        self.ty[i] = t
        self.space[i] = space
        v = self._vec(ins)
        self.vec[i] = v
        d = ins.operands[0]
        elems = d.elems if isinstance(d, Vector) else (d,)
        if len(elems) != v:
            self.fail(ins, f"'{ins.opcode}' needs {v} destination register(s)")
        for j, e in enumerate(elems):
            self.put(i, 1 + j, ins, e, t, dst=True)
        self.mem_bytes[i] = v * tsize(t)
        self.mem_kind[i] = MEM_LOAD

    d_ldu = d_ld

    def d_st(self, i, ins):
        t = self._mem_mods(ins)
        self.nops(ins, 2)
        space = self._mem_operand(i, ins, ins.operands[0], self._space(ins))
        if space == S_CONST:
            self.fail(ins, "st to the .const state space is not allowed")
        self.op[i] = OP_ST
        self.ty[i] = t
        self.space[i] = space
        v = self._vec(ins)
        self.vec[i] = v
        s = ins.operands[1]
        elems = s.elems if isinstance(s, Vector) else (s,)
        if len(elems) != v:
            self.fail(ins, f"'{ins.opcode}' needs {v} source value(s)")
        for j, e in enumerate(elems):
            if e is None:
                self.fail(ins, "st cannot store a sink '_'")
            self.put(i, 1 + j, ins, e, t)
        self.mem_bytes[i] = v * tsize(t)
        self.mem_kind[i] = MEM_STORE

    def _atom(self, i, ins, has_dst):
        ops = [m for m in ins.modifiers if m in ATOM]
        if len(ops) != 1:
            self.fail(ins, f"'{ins.opcode}' needs one operation (.add, .min, .cas ...)")
        t = self._mem_mods(ins, extra=tuple(ATOM) + ("noftz",))
        space = self._space(ins)
        if space not in (S_GLOBAL, S_SHARED, S_GENERIC):
            self.fail(ins, "atomics are supported on .global, .shared and generic addresses")
        args = list(ins.operands)
        k = 3 if ops[0] == "cas" else 2
        if len(args) != k + (1 if has_dst else 0):
            self.fail(ins, f"'{ins.opcode}' has the wrong number of operands")
        self.op[i] = OP_ATOM
        self.ty[i] = t
        self.sub[i] = ATOM[ops[0]]
        if tkind(t) == KIND_F and ops[0] not in ("add", "exch", "min", "max"):
            self.fail(ins, f"atom.{ops[0]} is not defined for floating-point types")
        if has_dst:
            self.put(i, 1, ins, args.pop(0), t, dst=True)
        else:
            self.okind[i, 1] = K_SINK
        self.space[i] = self._mem_operand(i, ins, args[0], space)
        self.put(i, 2, ins, args[1], t)
        if k == 3:
            self.put(i, 3, ins, args[2], t)
        self.mem_bytes[i] = tsize(t)
        self.mem_kind[i] = MEM_ATOMIC

    def d_atom(self, i, ins):
        self._atom(i, ins, True)

    def d_red(self, i, ins):
        self._atom(i, ins, False)

    def d_tex(self, i, ins):
        """tex.{1d,2d,3d}.v4.{f32,s32,u32}.{s32,f32} d, [tex, {coords}] with point sampling."""
        mods = list(ins.modifiers)
        geoms = [m for m in mods if m in ("1d", "2d", "3d")]
        other = [m for m in mods if m in ("a1d", "a2d", "cube", "acube", "2dms", "a2dms", "base", "level", "grad")]
        if other:
            self.fail(ins, f"tex.{other[0]} is not supported by the emulator (tex.1d, tex.2d and tex.3d only)")
        types = [m for m in mods if m in TYPES]
        if len(geoms) != 1 or "v4" not in mods or len(types) != 2 or len(mods) != 4:
            self.fail(ins, "tex needs a geometry (.1d/.2d/.3d), .v4, a result type (.f32/.s32/.u32) and a coordinate type")
        dty, cty = TYPES[types[0]], TYPES[types[1]]
        if types[0] not in ("f32", "s32", "u32") or types[1] not in ("s32", "f32"):
            self.fail(ins, f"tex.{types[0]}.{types[1]} is not supported (results .f32/.s32/.u32, coordinates .s32/.f32)")
        ops = ins.operands
        if len(ops) != 2 or not isinstance(ops[0], Vector) or not isinstance(ops[1], Vector):
            self.fail(ins, "tex takes d, [texture, {coordinates}] (no predicate result, offsets or depth compare)")
        if len(ops[1].elems) != 2:
            self.fail(ins, "tex with an explicit sampler is not supported by the emulator (use texture objects or .texref)")
        if len(ops[0].elems) != 4:
            self.fail(ins, "tex.v4 needs 4 destination registers")
        dims = int(geoms[0][0])
        handle, coords = ops[1].elems
        coords = coords.elems if isinstance(coords, Vector) else (coords,)
        if len(coords) < dims:
            self.fail(ins, f"tex.{geoms[0]} needs {dims} coordinate(s)")
        self.op[i] = OP_TEX
        self.ty[i] = dty
        self.ty2[i] = cty
        self.vec[i] = dims
        if isinstance(handle, Symbol):
            sp, addr = self.symbol(ins, handle.name)
            var = next((v for v in self.module.globals if v.name == handle.name), None)
            if var is None or var.dtype != "texref":
                self.fail(ins, f"'{handle.name}' is not a .texref variable")
            self.okind[i, 0] = K_IMM
            self.oval[i, 0] = addr
            self.sub[i] = TEX_VIA_TEXREF
        elif isinstance(handle, Reg):
            self.put(i, 0, ins, handle, TYPES["u64"])
        else:
            self.fail(ins, "the texture of tex must be a .u64 register (a texture object) or a .texref name")
        for j, d in enumerate(ops[0].elems):
            self.put(i, 1 + j, ins, d, dty, dst=True)
        for j in range(dims):
            self.put(i, 5 + j, ins, coords[j], cty)
        self.mem_bytes[i] = 16  # the v4 result; the host narrows it to the texels of the launch's textures
        self.mem_kind[i] = MEM_LOAD

    def d_tld4(self, i, ins):
        self.fail(ins, "tld4 (texture gather) is not supported by the emulator")

    def d_prefetch(self, i, ins):
        self.op[i] = OP_MEMHINT  # a cache hint: no architectural access, one NO_ACCESS entry in /mem

    d_prefetchu = d_prefetch
