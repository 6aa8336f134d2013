"""PTX printer: round trip through the parser and acceptance by ptxas (when installed)."""

import glob
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from simt_fast.ir import parse_ptx
from simt_fast.ir.model import Address, Imm, Instruction, Label, ParamList, Reg, Symbol, Vector
from simt_fast.ir.ptx_printer import format_instruction, print_module

from hypothesis_budget import examples

ROOT = Path(__file__).resolve().parent.parent
CORPUS = (sorted(glob.glob(str(ROOT / "data/ptx/corpus/*.ptx"))) + sorted(glob.glob(str(ROOT / "data/ptx/workloads/*.ptx")))
          + sorted(glob.glob(str(ROOT / "tests/data/ir/*.ptx"))))
HAVE_PTXAS = shutil.which("ptxas") is not None


SCOPED = re.compile(r"(\w+)_s\d+$")


def unscope(op):
    """Undo the printer's renaming of differently-shaped redeclarations in -O0 call scopes."""
    if isinstance(op, Symbol):
        m = SCOPED.match(op.name)
        return Symbol(m.group(1)) if m else op
    if isinstance(op, Address):
        return Address(unscope(op.base), op.offset)
    if isinstance(op, (ParamList, Vector)):
        return type(op)(tuple(unscope(e) for e in op.elems))
    return op


def structure(module):
    out = {}
    for name, f in module.functions.items():
        out[name] = (
            f.is_entry,
            [(p.name, p.dtype, p.count, p.space) for p in f.params + f.return_params],
            [(i.opcode, tuple(unscope(o) for o in i.operands), i.pred, i.pred_negated) for i in f.instructions],
            dict(f.labels),
            dict(f.jump_tables),
        )
    return out, [(g.name, g.space, g.dtype, g.count, g.init) for g in module.globals]


def test_corpus_is_present():
    assert len(CORPUS) >= 30


def test_function_address_initialisers_and_extern_prototypes_survive():
    m = parse_ptx(ROOT / "tests/data/ir/nvcc_misc_features.ptx")
    text = print_module(m)
    # the IR keeps initialiser bytes only; symbolic ones and .extern prototypes come from the source
    assert ".u64 ops[2] = {_Z3inci, _Z3dbli};" in text
    assert text.index(".extern .func") < text.index("ops[2]")
    assert "[%rd3, {%r3}]" in text  # a texture handle register with its coordinates


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: Path(p).name)
def test_round_trip_is_structurally_equal(path):
    m = parse_ptx(Path(path))
    text = print_module(m)
    m2 = parse_ptx(text, path="printed.ptx")
    assert structure(m2) == structure(m)
    # printing is a fixed point after one round
    assert print_module(m2) == text


