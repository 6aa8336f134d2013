"""What simt-fast needs to know about SASS opcodes and registers (Accel-Sim traces, docs/trace.md).

An Accel-Sim trace line names its opcode with its modifiers (``LDG.E.128.SYS``) and its registers
as ``R<n>`` tokens. This module maps them onto the trace contract (DESIGN §2/§3):

* :func:`classify` — ``OpClass``, memory kind (load/store/read-modify-write) and control-flow role
  of an opcode, from its family (the text before the first dot), as in the table of docs/trace.md;
* :func:`register_id` — a register token to a simt-fast register id (fixed ranges, below);
* :func:`width_from_opcode` — bytes per thread named by the opcode's modifiers (for memory
  instructions whose trace lines carry no width).

Register ids (int16 in the trace): ``R0..R254`` → 0..254; ``UR0..UR62`` → 256..318;
``P0..P6`` → 320..326; ``UP0..UP6`` → 328..334. The zero/true registers ``RZ`` (``R255``),
``URZ`` (``UR63``), ``PT`` (``P7``) and ``UPT`` (``UP7``) are constants, never a dependency, so they
map to no register (-1). The NVBit tracer writes only ``R`` registers today; the other ranges keep
uniform and predicate registers apart should a trace list them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

from ..ir.model import OpClass
from .model import MEM_ATOMIC, MEM_LOAD, MEM_NONE, MEM_STORE

# Control-flow role of an opcode for path recovery (simt_fast.trace.accelsim_paths).
FLOW_NONE = 0  # falls through to the next instruction
FLOW_DIRECT = 1  # a thread whose guard is true may jump to the one target encoded in the instruction
FLOW_INDIRECT = 2  # the target comes from a register or a reconvergence/return stack (each thread its own)
FLOW_EXIT = 3  # a thread whose guard is true ends here

# Families by class. SFU: the multi-function unit. Texture and surface fetches count as global
# memory (as the PTX front end does); TXQ/SUQ only query a descriptor.
_GLOBAL = {"LDG": MEM_LOAD, "STG": MEM_STORE, "ATOMG": MEM_ATOMIC, "RED": MEM_ATOMIC, "REDG": MEM_ATOMIC,
           "LD": MEM_LOAD, "ST": MEM_STORE, "ATOM": MEM_ATOMIC,  # generic addressing: global, as in PTX
           "LDGSTS": MEM_LOAD,  # global -> shared asynchronous copy: the trace keeps its global address
           "TEX": MEM_LOAD, "TEXS": MEM_LOAD, "TLD": MEM_LOAD, "TLDS": MEM_LOAD, "TLD4": MEM_LOAD,
           "TLD4S": MEM_LOAD, "TMML": MEM_LOAD, "TXD": MEM_LOAD,
           "SULD": MEM_LOAD, "SUST": MEM_STORE, "SUATOM": MEM_ATOMIC, "SURED": MEM_ATOMIC}
_SHARED = {"LDS": MEM_LOAD, "STS": MEM_STORE, "ATOMS": MEM_ATOMIC, "LDSM": MEM_LOAD, "STSM": MEM_STORE}
_LOCAL = {"LDL": MEM_LOAD, "STL": MEM_STORE}
_CONST = {"LDC": MEM_LOAD, "ULDC": MEM_LOAD}
_SFU = {"MUFU"}
# BRANCH: every opcode that can move a thread somewhere other than the next instruction.
_DIRECT = {"BRA", "JMP", "CALL", "CAL", "JCAL"}
_INDIRECT = {"BRX", "BRXU", "JMX", "JMXU", "RET", "RTT", "BRK", "CONT", "SYNC", "LONGJMP"}
_EXIT = {"EXIT", "KILL"}
_BARRIER = {"BAR"}  # CTA barriers (BAR.SYNC, BAR.RED, BAR.ARV, ...), as bar.* in PTX
# OTHER: warp/CTA synchronisation that is not a CTA barrier, reconvergence bookkeeping (BSSY,
# BSYNC, SSY, PBK, ...: the path itself shows where threads went), fences, cache control, TMA.
_OTHER = {
    "NOP", "MEMBAR", "FENCE", "ERRBAR", "CCTL", "CCTLL", "CCTLT", "DEPBAR", "LDGDEPBAR", "ARRIVES",
    "BSSY", "BSYNC", "BREAK", "BMOV", "WARPSYNC", "YIELD", "NANOSLEEP", "PMTRIG", "BPT", "RPCMOV",
    "SSY", "PBK", "PCNT", "PRET", "PEXIT", "PLONGJMP", "SETCRSPTR", "GETCRSPTR", "SETLMEMBASE",
    "GETLMEMBASE", "B2R", "R2B", "TXQ", "SUQ", "ACQBULK", "UCGABAR_ARV", "UCGABAR_WAIT", "SYNCS",
    "ENDCOLLECTIVE", "WARPGROUP", "WARPGROUPSET", "USETMAXREG", "SETCTAID",
}
# Tensor-memory-accelerator bulk copies (Hopper): one thread hands a whole tile to the copy engine;
# their trace lines list the tile's transfers, not one address per thread, so they are OTHER and the
# importer skips their address fields.
TMA_FAMILIES = frozenset({"UTMALDG", "UTMASTG", "UTMAPF", "UTMAREDG", "UTMACCTL", "UTMACMDFLUSH", "UBLKCP",
                          "UBLKPF", "UBLKRED"})
_OTHER |= TMA_FAMILIES
# ALU: arithmetic, logic, conversion, movement, predicates, warp-level data exchange, tensor cores,
# the uniform datapath. Listed so that an opcode missing from every table can be reported.
_ALU = {
    # float / half / double
    "FADD", "FADD32I", "FCHK", "FFMA", "FFMA32I", "FMNMX", "FMUL", "FMUL32I", "FSEL", "FSET", "FSETP",
    "FSWZADD", "FCMP", "FRND", "HADD2", "HADD2_32I", "HFMA2", "HFMA2_32I", "HFMA2MMA", "HMNMX2", "HMUL2",
    "HMUL2_32I", "HSET2", "HSETP2", "DADD", "DFMA", "DMUL", "DSETP", "DSET", "DMNMX", "RRO", "F2F", "F2I",
    "I2F", "I2I", "I2IP", "I2FP", "F2IP", "F2FP", "FMNMX3", "FADD2", "FFMA2", "FMUL2", "FHADD", "FHFMA",
    # integer
    "BMSK", "BREV", "FLO", "IABS", "IADD", "IADD3", "IADD32I", "IDP", "IDP4A", "IMAD", "IMADSP", "IMNMX",
    "IMUL", "IMUL32I", "ISCADD", "ISCADD32I", "ISETP", "ISET", "ICMP", "LEA", "LOP", "LOP3", "LOP32I",
    "POPC", "SHF", "SHL", "SHR", "XMAD", "BFE", "BFI", "VABSDIFF", "VABSDIFF4", "VADD", "VMAD", "VMNMX",
    "VSET", "VSETP", "VSHL", "VSHR", "VIADD", "VIADDMNMX", "VIMNMX", "VIMNMX3", "IMNMX3",
    # movement, predicates, warp-level data exchange, special registers
    "MOV", "MOV32I", "MOVM", "PRMT", "SEL", "SGXT", "SHFL", "PLOP3", "PSETP", "PSET", "P2R", "R2P",
    "CSET", "CSETP", "VOTE", "VOTEU", "MATCH", "REDUX", "S2R", "CS2R", "S2UR", "R2UR", "LEPC", "QSPC",
    "ELECT", "CREDUX",
    # tensor cores
    "HMMA", "IMMA", "DMMA", "BMMA", "HGMMA", "IGMMA", "QGMMA", "BGMMA", "OMMA", "QMMA", "UTCHMMA",
    # uniform datapath
    "UBMSK", "UBREV", "UCLEA", "UF2FP", "UFLO", "UIADD3", "UIMAD", "UISETP", "ULEA", "ULOP", "ULOP3",
    "ULOP32I", "UMOV", "UP2UR", "UPLOP3", "UPOPC", "UPRMT", "UPSETP", "UR2UP", "USEL", "USGXT", "USHF",
    "USHL", "USHR", "UIMNMX", "UVIADD",
}

_MEM_CLASSES = ((_GLOBAL, OpClass.MEM_GLOBAL), (_SHARED, OpClass.MEM_SHARED), (_LOCAL, OpClass.MEM_LOCAL),
                (_CONST, OpClass.MEM_CONST))
MEMORY_CLASSES = frozenset({OpClass.MEM_GLOBAL, OpClass.MEM_SHARED, OpClass.MEM_LOCAL, OpClass.MEM_CONST})


@dataclass(frozen=True)
class OpInfo:
    """How the trace contract sees one SASS opcode."""

    op_class: OpClass
    mem_kind: int  # MEM_NONE / MEM_LOAD / MEM_STORE / MEM_ATOMIC
    flow: int  # FLOW_*
    known: bool  # False: the family is in no table (taken as ALU, reported by the importer)


def family(opcode: str) -> str:
    """``LDG.E.128.SYS`` -> ``LDG``."""
    return opcode.split(".", 1)[0]


def encodes_target(opcode: str) -> bool:
    """A branch whose instruction can encode its one target (``BRA``, ``JMP``, ``CALL`` ...)."""
    return family(opcode) in _DIRECT


def jumps_in_mask(opcode: str) -> bool:
    """A direct branch every thread of whose mask jumps: not ``BRA.DIV`` / ``BRA.CONV``, which jump
    only when the warp is diverged / converged."""
    return not {"DIV", "CONV"} & set(opcode.split(".")[1:])


def classify(opcode: str, n_src_regs: int = 0) -> OpInfo:
    """Classify a SASS opcode (with modifiers). A direct branch that reads a register
    (``CALL.ABS R4``) jumps where the register says, so it is indirect."""
    fam = family(opcode)
    for table, cls in _MEM_CLASSES:
        if fam in table:
            return OpInfo(cls, table[fam], FLOW_NONE, True)
    if fam in _DIRECT:
        return OpInfo(OpClass.BRANCH, MEM_NONE, FLOW_INDIRECT if n_src_regs else FLOW_DIRECT, True)
    if fam in _INDIRECT:
        return OpInfo(OpClass.BRANCH, MEM_NONE, FLOW_INDIRECT, True)
    if fam in _EXIT:
        return OpInfo(OpClass.EXIT, MEM_NONE, FLOW_EXIT, True)
    if fam in _BARRIER:
        return OpInfo(OpClass.BARRIER, MEM_NONE, FLOW_NONE, True)
    if fam in _SFU:
        return OpInfo(OpClass.SFU, MEM_NONE, FLOW_NONE, True)
    if fam in _OTHER:
        return OpInfo(OpClass.OTHER, MEM_NONE, FLOW_NONE, True)
    return OpInfo(OpClass.ALU, MEM_NONE, FLOW_NONE, fam in _ALU)


_WIDTH_TOKEN = re.compile(r"^[US]?(8|16|32|64|128)$")


def width_from_opcode(opcode: str) -> int:
    """Bytes one thread accesses as the modifiers say: the first of ``.8``/``.U8``/``.S16``/``.64``/
    ``.128``… in bits / 8; 4 when none is given (the 32-bit default of SASS loads and stores)."""
    for mod in opcode.split(".")[1:]:
        m = _WIDTH_TOKEN.match(mod)
        if m:
            return int(m.group(1)) // 8
    return 4


# prefix -> (first simt-fast id, number of real registers; the next index is the zero/true register)
_REG_RANGES = {"R": (0, 255), "UR": (256, 63), "P": (320, 7), "UP": (328, 7)}
_REG_TOKEN = re.compile(r"^(R|UR|P|UP)(\d+)$")


def register_id(token: str) -> Optional[int]:
    """simt-fast register id of a trace register token; -1 for RZ/URZ/PT/UPT; None if not a register."""
    m = _REG_TOKEN.match(token)
    if not m:
        return None
    first, count = _REG_RANGES[m.group(1)]
    n = int(m.group(2))
    if n > count:
        return None
    return -1 if n == count else first + n
