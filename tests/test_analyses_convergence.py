"""Convergence / variance / affine analysis (Lee et al. 2013 §3, §5.2) on the paper's examples."""

from pathlib import Path

import pytest
from hypothesis import given, strategies as st

from simt_fast.ir import build_cfg, parse_ptx
from simt_fast.ir.convergence import analyze_convergence

from hypothesis_budget import examples

DATA = Path(__file__).resolve().parent / "data" / "analyses"

HEAD = """
.version 7.5
.target sm_75
.address_size 64
"""

# Lee et al. 2013 Fig. 2(a) (N1 is the unlabelled entry B0): N1 -> N2 -> N2' -> {N3, N6}; N3 -> N4 -> N4';
# N4' -> {N4, N5} (loop); N5 -> N6 -> N7 (exit). N2' tests a kernel parameter; N4' tests %tid (or a
# parameter) against the loop counter.
FIG2 = HEAD + """
.visible .entry fig2(.param .u32 fig2_param_0, .param .u64 fig2_param_1)
{
    .reg .pred %p<4>;
    .reg .b32 %r<12>;
    .reg .b64 %rd<6>;
    ld.param.u32 %r1, [fig2_param_0];
    ld.param.u64 %rd1, [fig2_param_1];
    mov.u32 %r2, %tid.x;
N2:
    add.s32 %r3, %r1, 7;
N2p:
    mul.lo.s32 %r4, %r3, 3;
    setp.eq.s32 %p1, %r1, 0;
    @%p1 bra N6;
N3:
    mov.u32 %r5, 0;
N4:
    add.s32 %r5, %r5, 1;
N4p:
    setp.lt.u32 %p2, %r5, LIMIT;
    @%p2 bra N4;
N5:
    add.s32 %r6, %r4, %r5;
N6:
    cvta.to.global.u64 %rd2, %rd1;
N7:
    ret;
}
"""


def analyze(text, **kw):
    m = parse_ptx(text)
    k = m.kernels[0]
    return analyze_convergence(k, **kw)


def names(res, blocks):
    return sorted(res.block_name(b) for b in blocks)


def test_fig2_structure_alone_proves_n1_n2_n2p_n6_n7_convergent():
    res = analyze(FIG2.replace("LIMIT", "%r1"), variance=False)
    conv = [b for b in range(res.cfg.n_blocks) if res.convergent[b] and b != res.cfg.exit]
    assert names(res, conv) == sorted(["B0", "N2", "N2p", "N6", "N7"])
    assert names(res, [b for b in range(res.cfg.n_blocks) if res.structurally_convergent[b] and b != res.cfg.exit]) == \
        sorted(["B0", "N2", "N2p", "N6", "N7"])


def test_fig2_invariant_branches_keep_everything_convergent():
    res = analyze(FIG2.replace("LIMIT", "%r1"))
    assert res.divergent_blocks == [] and res.syncwarp_blocks == []


def test_fig2_variant_branch_in_n4p_diverges_only_n4p_and_n4():
    res = analyze(FIG2.replace("LIMIT", "%r2"))
    assert names(res, res.divergent_blocks) == ["N4", "N4p"]
    assert names(res, res.syncwarp_blocks) == ["N5"]  # §5.2: N5 must be guarded by a syncwarp
    assert res.syncwarp_mask.dtype == bool and list(res.syncwarp_mask.nonzero()[0]) == res.syncwarp_blocks
    # N5 reads the loop counter, which diverged: its add is variant; N2's is uniform
    k = res.func
    cls = {k.instructions[i].text.split()[0] + str(i): res.instr_class[i] for i in range(len(k.instructions))}
    n5 = res.cfg.blocks[[b.label for b in res.cfg.blocks].index("N5")]
    assert res.instr_class[n5.start] == "variant"
    n2 = res.cfg.blocks[[b.label for b in res.cfg.blocks].index("N2")]
    assert res.instr_class[n2.start] == "uniform"


EARLY_EXIT = HEAD + """
.visible .entry early(.param .u64 early_param_0)
{
    .reg .pred %p<3>;
    .reg .b32 %r<6>;
    .reg .b64 %rd<5>;
    mov.u32 %r1, %tid.x;
    setp.gt.u32 %p1, %r1, 3;
    @%p1 bra DONE;
S1:
    ld.param.u64 %rd1, [early_param_0];
    cvta.to.global.u64 %rd2, %rd1;
    ld.global.u32 %r2, [%rd2];
    add.s32 %r3, %r2, 1;
    st.global.u32 [%rd2], %r3;
DONE:
    ret;
}
"""


