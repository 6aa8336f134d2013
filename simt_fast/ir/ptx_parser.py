"""PTX text -> kernel IR (:mod:`simt_fast.ir.model`).

The parser targets what nvcc 12-13 emits (``.version`` 7.x-9.x, ``-O0`` to ``-O3``, with or without
``-lineinfo``/``-G``) plus the hand-written PTX a compiler engineer would feed it. It works in two
layers, both regex-driven and line-oriented for speed:

1. :func:`_statements` turns the text into a stream of *statements* -- ``;``-terminated
   instructions and directives, labels (``name:``), scope braces ``{``/``}`` and function headers --
   each with its 1-based line and column. Comments are dropped, multi-line statements (call
   sequences, initialisers, parameter lists) are joined, and DWARF ``.section`` blocks are skipped.
2. :class:`_Parser` interprets the statements: module directives and variables, ``.entry``/``.func``
   headers and bodies, register and variable declarations (including the nested ``{ }`` call-sequence
   scopes of ``-O0`` code), labels, jump tables and instructions with decoded operands.

Anything the parser does not understand raises :class:`~simt_fast.ir.model.PTXError` naming the
file, line, column and text -- it never guesses.
"""

from __future__ import annotations

import os
import re
import struct
from pathlib import Path
from typing import Optional, Union

from .model import (
    Address,
    Function,
    Imm,
    Instruction,
    Label,
    Module,
    OpClass,
    Param,
    ParamList,
    PTXError,
    Reg,
    RegDecl,
    SpecialReg,
    Symbol,
    Variable,
    Vector,
)

__all__ = ["parse_ptx", "KNOWN_OPCODES", "SPECIAL_REGISTERS", "op_class_of", "type_size"]

# ---------------------------------------------------------------------------------------------
# Vocabulary
# ---------------------------------------------------------------------------------------------

#: Base opcodes of the PTX ISA (8.x/9.x). Anything else is rejected with the opcode named.
KNOWN_OPCODES = frozenset(
    """
    abs activemask add addc alloca and applypriority atom bar barrier bfe bfi bfind bmsk bra brev
    brkpt brx call clusterlaunchcontrol clz cnot copysign cos cp createpolicy cvt cvta discard div
    dp2a dp4a elect ex2 exit fence fma fns getctarank griddepcontrol isspacep istypep ld ldmatrix
    ldu lg2 lop3 mad mad24 madc mapa match max mbarrier membar min mma mov movmatrix mul mul24
    multimem nanosleep neg not or pmevent popc prefetch prefetchu prmt rcp red redux rem ret rsqrt
    sad selp set setmaxnreg setp shf shfl shl shr sin slct sqrt st stackrestore stacksave stmatrix
    sub subc suld suq sured sust szext tanh tcgen05 tensormap testp tex tld4 trap txq vabsdiff
    vabsdiff2 vabsdiff4 vadd vadd2 vadd4 vavrg2 vavrg4 vmad vmax vmax2 vmax4 vmin vmin2 vmin4 vote
    vset vset2 vset4 vshl vshr vsub vsub2 vsub4 wgmma wmma xor
    """.split()
)

#: Special (read-only, predefined) registers; ``%tid.x`` style components are split off.
SPECIAL_REGISTERS = frozenset(
    """
    %tid %ntid %ctaid %nctaid %laneid %warpid %nwarpid %smid %nsmid %gridid %lanemask_eq
    %lanemask_le %lanemask_lt %lanemask_ge %lanemask_gt %clock %clock64 %clock_hi %globaltimer
    %globaltimer_lo %globaltimer_hi %total_smem_size %aggr_smem_size %dynamic_smem_size
    %reserved_smem_offset_begin %reserved_smem_offset_end %reserved_smem_offset_cap
    %reserved_smem_offset_0 %reserved_smem_offset_1 %is_explicit_cluster %clusterid %nclusterid
    %cluster_ctaid %cluster_nctaid %cluster_ctarank %cluster_nctarank %current_graph_exec
    %pm0 %pm1 %pm2 %pm3 %pm4 %pm5 %pm6 %pm7 %pm0_64 %pm1_64 %pm2_64 %pm3_64 %pm4_64 %pm5_64
    %pm6_64 %pm7_64
    """.split()
) | frozenset(f"%envreg{i}" for i in range(32))

#: Largest ``%r<N>`` range accepted (nvcc never comes close; flat register ids are int16).
MAX_REG_RANGE = 1 << 16

_TYPE_SIZES = {
    "b8": 1, "u8": 1, "s8": 1, "b16": 2, "u16": 2, "s16": 2, "f16": 2, "bf16": 2, "e4m3": 1, "e5m2": 1,
    "b32": 4, "u32": 4, "s32": 4, "f32": 4, "f16x2": 4, "bf16x2": 4, "tf32": 4,
    "b64": 8, "u64": 8, "s64": 8, "f64": 8, "b128": 16, "pred": 1,
    "texref": 8, "samplerref": 8, "surfref": 8,
}
_STATE_SPACES = ("global", "const", "shared", "local", "param", "tex")
_LINKAGE = ("visible", "extern", "weak", "common")
# Directives that may appear inside a body and carry no semantics the simulator needs; kept in
# Function.directives for tools that want them.
_BODY_DIRECTIVES = frozenset(
    "loc pragma maxntid reqntid minnctapersm maxnctapersm maxnreg noreturn maxclusterrank "
    "reqnctapercluster explicitcluster file section alias abi_preserve abi_preserve_control "
    "blocksareclusters".split()
)

