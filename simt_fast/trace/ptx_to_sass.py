"""SASS opcode names for a trace's instructions, as Accel-Sim trace files need them (docs/trace.md).

Accel-Sim takes an instruction's functional unit and latency from its SASS opcode family, looked
up in the opcode table of the trace's ``-binary version`` (an unknown family stops it with
"undefined instruction"), and a memory instruction's space, direction and width from the opcode
too: ``LDG``/``STG``/``ATOMG``/``RED`` global, ``LDS``/``STS``/``ATOMS`` shared, ``LDL``/``STL``
local, ``LDC`` constant, the width from a ``.U8``/``.U16``/``.64``/``.128`` modifier (4 bytes
without one). An emulated trace holds PTX; :func:`sass_opcode` names, for one PTX instruction, the
opcode nvcc's SASS computes it with, by operation and operand type (``add.f32`` ``FADD``,
``add.s32`` ``IADD3``, ``fma.rn.f64`` ``DFMA``, ``sqrt.rn.f32`` ``MUFU.SQRT``, ``ld.global.u8``
``LDG.E.U8``, ...). One PTX instruction stays one SASS instruction: where nvcc emits a sequence (an
IEEE division, 64-bit integer arithmetic), the export names the sequence's main operation, so both
simulators replay the same instruction count.

The name always keeps the trace's op class — ``sass.classify`` of it gives the class back, which is
what makes ``import-accelsim`` of an export give the trace it came from — and an operation the
table does not know gets its class's default (``IADD3`` for ALU), reported by the export. The names
are those of every binary version in :data:`BINARY_VERSIONS`; Kepler (35) is not offered: its table
lacks ``STG``, ``ATOMG``, ``ATOMS``, ``IADD3`` and ``LOP3``.
"""

from __future__ import annotations

import re

from ..ir.model import OpClass
from .model import MEM_ATOMIC, MEM_STORE

# Accel-Sim's opcode tables by binary version (gpu-simulator/ISA_Def/*_opcode.h); the export's names
# are in each of them (tests/test_trace_accelsim_export.py checks against the headers when present)
BINARY_VERSIONS = {60: "Pascal P100", 61: "Pascal TITAN X", 70: "Volta V100", 75: "Turing",
                   80: "Ampere A100", 86: "Ampere RTX 30"}

# Operand kinds of a PTX type suffix
_FLOAT32, _FLOAT64, _HALF, _PRED, _INT = "f32", "f64", "f16", "pred", "int"
_TYPE = re.compile(r"^(?:[subf](?:8|16|32|64)|f16x2|bf16|bf16x2|tf32|pred|e4m3x2|e5m2x2)$")

# (PTX operation) -> {operand kind: SASS opcode}; "*" covers the kinds not listed. ALU class.
_ARITH = {
    "add": {_FLOAT32: "FADD", _FLOAT64: "DADD", _HALF: "HADD2", "*": "IADD3"},
    "mul": {_FLOAT32: "FMUL", _FLOAT64: "DMUL", _HALF: "HMUL2", "*": "IMAD"},
    "fma": {_FLOAT32: "FFMA", _FLOAT64: "DFMA", _HALF: "HFMA2", "*": "IMAD"},
    # IEEE division is a subroutine of FFMA/DFMA around one reciprocal; integer division of IMADs
    "div": {_FLOAT32: "FFMA", _FLOAT64: "DFMA", "*": "IMAD"},
    "abs": {_FLOAT32: "FADD", _FLOAT64: "DADD", _HALF: "HADD2", "*": "IABS"},
    "neg": {_FLOAT32: "FADD", _FLOAT64: "DADD", _HALF: "HADD2", "*": "IADD3"},
    "min": {_FLOAT32: "FMNMX", _FLOAT64: "DSETP", _HALF: "HSETP2", "*": "IMNMX"},
    "setp": {_FLOAT32: "FSETP", _FLOAT64: "DSETP", _HALF: "HSETP2", "*": "ISETP"},
    "selp": {_FLOAT32: "FSEL", "*": "SEL"},
    "and": {_PRED: "PLOP3", "*": "LOP3"},
    "mov": {_PRED: "PLOP3", "*": "MOV"},
}
for _alias, _of in (("sub", "add"), ("addc", "add"), ("subc", "add"), ("mad", "fma"), ("madc", "fma"),
                    ("mul24", "mul"), ("mad24", "mul"), ("rem", "div"), ("max", "min"), ("set", "setp"),
                    ("slct", "selp"), ("or", "and"), ("xor", "and"), ("not", "and"), ("cnot", "and"),
                    ("lop3", "and")):
    _ARITH[_alias] = _ARITH[_of]
_SIMPLE = {  # operation -> SASS opcode, whatever the operand type (ALU class)
    "shl": "SHF", "shr": "SHF", "shf": "SHF", "bfe": "SHF", "bfi": "LOP3", "bmsk": "BMSK", "szext": "SGXT",
    "popc": "POPC", "clz": "FLO", "bfind": "FLO", "brev": "BREV", "prmt": "PRMT", "copysign": "LOP3",
    "testp": "FSETP", "sad": "VABSDIFF", "dp4a": "IDP4A", "dp2a": "IDP", "cvta": "IADD3", "isspacep": "ISETP",
    "shfl": "SHFL", "vote": "VOTE", "activemask": "VOTE", "match": "MATCH", "bar": "VOTE",  # bar.warp.sync
}
# SFU class: the multi-function unit's operation
_MUFU = {"rcp": "RCP", "sqrt": "SQRT", "rsqrt": "RSQ", "sin": "SIN", "cos": "COS", "lg2": "LG2", "ex2": "EX2",
         "tanh": "TANH", "div": "RCP"}