def test_early_exit_rule_keeps_the_remaining_threads_convergent():
    with_rule = analyze(EARLY_EXIT)
    without = analyze(EARLY_EXIT, early_exit=False)
    s1 = [b.id for b in with_rule.cfg.blocks if b.label == "S1"][0]
    assert with_rule.convergent[s1] and not without.convergent[s1]
    # S1's load from a uniform address is uniform once S1 is convergent
    blk = with_rule.cfg.blocks[s1]
    assert with_rule.instr_class[blk.start + 2] == "uniform"
    assert without.instr_class[blk.start + 2] == "variant"


BARRIER_LOOP = HEAD + """
.visible .entry barloop(.param .u32 barloop_param_0)
{
    .reg .pred %p<3>;
    .reg .b32 %r<8>;
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, 0;
HEAD:
    add.s32 %r2, %r2, 1;
    bar.sync 0;
AFTER:
    add.s32 %r3, %r2, 2;
TEST:
    setp.lt.u32 %p1, %r2, %r1;
    @%p1 bra HEAD;
    add.s32 %r4, %r3, 1;
    ret;
}
"""


def test_barrier_blocks_stay_convergent():
    res = analyze(BARRIER_LOOP)
    by = {b.label: b.id for b in res.cfg.blocks}
    # the loop trip count depends on %tid: the loop body is control dependent on a variant branch,
    # but the source block holding __syncthreads() (split at the barrier) is asserted convergent
    for name in ("HEAD", "AFTER", "TEST"):
        assert by["TEST"] in res.cfg.iterated_control_deps[by[name]]
    assert res.convergent[by["HEAD"]] and res.convergent[by["AFTER"]]
    assert not res.convergent[by["TEST"]]


def test_fir_kernel_uniform_bookkeeping_and_warp_sequential_accesses():
    m = parse_ptx(DATA / "fir.ptx")
    res = analyze_convergence(m.find_kernel("fir"))
    k = res.func
    assert res.divergent_blocks == []
    for i, ins in enumerate(k.instructions):
        t = ins.text
        if ins.base == "ld" and "global" in ins.modifiers:
            base = ins.operands[1].base.name
            if base in ("%rd23", "%rd25"):  # coefficients[i]: same address in every thread
                assert res.instr_class[i] == "uniform", t
                assert not res.warp_sequential[i], t
            else:  # samples[idx + i]: unit stride across threads
                assert res.warp_sequential[i], t
        if ins.base == "st":
            assert res.warp_sequential[i], t  # results[idx]
        tid = k.instructions[6].operands[0]  # mov.u32 %r1, %tid.x
        assert k.instructions[6].operands[1].name == "%tid"
        if ins.base in ("setp", "bra") or (ins.base == "add" and ins.modifiers == ("s32",) and tid not in ins.operands):
            assert res.instr_class[i] == "uniform", t  # loop counters and trip tests
        if ins.base == "add" and tid in ins.operands:
            assert res.instr_class[i] == "affine" and res.stride[i] == 1, t  # idx + i
        if ins.base == "mul" and ins.operands[1] == k.instructions[6].operands[0]:  # %r1 = %tid.x
            assert res.instr_class[i] == "affine" and res.stride[i] == 4, t
    s = res.summary()
    assert s["warp_sequential"] == 6 and s["affine"] >= 4


def test_fir_ptx_is_committed_with_its_source():
    assert (DATA / "fir.cu").exists() and "fir" in (DATA / "fir.ptx").read_text()


# ---------------------------------------------------------------------------------------------
# Property: variance is monotone and sound against a brute-force taint over all paths
# ---------------------------------------------------------------------------------------------


