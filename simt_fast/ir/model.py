"""Kernel IR: the data model the PTX parser produces and every later stage consumes.

This module is a contract (docs/DESIGN.md §2). The parser (`simt_fast.ir.ptx_parser`) builds
these objects; the CFG layer (`simt_fast.ir.cfg`) partitions a function's instructions into
basic blocks; the emulator decodes instructions into flat numeric tables; the structurizer and
the PTX printer rewrite and print them.

Conventions
-----------
* Register names keep PTX spelling with the leading ``%`` (``%r12``, ``%p3``, ``%fd1``).
* ``Instruction.opcode`` is the full dotted opcode (``ld.global.nc.v4.f32``); ``base`` is the
  part before the first dot (``ld``) and ``modifiers`` the rest, in source order.
* Source positions are 1-based (``line``, ``column``); ``text`` is the source line stripped.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum
from typing import Optional, Union

from .._text import printable


class PTXError(ValueError):
    """Malformed or unsupported PTX. ``str(err)`` is one sentence naming file, line, column, text."""

    def __init__(self, message: str, path: str = "<ptx>", line: int = 0, column: int = 0, text: str = ""):
        self.message = message
        self.path = path
        self.line = line
        self.column = column
        self.text = text
        where = f"{path}:{line}:{column}" if line else path
        shown = f": `{text.strip()}`" if text else ""
        super().__init__(printable(f"{where}: {message}{shown}"))  # PTX text may hold control bytes


class OpClass(IntEnum):
    """Per-instruction class the timing core uses for latency and unit choice (DESIGN §2)."""

    ALU = 0
    SFU = 1
    MEM_GLOBAL = 2
    MEM_SHARED = 3
    MEM_LOCAL = 4
    MEM_CONST = 5
    BRANCH = 6
    BARRIER = 7
    EXIT = 8
    OTHER = 9


# ---------------------------------------------------------------------------------------------
# Operands
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Reg:
    """A virtual register (``%r1``, ``%p2``) — ``name`` includes the ``%``."""

    name: str


@dataclass(frozen=True)
class SpecialReg:
    """A special register such as ``%tid.x`` (``name='%tid'``, ``component='x'``) or ``%laneid``."""

    name: str
    component: Optional[str] = None


@dataclass(frozen=True)
class Imm:
    """An integer or floating immediate. ``text`` is the source spelling (``0f3F800000``, ``-1``).

    Float immediates written in hex (``0fXXXXXXXX`` / ``0dXXXXXXXXXXXXXXXX``) keep their exact bit
    pattern in ``bits`` (an int) and ``is_float=True``; decimal floats are rare in nvcc output.
    """

    value: Union[int, float]
    text: str = ""
    is_float: bool = False
    bits: Optional[int] = None


@dataclass(frozen=True)
class Symbol:
    """A named entity used as a value: a variable (``smem``), a parameter, a function name."""

    name: str


@dataclass(frozen=True)
class Address:
    """A memory operand ``[base+offset]``; ``base`` is a Reg, a Symbol, or None (absolute)."""

    base: Union[Reg, Symbol, None]
    offset: int = 0


@dataclass(frozen=True)
class Vector:
    """A brace vector operand ``{%r1, %r2, _}``; ``_`` (sink) is represented by ``None``."""

    elems: tuple


@dataclass(frozen=True)
class Label:
    """A branch target or a jump-table label list reference."""

    name: str


@dataclass(frozen=True)
class ParamList:
    """The parenthesised argument/return lists of ``call`` (``(retval0), func, (param0, param1)``)."""

    elems: tuple


Operand = Union[Reg, SpecialReg, Imm, Symbol, Address, Vector, Label, ParamList]


# ---------------------------------------------------------------------------------------------
# Instructions and declarations
# ---------------------------------------------------------------------------------------------


@dataclass
class Instruction:
    opcode: str  # full dotted opcode, e.g. "ld.global.nc.v4.f32"
    base: str  # e.g. "ld"
    modifiers: tuple  # e.g. ("global", "nc", "v4", "f32")
    operands: tuple  # tuple[Operand, ...], destination(s) first as in PTX
    pred: Optional[Reg] = None  # guard predicate of "@%p" / "@!%p"
    pred_negated: bool = False
    line: int = 0
    column: int = 0
    text: str = ""
    op_class: OpClass = OpClass.OTHER

    @property
    def is_branch(self) -> bool:
        return self.base in ("bra", "brx")

    @property
    def is_exit(self) -> bool:
        return self.base in ("ret", "exit", "trap")

    @property
    def is_barrier(self) -> bool:
        return self.base in ("bar", "barrier") and not (self.modifiers and self.modifiers[0] == "warp")


@dataclass
class RegDecl:
    """``.reg .b32 %r<12>;`` → dtype='b32', names generated ``%r0..%r11`` (count=12)."""

    dtype: str
    prefix: str  # "%r"
    count: Optional[int]  # None for a single named register
    names: tuple = ()


@dataclass
class Variable:
    """A state-space variable: ``.shared .align 4 .b8 smem[1024];`` or ``.const .f32 c[4] = {...};``"""

    name: str
    space: str  # "shared" | "local" | "const" | "global" | "param"
    dtype: str  # element type, e.g. "b8", "f32", "u64"
    elem_size: int  # bytes per element
    count: int  # number of elements (1 for scalars; 0 for extern unsized arrays)
    align: int  # bytes
    init: Optional[bytes] = None  # initialiser bytes (little-endian), None if absent
    linkage: str = ""  # "", "extern", "visible", "weak"
    # address initialisers ({func, generic(var)+8}): (byte offset in init, symbol name, addend);
    # their bytes in ``init`` are zero until a loader places the symbols
    init_symbols: tuple = ()

    @property
    def size(self) -> int:
        return self.elem_size * self.count


@dataclass
class Param(Variable):
    """A kernel or function parameter (``.param .u64 name`` or ``.param .align 8 .b8 name[16]``)."""

    ptr_space: str = ""  # ".ptr.global" attribute if present


@dataclass
class Function:
    """An ``.entry`` (kernel) or ``.func`` with its body."""

    name: str
    is_entry: bool
    params: list  # list[Param]
    return_params: list  # list[Param] (.func only)
    reg_decls: list  # list[RegDecl]
    local_vars: list  # list[Variable] declared inside the body (.local/.shared/.param)
    instructions: list  # list[Instruction]
    labels: dict  # label name -> index of the first instruction after it (len(instructions) if at end)
    jump_tables: dict = field(default_factory=dict)  # brx.idx target-list name -> list[label names]
    directives: dict = field(default_factory=dict)  # e.g. {"maxntid": (256,1,1)}
    line: int = 0
    path: str = "<ptx>"


@dataclass
class Module:
    """One PTX file."""

    path: str
    version: str
    target: str
    address_size: int
    globals: list  # list[Variable] at module scope
    functions: dict  # name -> Function (entries and funcs, in source order)
    source: str = ""

    @property
    def kernels(self) -> list:
        return [f for f in self.functions.values() if f.is_entry]

    def find_kernel(self, name: Optional[str] = None) -> Function:
        """A kernel by exact (mangled) name or unique substring; the only kernel if ``name`` is None."""
        kernels = self.kernels
        if name is None:
            if len(kernels) == 1:
                return kernels[0]
            names = ", ".join(k.name for k in kernels) or "none"
            raise PTXError(f"the module has {len(kernels)} kernels ({names}); name one with --kernel", self.path)
        for k in kernels:
            if k.name == name:
                return k
        hits = [k for k in kernels if name in k.name]
        if len(hits) == 1:
            return hits[0]
        if not hits:
            names = ", ".join(k.name for k in kernels) or "none"
            raise PTXError(f"no kernel matches '{name}' (kernels: {names})", self.path)
        raise PTXError(f"'{name}' matches several kernels: {', '.join(k.name for k in hits)}", self.path)
