"""The emulator's numeric codes, shared by the decoder (plain Python) and the interpreter (numba).

Every name here is a plain module constant, so numba freezes it into the compiled code. The
decoder (:mod:`simt_fast.emu.decode`) turns PTX text into these codes; nothing else defines them.
"""

from __future__ import annotations

from ..trace.model import MEM_ATOMIC, MEM_LOAD, MEM_NONE, MEM_STORE, NO_ACCESS, PARAM_TAG

# ---- operand kinds ----------------------------------------------------------------------------
K_NONE, K_REG, K_IMM, K_SREG, K_ADDR, K_SINK = 0, 1, 2, 3, 4, 5
N_SLOTS = 8  # operand slots per instruction

# ---- type codes: size | kind << 4 -------------------------------------------------------------
KIND_U, KIND_S, KIND_F, KIND_P = 0, 1, 2, 3
TYPES = {
    "b8": 1, "u8": 1, "s8": 0x11,
    "b16": 2, "u16": 2, "s16": 0x12,
    "b32": 4, "u32": 4, "s32": 0x14, "f32": 0x24,
    "b64": 8, "u64": 8, "s64": 0x18, "f64": 0x28,
    "pred": 0x31,
}



def tsize(t: int) -> int:
    return t & 0xF


def tkind(t: int) -> int:
    return t >> 4


# ---- memory spaces ----------------------------------------------------------------------------
S_GENERIC, S_GLOBAL, S_SHARED, S_LOCAL, S_CONST, S_PARAM = 0, 1, 2, 3, 4, 5
SPACES = {"global": S_GLOBAL, "shared": S_SHARED, "local": S_LOCAL, "const": S_CONST, "param": S_PARAM}

# Generic address windows (the emulator's choice; docs/emu.md): global addresses are used as
# generic addresses unchanged; the other spaces are mapped into disjoint high windows so that a
# generic ld/st can tell which space an address belongs to (PTX generic addressing, ISA §6.4).
GLOBAL_BASE = 1 << 40
WINDOW_SHIFT = 56
WINDOW = {S_SHARED: 1 << 56, S_LOCAL: 2 << 56, S_CONST: 3 << 56, S_PARAM: 4 << 56}

# ---- rounding modes and modifier bits ---------------------------------------------------------
R_NONE, R_RN, R_RZ, R_RM, R_RP = 0, 1, 2, 3, 4
ROUNDING = {"rn": R_RN, "rz": R_RZ, "rm": R_RM, "rp": R_RP, "rni": R_RN, "rzi": R_RZ, "rmi": R_RM, "rpi": R_RP}
M_RMASK = 0x7
M_IRND = 1 << 3  # integer rounding (cvt .rni/.rzi/.rmi/.rpi)
M_FTZ = 1 << 4
M_SAT = 1 << 5
M_APPROX = 1 << 6
M_CC = 1 << 7  # writes the carry flag (.cc)
M_CIN = 1 << 8  # reads the carry flag (addc/subc/madc)
M_HI = 1 << 9
M_WIDE = 1 << 10
M_BOOL_NEG = 1 << 11  # setp's .and/.or/.xor predicate is negated (not produced by the parser)

# ---- opcodes ----------------------------------------------------------------------------------
OP_MOV, OP_PACK, OP_UNPACK = 0, 1, 2
OP_ADD, OP_SUB, OP_MUL, OP_MAD, OP_FMA, OP_MUL24, OP_MAD24, OP_SAD, OP_DIV, OP_REM = 3, 4, 5, 6, 7, 8, 9, 10, 11, 12
OP_MIN, OP_MAX, OP_ABS, OP_NEG = 13, 14, 15, 16
OP_AND, OP_OR, OP_XOR, OP_NOT, OP_CNOT, OP_SHL, OP_SHR = 17, 18, 19, 20, 21, 22, 23
OP_SETP, OP_SET, OP_SELP, OP_SLCT, OP_CVT, OP_CVTA = 24, 25, 26, 27, 28, 29
OP_LD, OP_ST = 30, 31
OP_PRMT, OP_BFE, OP_BFI, OP_POPC, OP_CLZ, OP_BREV, OP_BFIND, OP_COPYSIGN = 32, 33, 34, 35, 36, 37, 38, 39
OP_SQRT, OP_RSQRT, OP_RCP, OP_EX2, OP_LG2, OP_SIN, OP_COS, OP_TANH = 40, 41, 42, 43, 44, 45, 46, 47
OP_TESTP, OP_SHF, OP_LOP3 = 48, 49, 50
OP_BRA, OP_BRX, OP_EXIT, OP_BAR = 51, 52, 53, 54
OP_ATOM = 55
OP_SHFL, OP_VOTE, OP_ACTIVEMASK = 56, 57, 58
OP_NOP, OP_TRAP = 59, 60
OP_MEMHINT = 61  # a memory-class instruction without an architectural access (prefetch)
OP_TEX = 62  # tex.{1d,2d,3d}.v4: operand slots 0 = texture handle, 1-4 = destinations, 5-7 = coordinates
OP_NAMES = {v: k[3:] for k, v in list(globals().items()) if k.startswith("OP_") and isinstance(v, int)}