# Opcode bases that never write a register through operand 0 (operand 0, if a register, is read).
_NO_DST = frozenset(
    "bar barrier bra brx call ret exit membar fence prefetch prefetchu nanosleep trap pmevent st red "
    "sust sured cp brkpt griddepcontrol discard applypriority stackrestore setmaxnreg stmatrix".split()
)

# Operand counts of common opcodes (PTX ISA), so a dropped operand is reported by the parser
# rather than misread later. Opcodes with many optional forms (atom, vote, shfl, tex...) are not listed.
_ARITY = {b: {3} for b in "add sub mul div rem and or xor shl shr copysign mul24 addc subc bmsk szext".split()}
_ARITY.update({b: {4} for b in "mad fma selp slct bfe prmt shf mad24 sad madc fns".split()})
_ARITY.update({b: {2} for b in "mov cvt cvta neg not abs popc clz brev sqrt rcp rsqrt sin cos ex2 lg2 tanh cnot testp bfind".split()})
_ARITY.update({"setp": {3, 4}, "ld": {2, 3}, "ldu": {2, 3}, "st": {2, 3}, "min": {3, 4}, "max": {3, 4},
               "bfi": {5}, "lop3": {5, 6}, "bra": {1}, "ret": {0}, "exit": {0}, "trap": {0}})

_SFU_OPS = frozenset("sin cos ex2 lg2 rsqrt sqrt rcp tanh".split())
_MEM_OPS = frozenset("ld ldu st atom red prefetch prefetchu cp ldmatrix stmatrix".split())
_TEX_OPS = frozenset("tex tld4 suld sust sured suq txq".split())
_OTHER_OPS = frozenset("call membar fence nanosleep pmevent brkpt griddepcontrol setmaxnreg discard applypriority".split())


def type_size(dtype: str) -> int:
    """Bytes of a PTX fundamental type name without the dot (``f32`` -> 4)."""
    return _TYPE_SIZES[dtype]


def op_class_of(base: str, modifiers: tuple) -> OpClass:
    """The timing class of an opcode (DESIGN §2).

    Memory instructions are classed by their state space; generic addressing (no space) is
    treated as global, which is what nvcc's generic pointers are in practice. ``ld.param`` reads
    the kernel's constant bank, so it is MEM_CONST. ``bar.warp.sync`` is a warp-level sync, not a
    CTA barrier, so it is ALU.
    """
    if base in ("bra", "brx"):
        return OpClass.BRANCH
    if base in ("ret", "exit", "trap"):
        return OpClass.EXIT
    if base in ("bar", "barrier"):
        if modifiers and modifiers[0] == "warp":
            return OpClass.ALU
        return OpClass.BARRIER
    if base in _MEM_OPS:
        for m in modifiers:
            space = m.split("::", 1)[0]
            if space == "global":
                return OpClass.MEM_GLOBAL
            if space == "shared":
                return OpClass.MEM_SHARED
            if space == "local":
                return OpClass.MEM_LOCAL
            if space in ("const", "param"):
                return OpClass.MEM_CONST
            if space == "async" and base == "cp":
                return OpClass.MEM_GLOBAL
        return OpClass.MEM_GLOBAL  # generic addressing
    if base in _TEX_OPS:
        return OpClass.MEM_GLOBAL
    if base in _SFU_OPS:
        return OpClass.SFU
    if base == "div" and ("approx" in modifiers or "full" in modifiers):
        return OpClass.SFU
    if base in _OTHER_OPS:
        return OpClass.OTHER
    return OpClass.ALU


# ---------------------------------------------------------------------------------------------
# Layer 1: statements
# ---------------------------------------------------------------------------------------------

STMT, LABEL, OPEN, CLOSE, HEADER = range(5)

_SCAN = re.compile(r'"(?:[^"\\]|\\.)*"|::|[;{}:]')
_IDENT = re.compile(r"[A-Za-z_$%][\w$]*\Z")
# What the front end knows: PTX ISA 1.0-9.x (nvcc 13 emits 9.0) and these architectures (an "a"/"f"
# suffix selects a family's extra instructions). A newer major version or an unknown target may change
# what instructions mean, so it is refused rather than guessed at.
_PTX_MAJORS = range(1, 10)
_SM = {10, 11, 12, 13, 20, 21, 30, 32, 35, 37, 50, 52, 53, 60, 61, 62, 70, 72, 75, 80, 86, 87, 88, 89, 90, 100,
       101, 103, 110, 120, 121}
_TARGET_OPTIONS = {"texmode_unified", "texmode_independent", "debug", "map_f64_to_f32"}
_HEADER_START = re.compile(r"(?:\.(?:visible|extern|weak|common)\s+)*\.(?:entry|func)\b")
_LINE_DIRECTIVE = re.compile(r"\.(?:loc|file|version|target|address_size)\b")


def _strip_comments(line: str, in_block: bool):
    """Remove ``//`` and ``/* */`` comments from one line; returns (text, still_in_block_comment)."""
    out = []
    i = 0
    n = len(line)
    while i < n:
        if in_block:
            j = line.find("*/", i)
            if j < 0:
                return "".join(out), True
            out.append(" " * (j + 2 - i))  # blank the comment out so later columns stay exact
            i = j + 2
            in_block = False
            continue
        # find the earliest of '//', '/*', '"'
        j = line.find("/", i)
        q = line.find('"', i)
        if q >= 0 and (j < 0 or q < j):
            k = q + 1
            while k < n and line[k] != '"':
                k += 2 if line[k] == "\\" else 1
            out.append(line[i : k + 1])
            i = k + 1
            continue
        if j < 0:
            out.append(line[i:])
            break
        nxt = line[j + 1 : j + 2]
        if nxt == "/":
            out.append(line[i:j])
            break
        if nxt == "*":
            out.append(line[i:j])
            out.append("  ")
            i = j + 2
            in_block = True
            continue
        out.append(line[i : j + 1])
        i = j + 1
    return "".join(out), in_block