@st.composite
def straight_line(draw):
    """A random straight-line kernel over 6 registers: each instruction adds two sources, some read
    %tid.x; the brute-force answer is a taint closure."""
    n = draw(st.integers(1, 12))
    lines, tainted = [], set()
    for i in range(n):
        dst = draw(st.integers(1, 6))
        a = draw(st.one_of(st.integers(1, 6), st.just(0)))
        b = draw(st.integers(1, 6))
        if a == 0:
            lines.append(f"    add.u32 %r{dst}, %r{b}, 0;")
            lines.append(f"    mov.u32 %r{dst}, %tid.x;")
            tainted.add(dst)
        else:
            lines.append(f"    add.u32 %r{dst}, %r{a}, %r{b};")
            if a in tainted or b in tainted:
                tainted.add(dst)
            else:
                tainted.discard(dst)
    return lines, tainted


@examples(100)
@given(straight_line())
def test_variance_matches_taint_on_straight_line_code(prog):
    lines, tainted = prog
    text = HEAD + ".visible .entry k(.param .u32 k_param_0)\n{\n    .reg .b32 %r<8>;\n" + \
        "\n".join(f"    ld.param.u32 %r{r}, [k_param_0];" for r in range(1, 7)) + "\n" + "\n".join(lines) + "\n    ret;\n}\n"
    res = analyze(text)
    k = res.func
    last = {}
    for i, ins in enumerate(k.instructions):
        if ins.operands and hasattr(ins.operands[0], "name") and ins.base in ("add", "mov", "ld"):
            last[ins.operands[0].name] = i
    for r in range(1, 7):
        i = last[f"%r{r}"]
        assert (not res.invariant[i]) == (r in tainted)


# ---------------------------------------------------------------------------------------------
# Static scalarization statistics (Lee et al. 2013 §4.2)
# ---------------------------------------------------------------------------------------------


def test_fir_scalarization_registers_and_instructions():
    from simt_fast.ir.flat import instruction_registers
    from simt_fast.ir.scalarize import scalar_instructions, scalarization_stats

    k = parse_ptx(DATA / "fir.ptx").find_kernel("fir")
    conv = analyze_convergence(k)
    s = scalarization_stats(k, warp_size=32, conv=conv)
    scalar = scalar_instructions(conv)
    writers = {}
    for i, ins in enumerate(k.instructions):
        for r in instruction_registers(ins)[0]:
            writers.setdefault(r, []).append(i)
    is_scalar = {r: all(scalar[i] for i in ws) for r, ws in writers.items()}
    # loop bookkeeping, coefficient pointers and the coefficient values are per-warp scalars
    for r in ("%r11", "%r17", "%r18", "%r19", "%rd2", "%rd23", "%rd25", "%f13", "%f24"):
        assert is_scalar[r], r
    # the thread index, sample addresses, samples and the accumulator are private
    for r in ("%r1", "%rd24", "%rd26", "%f12", "%f23", "%f29"):
        assert not is_scalar[r], r
    assert s.scalar_registers + s.private_registers == s.registers == len(writers)
    assert s.scalar_instructions + s.warp_sequential + s.thread_instructions == s.instructions == len(k.instructions)
    assert s.warp_sequential == 6
    assert s.registers_per_warp == 32 * s.registers
    assert s.scalarized_registers_per_warp == 32 * s.private_registers + s.scalar_registers
    assert 0 < s.register_reduction_pct < 100 and 0 < s.scalar_pct < 100


def test_scalarization_of_paper_example_arithmetic():
    from simt_fast.ir.scalarize import ScalarizationStats

    # Fig. 1: 9 registers per thread -> 288 per 32-thread warp; 2 private + 6 scalar -> 70 (76% fewer)
    s = ScalarizationStats(32, 10, 7, 1, 2, 8, 6, 2, 0, 0)
    s.registers = 9
    assert s.registers_per_warp == 288 and s.scalarized_registers_per_warp == 70
    assert round(s.register_reduction_pct) == 76


def test_divergent_code_is_not_scalar():
    from simt_fast.ir.scalarize import scalarization_stats

    res = analyze(FIG2.replace("LIMIT", "%r2"))
    s = scalarization_stats(res.func, conv=res)
    n4 = [b for b in res.cfg.blocks if b.label == "N4"][0]
    # the loop counter increment is in a divergent block: a thread instruction, private register
    assert s.private_registers >= 2  # %r2 (tid) and %r5 (loop counter)
    assert not res.convergent[n4.id]