# ---- /mem entries (DESIGN §3): how a memory-class instruction's entry is formed ---------------
REC_NONE = 0  # not a memory instruction: no entry
REC_GENERIC = 1  # MEM_GLOBAL class (global, generic, texture): the address as the thread used it
REC_OFFSET = 2  # MEM_SHARED / MEM_LOCAL / MEM_CONST class: the offset in the state space
REC_PARAM = 3  # MEM_CONST class through .param: the offset tagged with PARAM_TAG
REC_NO_ACCESS = 4  # a memory-class hint the emulator does not model (prefetch): NO_ACCESS
MEM_KINDS = (MEM_NONE, MEM_LOAD, MEM_STORE, MEM_ATOMIC)

# Fast-path codes: common ops without flags that the interpreter runs without calling alu()
(FAST_MOV, FAST_ADD, FAST_SUB, FAST_MUL, FAST_AND, FAST_OR, FAST_XOR, FAST_SHL, FAST_SHR_U,
 FAST_SETP, FAST_MAD, FAST_SELP, FAST_FADD, FAST_FSUB, FAST_FMUL, FAST_FFMA, FAST_FSETP,
 FAST_MULWIDE_S, FAST_MULWIDE_U, FAST_SHR_S, FAST_CVT_SEXT, FAST_CVT_ZEXT,
 FAST_DADD, FAST_DSUB, FAST_DMUL, FAST_DFMA) = range(1, 27)

# ---- sub-codes --------------------------------------------------------------------------------
CMP = {c: k for k, c in enumerate("eq ne lt le gt ge lo ls hi hs equ neu ltu leu gtu geu num nan".split())}
BOOL = {"": 0, "and": 1, "or": 2, "xor": 3}
ATOM_ADD, ATOM_MIN, ATOM_MAX, ATOM_EXCH, ATOM_CAS, ATOM_AND, ATOM_OR, ATOM_XOR, ATOM_INC, ATOM_DEC = range(10)
ATOM = {"add": ATOM_ADD, "min": ATOM_MIN, "max": ATOM_MAX, "exch": ATOM_EXCH, "cas": ATOM_CAS, "and": ATOM_AND,
        "or": ATOM_OR, "xor": ATOM_XOR, "inc": ATOM_INC, "dec": ATOM_DEC}
SHFL_UP, SHFL_DOWN, SHFL_BFLY, SHFL_IDX = 0, 1, 2, 3
SHFL = {"up": SHFL_UP, "down": SHFL_DOWN, "bfly": SHFL_BFLY, "idx": SHFL_IDX}
VOTE_ALL, VOTE_ANY, VOTE_UNI, VOTE_BALLOT = 0, 1, 2, 3
VOTE = {"all": VOTE_ALL, "any": VOTE_ANY, "uni": VOTE_UNI, "ballot": VOTE_BALLOT}
BAR_SYNC, BAR_RED_POPC, BAR_RED_AND, BAR_RED_OR = 0, 1, 2, 3
CVTA_TO_GENERIC, CVTA_TO_SPACE = 0, 1
TEX_VIA_TEXREF = 1  # tex sub-code bit: slot 0 is the address of a .texref variable holding the handle

# ---- texture descriptors (one int64 row per texture of a launch; simt_fast.emu.texture) --------
(TX_OFF, TX_ADDR, TX_SIZE0, TX_SIZE1, TX_SIZE2, TX_CHANNELS, TX_ESIZE, TX_EKIND, TX_MODE0, TX_MODE1, TX_MODE2,
 TX_NORM) = range(12)
TX_FIELDS = 12  # TX_OFF: byte offset of texel 0 in the flat memory; TX_ADDR: its device address
ADDR_WRAP, ADDR_CLAMP, ADDR_MIRROR, ADDR_BORDER = 0, 1, 2, 3  # cudaTextureAddressMode's numbering
TEX_HANDLE_BASE = 0x7E000000  # texture object k of a launch is the handle TEX_HANDLE_BASE + k
PRMT = {"": 0, "f4e": 1, "b4e": 2, "rc8": 3, "ecl": 4, "ecr": 5, "rc16": 6}
TESTP = {"finite": 0, "infinite": 1, "number": 2, "notanumber": 3, "normal": 4, "subnormal": 5}

# ---- special registers: id -> (name, component) -----------------------------------------------
SREGS = [
    ("%tid", "x"), ("%tid", "y"), ("%tid", "z"), ("%ntid", "x"), ("%ntid", "y"), ("%ntid", "z"),
    ("%ctaid", "x"), ("%ctaid", "y"), ("%ctaid", "z"), ("%nctaid", "x"), ("%nctaid", "y"), ("%nctaid", "z"),
    ("%laneid", None), ("%warpid", None), ("%nwarpid", None), ("%lanemask_eq", None), ("%lanemask_le", None),
    ("%lanemask_lt", None), ("%lanemask_ge", None), ("%lanemask_gt", None), ("%smid", None), ("%nsmid", None),
    ("%gridid", None), ("%clock", None), ("%clock64", None), ("%dynamic_smem_size", None),
    ("%total_smem_size", None),
]
SREG_ID = {s: k for k, s in enumerate(SREGS)}
N_SREGS = len(SREGS)
SR_CLOCK, SR_CLOCK64 = SREG_ID[("%clock", None)], SREG_ID[("%clock64", None)]

# modifiers that change nothing in a functional lock-step model (caching, ordering, scope hints)
IGNORED_MODS = frozenset(
    "uni aligned sync nc ca cg cs lu cv wb wt volatile relaxed acquire release acq_rel sc cta gpu sys "
    "weak mmio full noftz L1::evict_last L1::evict_first L1::evict_normal L1::no_allocate L2::64B L2::128B "
    "L2::256B L2::cache_hint".split()
)