@pytest.mark.skipif(not HAVE_PTXAS, reason="ptxas (CUDA toolkit) is not installed on this machine")
@pytest.mark.parametrize("path", CORPUS, ids=lambda p: Path(p).name)
def test_ptxas_accepts_printed_module(path, tmp_path):
    m = parse_ptx(Path(path))
    out = tmp_path / "printed.ptx"
    out.write_text(print_module(m))
    arch = m.target.split(",")[0].strip()
    r = subprocess.run(["ptxas", f"-arch={arch}", str(out), "-o", str(tmp_path / "o.cubin")], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_negative_offsets_and_guards_use_nvcc_spelling():
    m = parse_ptx(
        """
.version 7.5
.target sm_75
.address_size 64
.visible .entry k(.param .u64 k_param_0)
{
    .reg .pred %p<2>;
    .reg .b32 %r<3>;
    .reg .b64 %rd<3>;
    ld.param.u64 %rd1, [k_param_0];
    ld.global.u32 %r1, [%rd1+-4];
    setp.lt.s32 %p1, %r1, 0;
    @!%p1 bra $L__done;
    st.global.u32 [%rd1+8], %r1;
$L__done:
    ret;
}
""")
    text = print_module(m)
    assert "[%rd1+-4]" in text and "@!%p1 bra $L__done;" in text and "[%rd1+8]" in text


def test_format_instruction_from_scratch():
    ins = Instruction("setp.ne.u32", "setp", ("ne", "u32"), (Reg("%cf0"), Imm(1, "1"), Imm(0, "0")))
    assert format_instruction(ins) == "setp.ne.u32 %cf0, 1, 0;"
    bra = Instruction("bra.uni", "bra", ("uni",), (Label("$L__x"),), pred=Reg("%p1"), pred_negated=True)
    assert format_instruction(bra) == "@!%p1 bra.uni $L__x;"


# ---------------------------------------------------------------------------------------------
# Property: random kernels (random instructions, guards, labels, branches) round-trip
# ---------------------------------------------------------------------------------------------

from hypothesis import given, strategies as st  # noqa: E402

_REG = st.sampled_from(["%r1", "%r2", "%r3", "%r4"])
_REG64 = st.sampled_from(["%rd1", "%rd2"])
_IMM = st.integers(-(2**31), 2**31 - 1).map(str)
_OFF = st.integers(-64, 64)


@st.composite
def _instruction(draw, n_labels):
    kind = draw(st.sampled_from(["alu", "setp", "ld", "st", "bra", "selp", "mov_sreg", "atom", "cvt"]))
    guard = draw(st.sampled_from(["", "@%p1 ", "@!%p2 "]))
    if kind == "alu":
        op = draw(st.sampled_from(["add.s32", "sub.s32", "mul.lo.s32", "and.b32", "shl.b32", "mad.lo.s32"]))
        srcs = [draw(st.one_of(_REG, _IMM)) for _ in range(3 if op.startswith("mad") else 2)]
        srcs[0] = draw(_REG)
        return f"{guard}{op} {draw(_REG)}, {', '.join(srcs)};"
    if kind == "setp":
        return f"{guard}setp.{draw(st.sampled_from(['lt', 'ge', 'ne']))}.s32 {draw(st.sampled_from(['%p1', '%p2']))}, {draw(_REG)}, {draw(st.one_of(_REG, _IMM))};"
    if kind == "ld":
        off = draw(_OFF)
        return f"{guard}ld.global.u32 {draw(_REG)}, [{draw(_REG64)}{'+' + str(off) if off else ''}];"
    if kind == "st":
        return f"{guard}st.shared.u32 [{draw(_REG64)}+{draw(_OFF)}], {draw(_REG)};"
    if kind == "bra":
        return f"{guard}bra L{draw(st.integers(0, n_labels - 1))};"
    if kind == "selp":
        return f"selp.b32 {draw(_REG)}, {draw(_REG)}, {draw(_IMM)}, %p1;"
    if kind == "mov_sreg":
        return f"mov.u32 {draw(_REG)}, %{draw(st.sampled_from(['tid.x', 'ntid.y', 'laneid', 'ctaid.z']))};"
    if kind == "atom":
        return f"atom.global.add.u32 {draw(_REG)}, [{draw(_REG64)}], {draw(_REG)};"
    return f"cvt.u64.u32 {draw(_REG64)}, {draw(_REG)};"


@st.composite
def random_kernels(draw):
    n_labels = draw(st.integers(1, 4))
    body = []
    for i in range(n_labels):
        body.append(f"L{i}:")
        body += [draw(_instruction(n_labels)) for _ in range(draw(st.integers(0, 5)))]
    body.append("ret;")
    return HEADER + "\n".join(body) + "\n}\n"


HEADER = """.version 7.5
.target sm_75
.address_size 64
.extern .shared .align 16 .b8 smem[];
.global .align 4 .u32 table[4] = {1, 2, 3, 4};
.global .f32 scale = 0f3F800000;
.visible .entry k(.param .u64 k_param_0, .param .align 8 .b8 k_param_1[16])
.maxntid 128, 1, 1
{
.reg .pred %p<3>;
.reg .b32 %r<5>;
.reg .b64 %rd<3>;
"""


@examples(100)
@given(random_kernels())
def test_random_kernels_round_trip(text):
    m = parse_ptx(text)
    printed = print_module(m)
    m2 = parse_ptx(printed, path="printed.ptx")
    assert structure(m2) == structure(m)
    k, k2 = m.kernels[0], m2.kernels[0]
    assert k2.directives.get("maxntid") == k.directives.get("maxntid") == (128, 1, 1)
    assert [(p.name, p.align, p.count) for p in k2.params] == [(p.name, p.align, p.count) for p in k.params]