def test_local_memory_loads_are_thread_variant():
    text = HEAD + """
.visible .entry loc(.param .u64 loc_param_0)
{
    .local .align 4 .b8 __local_depot0[16];
    .reg .b32 %r<6>;
    .reg .b64 %rd<6>;
    mov.u64 %rd1, __local_depot0;
    cvta.local.u64 %rd2, %rd1;
    mov.u32 %r1, %tid.x;
    st.local.u32 [%rd1], %r1;
    ld.local.u32 %r2, [%rd1];
    ld.u32 %r3, [%rd2];
    ld.param.u64 %rd3, [loc_param_0];
    ret;
}
"""
    res = analyze(text)
    by_text = {ins.text.split(";")[0].strip(): res.instr_class[i] for i, ins in enumerate(res.func.instructions)}
    assert by_text["ld.local.u32 %r2, [%rd1]"] == "variant"
    assert by_text["ld.u32 %r3, [%rd2]"] == "variant"
    assert by_text["mov.u64 %rd1, __local_depot0"] == "uniform"
    assert by_text["ld.param.u64 %rd3, [loc_param_0]"] == "uniform"


# ---------------------------------------------------------------------------------------------
# Differential: the worklist algorithm against a naive round-robin fixpoint on random kernels
# ---------------------------------------------------------------------------------------------


def naive_fixpoint(res, early_exit=True):
    """Reference: iterate the two defining equations until nothing changes."""
    from simt_fast.ir.convergence import _barrier_protected, _exits_early, _is_seed, _reaching_definitions

    func, cfg = res.func, res.cfg
    _, uses = _reaching_definitions(func, cfg)
    n_blocks = cfg.n_blocks
    variant = [_is_seed(ins, func) for ins in func.instructions]
    divergent = [False] * n_blocks
    protected = _barrier_protected(cfg)
    block_of = cfg.block_of_instr
    changed = True
    while changed:
        changed = False
        for i in range(len(variant)):
            v = variant[i] or divergent[block_of[i]] or any(variant[d] for ds in uses[i].values() for d in ds)
            if v != variant[i]:
                variant[i] = v
                changed = True
        for y in range(n_blocks):
            if y == cfg.exit or protected[y] or divergent[y]:
                continue
            for x in cfg.iterated_control_deps[y]:
                blk = cfg.blocks[x]
                if len(blk.succs) > 1 and variant[blk.end - 1] and not (early_exit and _exits_early(cfg, x)):
                    divergent[y] = True
                    changed = True
                    break
    return variant, divergent


@st.composite
def random_branchy_kernel(draw):
    n = draw(st.integers(2, 7))
    lines = []
    for b in range(n):
        lines.append(f"L{b}:")
        for _ in range(draw(st.integers(0, 3))):
            dst, a = draw(st.integers(1, 4)), draw(st.integers(1, 4))
            src = draw(st.sampled_from([f"%r{a}", "%tid.x", "%ctaid.x", "7"]))
            lines.append(f"    add.u32 %r{dst}, %r{a}, {src};" if src != "%tid.x" and src != "%ctaid.x"
                         else f"    mov.u32 %r{dst}, {src};")
        if draw(st.booleans()) and b:
            lines.append("    bar.sync 0;")
            lines.append(f"L{b}b:")
        end = draw(st.sampled_from(["cond", "cond", "uni", "fall", "ret"]))
        if end == "cond":
            lines.append(f"    setp.lt.u32 %p1, %r{draw(st.integers(1, 4))}, %r{draw(st.integers(1, 4))};")
            lines.append(f"    @%p1 bra L{draw(st.integers(0, n - 1))};")
        elif end == "uni":
            lines.append(f"    bra.uni L{draw(st.integers(0, n - 1))};")
        elif end == "ret":
            lines.append("    ret;")
    lines.append("    ret;")
    return HEAD + ".visible .entry k(.param .u32 k_param_0)\n{\n    .reg .pred %p<2>;\n    .reg .b32 %r<5>;\n" + \
        "".join(f"    ld.param.u32 %r{r}, [k_param_0];\n" for r in range(1, 5)) + "\n".join(lines) + "\n}\n"


@examples(150)
@given(random_branchy_kernel(), st.booleans())
def test_worklist_matches_naive_fixpoint(text, early_exit):
    res = analyze(text, early_exit=early_exit)
    variant, divergent = naive_fixpoint(res, early_exit)
    assert [not x for x in res.invariant] == variant
    assert [not c for c in res.convergent] == divergent