_MUFU64 = {"rcp": "RCP64H", "sqrt": "RSQ64H", "rsqrt": "RSQ64H", "div": "RCP64H"}
_OTHER = {"membar": "MEMBAR", "fence": "MEMBAR", "nanosleep": "NANOSLEEP"}  # else NOP
# special registers read by `mov`: S2R (CS2R for the clocks)
_SPECIAL = re.compile(r"%(?:tid|ntid|ctaid|nctaid|laneid|warpid|nwarpid|smid|nsmid|gridid|lanemask_\w+|"
                      r"\w*smem_size|envreg\d+|pm\d+|cluster\w*|nclusterid|ctarank|nctarank|is_explicit_cluster)\b")
_CLOCK = re.compile(r"%(?:clock|clock64|globaltimer\w*)\b")

# Memory opcodes by (op class, direction); atomics take the operation after the family
_MEM = {
    OpClass.MEM_GLOBAL: ("LDG.E", "STG.E", "ATOMG.E", "RED.E"),
    OpClass.MEM_SHARED: ("LDS", "STS", "ATOMS", "ATOMS"),
    OpClass.MEM_LOCAL: ("LDL", "STL", "STL", "STL"),
    # a store to the param space (an inlined call's argument buffer) has no SASS counterpart: the
    # arguments live in registers; it stays a constant-bank access so its /mem entries stay aligned
    OpClass.MEM_CONST: ("LDC", "LDC", "LDC", "LDC"),
}
_WIDTH = {1: ".U8", 2: ".U16", 4: "", 8: ".64", 16: ".128"}
_ATOMIC_OPS = {"add", "min", "max", "inc", "dec", "and", "or", "xor", "exch", "cas"}

CLASS_DEFAULT = {OpClass.ALU: "IADD3", OpClass.SFU: "MUFU.RCP", OpClass.BRANCH: "BRA", OpClass.BARRIER: "BAR.SYNC",
                 OpClass.EXIT: "EXIT", OpClass.OTHER: "NOP"}


def _kind(type_name: str) -> str:
    if type_name == "f32" or type_name == "tf32":
        return _FLOAT32
    if type_name == "f64":
        return _FLOAT64
    if type_name.startswith(("f16", "bf16", "e4m3", "e5m2")):
        return _HALF
    if type_name == "pred":
        return _PRED
    return _INT


def split_ptx(text: str) -> tuple:
    """``'@%p1 add.rn.f32 %f1, %f2, %f3;'`` -> ``('add', ['rn', 'f32'], '%f1, %f2, %f3')``."""
    body = text.strip()
    if body.startswith("@"):
        body = body.split(None, 1)[1] if " " in body or "\t" in body else ""
    head, _, operands = body.partition(" ") if " " in body else body.partition("\t")
    head = head.strip().rstrip(";")
    parts = head.split(".")
    return parts[0], parts[1:], operands.strip().rstrip(";")


def memory_opcode(op_class: int, mem_kind: int, mem_bytes: int, has_dst: bool, modifiers=()) -> str:
    """``LDG.E.64``, ``STS.U8``, ``ATOMG.E.ADD``, ``RED.E.ADD.64``, ... for a memory instruction."""
    load, store, atomic, reduction = _MEM[OpClass(op_class)]
    if mem_kind == MEM_ATOMIC:
        family = atomic if has_dst else reduction
        op = next((m.upper() for m in modifiers if m in _ATOMIC_OPS), "ADD")
        family = f"{family}.{op}" if family.startswith(("ATOM", "RED")) else family
    else:
        family = store if mem_kind == MEM_STORE else load
    return family + _WIDTH.get(int(mem_bytes), "")


def sass_opcode(text: str, op_class: int, mem_kind: int = 0, mem_bytes: int = 4, has_dst: bool = True) -> tuple:
    """The SASS opcode for one PTX instruction of the given class: ``(opcode, known)``; ``known`` is
    False when the operation is not in the table and the class's default is used."""
    op_class = OpClass(int(op_class))
    base, mods, operands = split_ptx(text)
    if op_class in _MEM:
        return memory_opcode(op_class, mem_kind, mem_bytes, has_dst, mods), True
    types = [m for m in mods if _TYPE.match(m)]
    if op_class == OpClass.SFU:
        table = _MUFU64 if types and types[-1] == "f64" else _MUFU
        return ("MUFU." + table[base], True) if base in table else (CLASS_DEFAULT[op_class], False)
    if op_class == OpClass.BRANCH:
        return ("BRX", True) if base == "brx" else ("BRA", base == "bra")
    if op_class in (OpClass.EXIT, OpClass.BARRIER):
        return CLASS_DEFAULT[op_class], True
    if op_class == OpClass.OTHER:
        return (_OTHER[base], True) if base in _OTHER else (CLASS_DEFAULT[op_class], base in ("pmevent", "brkpt"))
    # ALU
    if base == "mov" and _CLOCK.search(operands):
        return "CS2R", True
    if base == "mov" and _SPECIAL.search(operands):
        return "S2R", True
    if base == "cvt" and len(types) >= 2:
        dst, src = _kind(types[-2]), _kind(types[-1])
        floats = (_FLOAT32, _FLOAT64, _HALF)
        if dst in floats and src in floats:
            return ("FRND" if types[-2] == types[-1] else "F2F"), True
        if dst in floats:
            return "I2F", True
        return ("F2I" if src in floats else "I2I"), True
    if base in _ARITH:
        table = _ARITH[base]
        kind = _kind(types[-1]) if types else _INT
        return table.get(kind, table["*"]), True
    if base in _SIMPLE:
        return _SIMPLE[base], True
    return CLASS_DEFAULT[op_class], False