def _statements(source: str, path: str):
    """Yield ``(kind, text, line, column)`` for every statement of ``source``."""
    pending: list = []  # text pieces of the statement being accumulated
    p_line = p_col = 0  # where it started
    inner = 0  # depth of braces *inside* the pending statement (vector operands, initialisers)
    skip = 0  # depth inside a skipped `.section { ... }` block
    skip_next_brace = False
    in_block = False
    for lineno, raw in enumerate(source.splitlines(), 1):
        if in_block or "/" in raw:
            line, in_block = _strip_comments(raw, in_block)
        else:
            line = raw
        s = line.strip()
        if not s:
            continue
        if skip_next_brace and s[0] != "{":
            skip_next_brace = False  # a .section without a body: nothing to skip
        if skip or skip_next_brace:
            # DWARF sections (-G / -lineinfo): no semantics for us; skip to the matching brace.
            for ch in s:
                if ch == "{":
                    skip += 1
                    skip_next_brace = False
                elif ch == "}":
                    skip -= 1
            continue
        col = len(line) - len(line.lstrip()) + 1
        # Fast path: one complete ordinary statement on the line (the vast majority of lines).
        if not pending and s[-1] == ";" and s.count(";") == 1 and "{" not in s and "}" not in s and ":" not in s:
            if len(s) > 1:
                yield STMT, s[:-1].rstrip(), lineno, col
            continue
        if not pending:
            if s[-1] == ":" and _IDENT.match(s, 0, len(s) - 1):
                yield LABEL, s[:-1], lineno, col
                continue
            if _LINE_DIRECTIVE.match(s):
                # .loc / .file are line-terminated (nvcc writes no ';').
                yield STMT, s.rstrip(";").rstrip(), lineno, col
                continue
            if s.startswith(".section"):
                skip_next_brace = True
                for ch in s:
                    if ch == "{":
                        skip += 1
                        skip_next_brace = False
                    elif ch == "}":
                        skip -= 1
                continue
        pos = 0
        for m in _SCAN.finditer(line):
            tok = m.group()
            if tok[0] == '"' or tok == "::":
                continue
            seg = line[pos : m.start()]
            if not pending and seg.strip():
                p_line, p_col = lineno, m.start() - len(seg.lstrip()) + 1
            if tok == ";":
                if inner:
                    raise PTXError("unbalanced '{' before ';'", path, p_line, p_col, "".join(pending) + seg)
                text = ("".join(pending) + seg).strip()
                if pending:
                    text = " ".join(text.split())  # a statement over several lines reads as one
                pending = []
                pos = m.end()
                if text:
                    yield STMT, text, p_line, p_col
                continue
            if tok == "{":
                text = ("".join(pending) + seg).strip()
                if inner == 0 and not text:
                    yield OPEN, "{", lineno, m.start() + 1
                    pos = m.end()
                    pending = []
                elif inner == 0 and _HEADER_START.match(text):
                    yield HEADER, text, p_line, p_col
                    yield OPEN, "{", lineno, m.start() + 1
                    pos = m.end()
                    pending = []
                elif inner == 0 and text.startswith(".section"):
                    raise PTXError("a .section block must start on its own line", path, p_line, p_col, text)
                else:
                    inner += 1
                continue
            if tok == "}":
                if inner:
                    inner -= 1
                    continue
                text = ("".join(pending) + seg).strip()
                if text:
                    raise PTXError("missing ';' before '}'", path, p_line, p_col, text)
                yield CLOSE, "}", lineno, m.start() + 1
                pos = m.end()
                pending = []
                continue
            # ':' -- a label when it follows a lone identifier at statement start
            if inner == 0:
                text = ("".join(pending) + seg).strip()
                if _IDENT.match(text):
                    yield LABEL, text, p_line, p_col
                    pos = m.end()
                    pending = []
        rest = line[pos:]
        if rest.strip():
            if not pending:
                p_line, p_col = lineno, pos + len(rest) - len(rest.lstrip()) + 1
            pending.append(rest)
            pending.append(" ")
    if pending and "".join(pending).strip():
        raise PTXError("statement is not terminated by ';' at end of file", path, p_line, p_col, "".join(pending))
    if skip:
        raise PTXError("unterminated .section block at end of file", path, 0, 0)


# ---------------------------------------------------------------------------------------------
# Layer 2: operands, declarations, instructions
# ---------------------------------------------------------------------------------------------

_INT = re.compile(r"([+-]?)(0[xX][0-9a-fA-F]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*)[uU]?\Z")
_FLOAT_HEX = re.compile(r"([+-]?)0([fFdD])([0-9a-fA-F]+)\Z")
_FLOAT_DEC = re.compile(r"[+-]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][+-]?\d+)?\Z")
_ADDR = re.compile(
    r"\s*(?:([A-Za-z_$%][\w$]*)\s*(?:([+-])\s*([+-]?\w+))?|([+-]?\w+))\s*\Z"
)
_INSTR = re.compile(r"(?:@(!?)\s*([%\w$]+)\s+)?([A-Za-z][\w.:]*)\s*(.*)\Z", re.S)
_OPCODE = re.compile(r"[A-Za-z][\w.:]*\Z")
_REG_RANGE = re.compile(r"([A-Za-z_$%][\w$]*)\s*<\s*(\d+)\s*>\Z")
_VAR_NAME = re.compile(r"([A-Za-z_$%][\w$]*)\s*((?:\[\s*\w*\s*\]\s*)*)\Z")
_INIT_SYMBOL = re.compile(r"(?:generic\(\s*([A-Za-z_$][\w$]*)\s*\)|([A-Za-z_$][\w$]*))(?:\+(\d+))?\Z")
_LOC = re.compile(r"\.loc\s+(\d+)\s+(\d+)\s+(\d+)")
_DIMS = re.compile(r"\[\s*(\w*)\s*\]")


def _split_top(text: str) -> list:
    """Split at commas that are not inside (), [] or {}."""
    if "(" not in text and "[" not in text and "{" not in text:
        return [t.strip() for t in text.split(",")]
    parts = []
    depth = 0
    start = 0
    for i, ch in enumerate(text):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    parts.append(text[start:].strip())
    return parts


def _parse_int(text: str) -> Optional[int]:
    m = _INT.match(text)
    if not m:
        return None
    sign, body = m.group(1), m.group(2)
    if body[:2] in ("0x", "0X"):
        v = int(body[2:], 16)
    elif body[:2] in ("0b", "0B"):
        v = int(body[2:], 2)
    elif len(body) > 1 and body[0] == "0":
        v = int(body, 8)  # PTX follows C: a leading 0 means octal
    else:
        v = int(body)
    return -v if sign == "-" else v


def _parse_imm(text: str) -> Optional[Imm]:
    v = _parse_int(text)
    if v is not None:
        return Imm(v, text)
    m = _FLOAT_HEX.match(text)
    if m:
        sign, kind, digits = m.groups()
        if kind in "fF" and len(digits) == 8:
            bits = int(digits, 16)
            value = struct.unpack("<f", struct.pack("<I", bits))[0]
        elif kind in "dD" and len(digits) == 16:
            bits = int(digits, 16)
            value = struct.unpack("<d", struct.pack("<Q", bits))[0]
        else:
            return None
        if sign == "-":
            value = -value
            bits ^= 1 << (31 if kind in "fF" else 63)
        return Imm(value, text, True, bits)
    if _FLOAT_DEC.match(text):
        return Imm(float(text), text, True, None)
    return None


def _symbols_in(op, out: set):
    if isinstance(op, Symbol):
        out.add(op.name)
    elif isinstance(op, Address):
        if isinstance(op.base, Symbol):
            out.add(op.base.name)
    elif isinstance(op, (Vector, ParamList)):
        for e in op.elems:
            _symbols_in(e, out)


class _FunctionScope:
    """Name resolution for one function body: its registers, and a cache of decoded operands."""

    __slots__ = ("regs", "cache", "label_cache", "path")

    def __init__(self, path: str):
        self.regs: set = set()
        self.cache: dict = {}  # operand spelling -> operand (identifiers are symbols)
        self.label_cache: dict = {}  # the same for bra/brx, where identifiers are labels
        self.path = path


class _Parser:
    def __init__(self, source: str, path: str):
        self.source = source
        self.path = path
        self.version = ""
        self.target = ""
        self.address_size = 64
        self.globals: list = []
        self.functions: dict = {}
        self.declared_funcs: set = set()  # prototypes and definitions (call targets)
        self.calls: list = []  # (callee, func, instruction) checked at the end
        self.opcode_cache: dict = {}
        self.var_lines: dict = {}  # module variable -> (line, col), for late errors
        self.scopes: list = []  # (Function, _FunctionScope) for the symbol check at the end
        self._lines = None  # source lines, split lazily for error columns

    # -- errors ----------------------------------------------------------------------------
    def error(self, message: str, line: int, col: int, text: str = "", token: str = ""):
        """Raise PTXError; with ``token``, point the column at it when it is on the statement's line."""
        if token and line > 0:
            if self._lines is None:
                self._lines = self.source.splitlines()
            if line <= len(self._lines):
                at = self._lines[line - 1].find(token, max(col - 1, 0))
                if at >= 0:
                    col = at + 1
        raise PTXError(message, self.path, line, col, text)

    # -- module level ----------------------------------------------------------------------
    def check_symbols(self, func: Function, scope: _FunctionScope, known: set):
        """Every name an instruction uses must be declared (variable, parameter, function, prototype)."""
        names = set(known)
        names.update(p.name for p in func.params)
        names.update(p.name for p in func.return_params)
        names.update(v.name for v in func.local_vars)
        names.update(func.directives.get("callprototype", {}))
        used = set()
        for op in scope.cache.values():
            _symbols_in(op, used)
        missing = used - names
        if not missing:
            return
        for ins in func.instructions:  # slow path: find the first use for the message
            here = set()
            for op in ins.operands:
                _symbols_in(op, here)
            bad = sorted(here & missing)
            if bad:
                self.error(f"'{bad[0]}' is not a declared variable, parameter or function", ins.line, ins.column, ins.text, bad[0])

    def parse(self) -> Module:
        stream = _statements(self.source, self.path)
        for kind, text, line, col in stream:
            if kind == STMT:
                self.module_statement(text, line, col)
            elif kind == HEADER:
                self.function(text, line, col, stream)
            elif kind == LABEL:
                self.error("a label is only allowed inside a function body", line, col, text + ":")
            elif kind == OPEN:
                self.error("'{' at module scope does not open a function body", line, col, text)
            else:
                self.error("unmatched '}' at module scope", line, col, text)
        known = self.declared_funcs | {g.name for g in self.globals}
        for g in self.globals:
            for _, sym, _ in g.init_symbols:
                if sym not in known:
                    raise PTXError(f"initialiser of '{g.name}' takes the address of undeclared '{sym}'", self.path, *self.var_lines.get(g.name, (0, 0)))
        for callee, func, ins in self.calls:
            if callee not in self.declared_funcs:
                self.error(f"call to undeclared function '{callee}'", ins.line, ins.column, ins.text, callee)
        for func, scope in self.scopes:
            self.check_symbols(func, scope, known)
        if not self.version:
            raise PTXError("missing .version directive (is this a PTX file?)", self.path, 1, 1)
        return Module(
            path=self.path,
            version=self.version,
            target=self.target,
            address_size=self.address_size,
            globals=self.globals,
            functions=self.functions,
            source=self.source,
        )

    def module_statement(self, text: str, line: int, col: int):
        if text.startswith(".version"):
            parts = text.split()
            if len(parts) != 2 or not re.fullmatch(r"\d+\.\d+", parts[1]):
                self.error("malformed .version directive", line, col, text)
            if int(parts[1].split(".")[0]) not in _PTX_MAJORS:
                self.error(f"PTX ISA version {parts[1]} is not one this front end knows (1.0 to 9.x)", line, col, text)
            self.version = parts[1]
            return
        if text.startswith(".target"):
            self.target = text[len(".target") :].strip()
            for item in (t.strip() for t in self.target.split(",")):
                arch = re.fullmatch(r"sm_(\d+)[af]?", item)
                if item not in _TARGET_OPTIONS and not (arch and int(arch.group(1)) in _SM):
                    self.error(f"target '{item}' is not an architecture this front end knows (sm_10 to sm_121)",
                               line, col, text, item)
            return
        if text.startswith(".address_size"):
            v = _parse_int(text.split()[-1])
            if v not in (32, 64):
                self.error(".address_size must be 32 or 64", line, col, text)
            self.address_size = v
            return
        if text.startswith(".alias"):
            # .alias fAlias, fDefinition; -- calls may use either name
            names = [t.strip() for t in text[len(".alias") :].split(",")]
            if len(names) != 2 or not all(_IDENT.match(t) for t in names):
                self.error("malformed .alias directive (expected '.alias alias, function')", line, col, text)
            self.declared_funcs.add(names[0])
            return
        if text.startswith((".file", ".loc", ".pragma")):
            return
        if _HEADER_START.match(text):
            # a prototype (declaration without body)
            name, *_ = self.function_header(text, line, col)
            self.declared_funcs.add(name)
            return
        words = text.split(None, 1)
        first = words[0][1:] if words[0].startswith(".") else ""
        if first in _LINKAGE or first in ("global", "const", "shared", "local", "tex"):
            self.globals.append(self.variable(text, line, col, Variable))
            self.var_lines[self.globals[-1].name] = (line, col)
            return
        if text.startswith("."):
            self.error(f"unsupported module-level directive '{words[0]}'", line, col, text)
        self.error("instructions are only allowed inside a function body", line, col, text)

    # -- declarations ----------------------------------------------------------------------
    def variable(self, text: str, line: int, col: int, cls=Variable):
        """Parse ``[linkage] .space [.align N] [.vN] .type name[dims] [= init]``."""
        init_text = None
        if "=" in text:
            text, init_text = text.split("=", 1)
        m = _VAR_NAME.search(text.rstrip())
        if not m:
            self.error("expected a variable name", line, col, text)
        name, dims = m.group(1), m.group(2)
        attrs = text[: m.start()].split()
        linkage = space = dtype = ptr_space = ""
        align = 0
        vec = 1
        i = 0
        while i < len(attrs):
            a = attrs[i]
            if not a.startswith("."):
                self.error(f"unexpected '{a}' in declaration", line, col, text)
            a = a[1:]
            if a in _LINKAGE:
                linkage = a
            elif a == "align":
                if i + 1 >= len(attrs) or _parse_int(attrs[i + 1]) is None:
                    self.error(".align needs an integer", line, col, text)
                align = _parse_int(attrs[i + 1])
                if align <= 0 or align & (align - 1):
                    self.error(f".align {attrs[i + 1]} is not a positive power of two", line, col, text)
                i += 1
            elif a == "ptr":
                ptr_space = "generic"
            elif a in _STATE_SPACES and not space:
                space = a
            elif a in _STATE_SPACES and ptr_space:
                ptr_space = a
            elif a in ("v2", "v4", "v8"):
                vec = int(a[1:])
            elif a in _TYPE_SIZES:
                dtype = a
            elif a in ("reg",):
                space = "reg"
            else:
                self.error(f"unsupported declaration attribute '.{a}'", line, col, text)
            i += 1
        if not space:
            self.error("declaration has no state space (.global, .shared, .param, ...)", line, col, text)
        if not dtype:
            self.error("declaration has no type (.b8, .u32, .f32, ...)", line, col, text)
        elem = _TYPE_SIZES[dtype]
        count = vec
        for d in _DIMS.findall(dims):
            if d == "":
                count = 0
            else:
                v = _parse_int(d)
                if v is None:
                    self.error(f"array dimension '{d}' is not an integer", line, col, text)
                count *= v
        if not align:
            align = elem * vec
        init = None
        init_symbols = ()
        if init_text is not None:
            init, init_symbols = self.initializer(init_text, dtype, line, col)
            if count == 0 and "[]" in dims.replace(" ", ""):
                count = len(init) // elem  # x[] = {...}: the initialiser sizes the array
            if len(init) > elem * count:
                self.error(f"initialiser of '{name}' has more elements than the variable", line, col, text)
            init = init + bytes(elem * count - len(init))  # PTX zero-fills the rest
        kw = dict(name=name, space=space, dtype=dtype, elem_size=elem, count=count, align=align, init=init, linkage=linkage, init_symbols=init_symbols)
        if cls is Param:
            return Param(**kw, ptr_space=ptr_space)
        return cls(**kw)

    def initializer(self, text: str, dtype: str, line: int, col: int):
        """Initialiser bytes (little-endian) and address relocations ``(offset, symbol, addend)``."""
        items = re.split(r"[{},\s]+", text.strip())
        out = bytearray()
        symbols = []
        size = _TYPE_SIZES[dtype]
        for it in items:
            if not it:
                continue
            imm = _parse_imm(it)
            if imm is None:
                sm = _INIT_SYMBOL.match(it)
                if not sm:
                    self.error(f"unsupported initialiser element '{it}'", line, col, text)
                if size not in (4, 8) or dtype[0] == "f":
                    self.error(f"address initialiser '{it}' needs a 32/64-bit integer variable, not .{dtype}", line, col, text)
                # an address (function-pointer table, vtable, pointer to a variable): the
                # loader fills it in, so the bytes stay zero and the relocation is recorded
                symbols.append((len(out), sm.group(1) or sm.group(2), int(sm.group(3) or 0)))
                out += bytes(size)
                continue
            if dtype[0] == "f" and dtype not in ("f16x2",):
                if imm.is_float and imm.bits is not None and size * 8 == (32 if imm.text[1:2] in "fF" else 64):
                    out += int(imm.bits).to_bytes(size, "little")
                else:
                    fmt = {2: "<e", 4: "<f", 8: "<d"}[size]
                    out += struct.pack(fmt, float(imm.value))
            else:
                if imm.is_float:
                    if imm.bits is None:
                        self.error(f"float initialiser '{it}' for an integer variable", line, col, text)
                    v = imm.bits
                else:
                    v = imm.value
                out += (v & ((1 << (8 * size)) - 1)).to_bytes(size, "little")
        return bytes(out), tuple(symbols)

    def reg_decl(self, text: str, line: int, col: int, scope: _FunctionScope) -> list:
        """``.reg .b32 %r<12>, %x;`` -> RegDecls; registers become known in the scope."""
        body = text[len(".reg") :].strip()
        attrs = []
        while body.startswith("."):
            word, _, body = body.partition(" ")
            attrs.append(word[1:])
            body = body.strip()
        dtype = ""
        vec = ""
        for a in attrs:
            if a in _TYPE_SIZES:
                dtype = a
            elif a in ("v2", "v4", "v8"):
                vec = a + "."
            else:
                self.error(f"unsupported .reg attribute '.{a}'", line, col, text)
        if not dtype:
            self.error(".reg declaration has no type", line, col, text)
        decls = []
        for item in _split_top(body):
            if not item:
                self.error("empty register name in .reg declaration", line, col, text)
            m = _REG_RANGE.match(item)
            if m:
                prefix, n = m.group(1), int(m.group(2))
                if n > MAX_REG_RANGE:
                    self.error(f"register range '{item}' declares more than {MAX_REG_RANGE} registers", line, col, text)
                names = tuple(f"{prefix}{i}" for i in range(n))
                decls.append(RegDecl(vec + dtype, prefix, n, names))
            elif _IDENT.match(item):
                names = (item,)
                decls.append(RegDecl(vec + dtype, item, None, names))
            else:
                self.error(f"malformed register name '{item}'", line, col, text)
            scope.regs.update(names)
        return decls

    # -- functions -------------------------------------------------------------------------
    def function_header(self, text: str, line: int, col: int):
        m = _HEADER_START.match(text)
        is_entry = ".entry" in m.group()
        linkage = ""
        for lk in _LINKAGE:
            if f".{lk}" in m.group():
                linkage = lk
        rest = text[m.end() :].strip()
        returns = []
        if rest.startswith("("):
            if is_entry:
                self.error("a kernel (.entry) cannot have return values", line, col, text)
            close = rest.find(")")
            if close < 0:
                self.error("unclosed return-value list", line, col, text)
            returns = self.param_list(rest[1:close], line, col, text)
            rest = rest[close + 1 :].strip()
        nm = re.match(r"([A-Za-z_$][\w$]*)", rest)
        if not nm:
            self.error("expected a function name", line, col, text)
        name = nm.group(1)
        rest = rest[nm.end() :].strip()
        params = []
        if rest.startswith("("):
            close = rest.find(")")
            if close < 0:
                self.error("unclosed parameter list", line, col, text)
            params = self.param_list(rest[1:close], line, col, text)
            rest = rest[close + 1 :].strip()
        directives = {}
        for dm in re.finditer(r"\.(\w+)((?:\s*[\w]+\s*,?)*)", rest):
            args = tuple(int(a) for a in re.findall(r"\d+", dm.group(2)))
            directives[dm.group(1)] = args
        leftover = re.sub(r"\.(\w+)((?:\s*[\w]+\s*,?)*)", "", rest).strip()
        if leftover:
            self.error(f"unexpected '{leftover}' in function header", line, col, text)
        return name, is_entry, params, returns, directives, linkage

    def param_list(self, text: str, line: int, col: int, full: str) -> list:
        out = []
        for item in _split_top(text):
            if not item:
                continue
            if not item.startswith((".param", ".reg")):
                self.error(f"parameter '{item}' must be declared with .param or .reg", line, col, full)
            out.append(self.variable(item, line, col, Param))
        return out

    def function(self, header: str, line: int, col: int, stream):
        name, is_entry, params, returns, directives, linkage = self.function_header(header, line, col)
        if name in self.functions:
            self.error(f"function '{name}' is defined twice", line, col, header)
        self.declared_funcs.add(name)
        scope = _FunctionScope(self.path)
        for p in params + returns:
            if p.space == "reg":
                scope.regs.add(p.name)
        func = Function(
            name=name,
            is_entry=is_entry,
            params=params,
            return_params=returns,
            reg_decls=[],
            local_vars=[],
            instructions=[],
            labels={},
            jump_tables={},
            directives=dict(directives),
            line=line,
            path=self.path,
        )
        if linkage:
            func.directives["linkage"] = linkage
        label_lines = {}
        pending_label = None  # label directly before the current statement (for .branchtargets)
        branch_refs = []  # (label, instruction) to check after the body
        depth = 0  # the HEADER is always followed by its OPEN brace
        instrs = func.instructions
        for kind, text, sline, scol in stream:
            if kind == STMT:
                if text[0] == ".":
                    word = text.split(None, 1)[0][1:]
                    if word == "reg":
                        func.reg_decls.extend(self.reg_decl(text, sline, scol, scope))
                    elif word in ("local", "shared", "param", "const", "global", "align"):
                        func.local_vars.append(self.variable(text, sline, scol))
                    elif word in ("branchtargets", "calltargets", "callprototype"):
                        if pending_label is None:
                            self.error(f".{word} must follow a label", sline, scol, text)
                        func.labels.pop(pending_label, None)
                        if word == "branchtargets":
                            targets = [t for t in _split_top(text[len(".branchtargets") :]) if t]
                            if not targets:
                                self.error(".branchtargets needs at least one label", sline, scol, text)
                            func.jump_tables[pending_label] = targets
                        else:
                            func.directives.setdefault(word, {})[pending_label] = text
                    elif word == "loc":
                        lm = _LOC.match(text)
                        if not lm:
                            self.error("malformed .loc directive", sline, scol, text)
                        func.directives.setdefault("loc", {})[len(instrs)] = tuple(int(g) for g in lm.groups())
                    elif word == "pragma":
                        func.directives.setdefault("pragma", []).append((len(instrs), text[len(".pragma") :].strip()))
                    elif word in _BODY_DIRECTIVES:
                        func.directives[word] = text
                    else:
                        self.error(f"unsupported directive '.{word}' in function body", sline, scol, text)
                    pending_label = None
                    continue
                ins = self.instruction(text, sline, scol, scope)
                instrs.append(ins)
                base = ins.base
                if base == "bra":
                    if len(ins.operands) != 1 or not isinstance(ins.operands[0], Label):
                        self.error("bra needs exactly one label operand", sline, scol, text)
                    branch_refs.append((ins.operands[0].name, ins, False))
                elif base == "brx":
                    if len(ins.operands) != 2 or not isinstance(ins.operands[1], Label):
                        self.error("brx.idx needs an index register and a .branchtargets label", sline, scol, text)
                    branch_refs.append((ins.operands[1].name, ins, True))
                elif base == "call":
                    callee = next((o for o in ins.operands if isinstance(o, (Symbol, Reg))), None)
                    if callee is None:
                        self.error("call has no target", sline, scol, text)
                    if isinstance(callee, Symbol):
                        self.calls.append((callee.name, func, ins))
                pending_label = None
            elif kind == LABEL:
                if text in func.labels or text in func.jump_tables:
                    self.error(f"label '{text}' is defined twice in '{name}'", sline, scol, text + ":")
                func.labels[text] = len(instrs)
                label_lines[text] = (sline, scol)
                pending_label = text
            elif kind == OPEN:
                depth += 1
                pending_label = None
            elif kind == CLOSE:
                depth -= 1
                pending_label = None
                if depth == 0:
                    break
            else:  # HEADER inside a body
                self.error("function header inside another function body (missing '}'?)", sline, scol, text)
        else:
            self.error(f"function '{name}' has no closing '}}'", line, col, header)
        for target, ins, is_table in branch_refs:
            if is_table:
                if target not in func.jump_tables:
                    self.error(f"brx.idx target list '{target}' is not defined by .branchtargets", ins.line, ins.column, ins.text)
                for t in func.jump_tables[target]:
                    if t not in func.labels:
                        self.error(f"jump table '{target}' names undefined label '{t}'", ins.line, ins.column, ins.text)
            elif target not in func.labels:
                self.error(f"branch to undefined label '{target}'", ins.line, ins.column, ins.text, target)
        self.functions[name] = func
        self.scopes.append((func, scope))

    # -- instructions ----------------------------------------------------------------------
    def instruction(self, text: str, line: int, col: int, scope: _FunctionScope) -> Instruction:
        # Hot path: most statements are unguarded "opcode<ws>operands"; split without a regex and
        # decode each operand spelling once per function (scope caches).
        neg = False
        pred = None
        if text[0] == "@":
            m = _INSTR.match(text)
            if not m:
                self.error("cannot parse instruction", line, col, text)
            negs, guard, opcode, rest = m.groups()
            neg = bool(negs)
            if guard not in scope.regs:
                self.error(f"guard predicate '{guard}' is not a declared register", line, col, text, guard)
            pred = Reg(guard)
        else:
            parts = text.split(None, 1)
            opcode = parts[0]
            rest = parts[1] if len(parts) > 1 else ""
        info = self.opcode_cache.get(opcode)
        if info is None:
            if not _OPCODE.match(opcode):
                self.error(f"cannot parse opcode '{opcode}'", line, col, text)
            pieces = opcode.split(".")
            base = pieces[0]
            if base not in KNOWN_OPCODES:
                self.error(f"unsupported opcode '{opcode}'", line, col, text, opcode)
            mods = tuple(pieces[1:])
            if any(not p for p in mods):
                self.error(f"malformed opcode '{opcode}'", line, col, text)
            info = (base, mods, op_class_of(base, mods), base == "bra" or base == "brx")
            self.opcode_cache[opcode] = info
        base, mods, cls, label_ctx = info
        operands = ()
        if rest:
            cache = scope.label_cache if label_ctx else scope.cache
            if "{" in rest or "(" in rest:
                # vectors and call lists hold commas; "[...]" alone never does except
                # texture operands "[tex, {...}]", which contain "{"
                toks = _split_top(rest)
            else:
                # spaces never matter inside simple operands; dropping them makes "%r1" and " %r1"
                # one cache key
                toks = rest.replace(" ", "").split(",")
            regs = scope.regs
            ops = []
            for t in toks:
                o = cache.get(t)
                if o is None:
                    ts = t.strip()
                    if ts in regs:
                        o = Reg(ts)
                    else:
                        o = self.operand(ts, label_ctx, line, col, text, scope)
                    cache[t] = o
                ops.append(o)
            operands = tuple(ops)
            if base == "brx" and isinstance(operands[0], Label):
                self.error("brx.idx index must be a register", line, col, text)
        allowed = _ARITY.get(base)
        if allowed is not None and len(operands) not in allowed:
            want = " or ".join(str(a) for a in sorted(allowed))
            self.error(f"'{opcode}' takes {want} operands, not {len(operands)}", line, col, text)
        return Instruction(opcode, base, mods, operands, pred, neg, line, col, text, cls)

    def operand(self, t: str, label_ctx: bool, line: int, col: int, text: str, scope: _FunctionScope):
        if not t:
            self.error("empty operand", line, col, text)
        c = t[0]
        if c == "%" or c == "_" or c == "$" or c.isalpha():
            if t in scope.regs:
                return Reg(t)
            if "|" in t:
                a, b = t.split("|", 1)
                return Vector((self.operand(a.strip(), False, line, col, text, scope), self.operand(b.strip(), False, line, col, text, scope)))
            if c == "%":
                base, _, comp = t.partition(".")
                if base in SPECIAL_REGISTERS:
                    if comp and comp not in ("x", "y", "z"):
                        self.error(f"special register '{t}' has no component '.{comp}'", line, col, text, t)
                    return SpecialReg(base, comp or None)
                self.error(f"register '{t}' is not declared", line, col, text, t)
            if t == "_":
                return None
            if _IDENT.match(t):
                return Label(t) if label_ctx else Symbol(t)
            if c.isdigit():
                imm = _parse_imm(t)
                if imm is not None:
                    return imm
            self.error(f"cannot parse operand '{t}'", line, col, text, t)
        if c == "[":
            if t[-1] != "]":
                self.error(f"unclosed '[' in operand '{t}'", line, col, text)
            inner = t[1:-1]
            m = _ADDR.match(inner)
            if not m:
                if "," in inner:
                    # texture/surface operands [tex, {coords}] keep their parts as a vector
                    return Vector(tuple(self.operand(p, False, line, col, text, scope) for p in _split_top(inner)))
                self.error(f"unsupported address expression '{t}'", line, col, text, t)
            name, sign, off, absolute = m.groups()
            if absolute is not None:
                # [imm]: an absolute address in the instruction's state space
                value = _parse_int(absolute)
                if value is None:
                    self.error(f"address '{t}' is neither a register, a name nor an integer", line, col, text, t)
                return Address(None, value)
            offset = 0
            if off is not None:
                offset = _parse_int(off)
                if offset is None:
                    self.error(f"address offset '{off}' in '{t}' is not an integer", line, col, text, t)
                if sign == "-":
                    offset = -offset
            if name in scope.regs:
                base = Reg(name)
            elif name[0] == "%":
                self.error(f"register '{name}' is not declared", line, col, text, name)
            else:
                base = Symbol(name)
            return Address(base, offset)
        if c == "{":
            if t[-1] != "}":
                self.error(f"unclosed '{{' in operand '{t}'", line, col, text)
            return Vector(tuple(self.operand(p, False, line, col, text, scope) for p in _split_top(t[1:-1])))
        if c == "(":
            if t[-1] != ")":
                self.error(f"unclosed '(' in operand '{t}'", line, col, text)
            return ParamList(tuple(self.operand(p, False, line, col, text, scope) for p in _split_top(t[1:-1]) if p))
        if c == "!":
            self.error("negated predicate operands ('!%p' outside a guard) are not supported", line, col, text, "!")
        imm = _parse_imm(t)
        if imm is not None:
            return imm
        self.error(f"cannot parse operand '{t}'", line, col, text, t)


# ---------------------------------------------------------------------------------------------
# Public entry point
# ---------------------------------------------------------------------------------------------


def parse_ptx(source: Union[str, os.PathLike], path: Optional[str] = None) -> Module:
    """Parse PTX into a :class:`~simt_fast.ir.model.Module`.

    ``source`` is PTX text, or a path (``pathlib.Path`` / ``os.PathLike``, or a ``str`` naming an
    existing ``.ptx`` file). ``path`` names the file in error messages (defaults to the path read, or
    ``<ptx>``). Raises :class:`PTXError` (file:line:col, message, offending text) on anything it does
    not understand, and ``FileNotFoundError`` for a missing file.
    """
    if isinstance(source, os.PathLike) or (
        isinstance(source, str) and "\n" not in source and source.endswith(".ptx") and len(source) < 4096
    ):
        p = Path(source)
        if not p.is_file():
            raise FileNotFoundError(f"PTX file not found: {p}")
        text = p.read_text(encoding="utf-8", errors="replace")
        path = path or str(p)
    else:
        text = source
    return _Parser(text, path or "<ptx>").parse()
