"""Accel-Sim traces in (simt_fast.trace.accelsim, `simt-fast import-accelsim`).

Hand-written traces whose paths, CFG, /mem and thread_insts are worked out from the text; a
differential test against a random SIMT machine that knows every thread's true path; malformed
lines; the command line; one end-to-end simulation of an imported trace.
"""

import json
import re
import threading

import numpy as np
import pytest
from hypothesis import given, strategies as st

from typer.testing import CliRunner

from simt_fast.cli import app
from simt_fast.ir.model import OpClass
from simt_fast.trace import TraceError, validate
from simt_fast.trace import accelsim, accelsim_reference
from simt_fast.trace.model import MEM_ATOMIC, MEM_FORMAT, MEM_LOAD, MEM_STORE, NO_ACCESS

import accelsim_helpers as ah
from accelsim_helpers import header, line
from hypothesis_budget import examples

NA = int(NO_ACCESS)


MEMORY = [OpClass.MEM_GLOBAL, OpClass.MEM_SHARED, OpClass.MEM_LOCAL, OpClass.MEM_CONST]


def load_text(tmp_path, text, name="kernel-1.traceg"):
    trace = accelsim.load(ah.write(tmp_path / name, text))
    validate(trace)
    check_mem_layout(trace)
    return trace


def check_mem_layout(trace):
    """DESIGN §3 per-instruction /mem: one entry per memory instruction on each thread's path."""
    assert trace.mem_format == MEM_FORMAT
    cum = np.concatenate([[0], np.cumsum(np.isin(trace.op_class, MEMORY))])
    per_block = cum[trace.block_start[1:]] - cum[trace.block_start[:-1]]
    expected = [int(per_block[trace.thread_path(t)].sum()) for t in range(trace.n_threads)]
    assert np.diff(trace.mem_ptr).tolist() == expected
    assert ((trace.mem_bytes > 0) == np.isin(trace.op_class, MEMORY)).all()


def pcs_of(trace):
    """PC of every instruction (from its text, '/*0040*/ ...')."""
    return [int(t[2:t.index("*/")], 16) for t in trace.text]


def thread_pcs(trace, t):
    pcs = pcs_of(trace)
    out = []
    for b in trace.thread_path(t):
        out += pcs[trace.block_start[b]:trace.block_start[b + 1]]
    return out


def succs(trace, b):
    return trace.succ_idx[trace.succ_ptr[b]:trace.succ_ptr[b + 1]].tolist()


def mem_of(trace, t):
    return trace.mem_addr[trace.mem_ptr[t]:trace.mem_ptr[t + 1]].tolist()


# ---------------------------------------------------------------------------------------------
# Hand-written traces
# ---------------------------------------------------------------------------------------------

# if/else on a 4-thread warp: lanes 0,1 take @P0 BRA 0x60, lanes 2,3 run the fall-through side
# (an LDG, base+stride) and BRA over the STG (base+delta) of the taken side; both meet at BSYNC.
IFELSE = [
    line(0x00, 0xF, "S2R", ["R1"], []),
    line(0x10, 0xF, "ISETP.GE.AND", [], ["R1"]),
    line(0x20, 0xF, "BSSY", [], []),
    line(0x30, 0x3, "BRA", [], []),
    line(0x40, 0xC, "LDG.E", ["R2"], ["R4"], (4, 1, "0x7f5c1b001008", 4)),
    line(0x50, 0xC, "BRA", [], []),
    line(0x60, 0x3, "STG.E", [], ["R4", "R1"], (4, 2, "0x7f5c1b002000", 12)),
    line(0x70, 0xF, "BSYNC", [], []),
    line(0x80, 0xF, "EXIT", [], []),
]


def test_diverging_warp_paths_cfg_mem_and_counts(tmp_path):
    t = load_text(tmp_path, ah.trace_text({(0, 0, 0): [IFELSE]}, block=(4, 1, 1)))
    # blocks: 0 = 0x00..0x30 (ends at the BRA), 1 = 0x40..0x50, 2 = 0x60, 3 = 0x70..0x80, 4 = exit
    assert t.block_start.tolist() == [0, 4, 6, 7, 9, 9]
    assert t.label == ["0x0000", "0x0040", "0x0060", "0x0070", "<exit>"]
    assert [succs(t, b) for b in range(5)] == [[2, 1], [3], [3], [4], []]  # taken target first
    assert t.ipdom.tolist() == [3, 3, 3, 4, -1]
    assert [t.thread_path(i).tolist() for i in range(4)] == [[0, 2, 3, 4]] * 2 + [[0, 1, 3, 4]] * 2
    # lanes 2 and 3 executed the BRA at 0x30 with a false guard: on their path, not in its mask
    assert t.total_thread_insts() == 7 + 7 + 8 + 8 == 30
    assert t.attrs["accelsim_thread_insts"] == 28 and t.attrs["predicated_off_thread_insts"] == 2
    assert [mem_of(t, i) for i in range(4)] == [[0x7F5C1B002000], [0x7F5C1B00200C], [0x7F5C1B001008],
                                                [0x7F5C1B00100C]]
    assert t.mem_format == MEM_FORMAT
    assert t.op_class.tolist() == [OpClass.ALU, OpClass.ALU, OpClass.OTHER, OpClass.BRANCH, OpClass.MEM_GLOBAL,
                                   OpClass.BRANCH, OpClass.MEM_GLOBAL, OpClass.OTHER, OpClass.EXIT]
    assert t.dst_reg.tolist()[:5] == [1, -1, -1, -1, 2] and t.src_reg[6].tolist() == [4, 1, -1]
    assert t.mem_kind.tolist()[4:7] == [MEM_LOAD, 0, MEM_STORE] and t.mem_bytes.tolist()[4:7] == [4, 0, 4]
    assert t.kernel == "_Z6kernelPi" and t.grid == (1, 1, 1) and t.block == (4, 1, 1)


def loop_warp(trips, first_lane_tid=0):
    """S2R; BAR.SYNC; loop head 0x20..0x40 (@P0 BRA 0x20 while a thread has iterations left); EXIT.
    Lines in the order of a reconvergence stack: the loop runs until every thread left it."""
    n = len(trips)
    full = (1 << n) - 1
    out = [line(0x00, full, "S2R", ["R0"], []), line(0x10, full, "BAR.SYNC", [], [])]
    for k in range(max(trips)):
        alive = sum(1 << i for i, c in enumerate(trips) if c > k)
        again = sum(1 << i for i, c in enumerate(trips) if c > k + 1)
        out += [line(0x20, alive, "IADD3", ["R1"], ["R1", "R0"]), line(0x30, alive, "ISETP.GE.AND", [], ["R1"]),
                line(0x40, again, "BRA", [], [])]
    return out + [line(0x50, full, "EXIT", [], [])]


def test_loop_barrier_two_warps_two_ctas_out_of_order(tmp_path):
    trips = {cta: [(i + cta) % 3 + 1 for i in range(40)] for cta in range(2)}
    ctas = {(c, 0, 0): [loop_warp(trips[c][:32]), loop_warp(trips[c][32:])] for c in (1, 0)}  # CTA 1 first
    t = load_text(tmp_path, ah.trace_text(ctas, grid=(2, 1, 1), block=(40, 1, 1)))
    assert t.block_start.tolist() == [0, 2, 5, 6, 6]
    assert t.has_barrier.tolist() == [True, False, False, False]
    assert [succs(t, b) for b in range(4)] == [[1], [1, 2], [3], []]  # back edge first, then the exit side
    assert t.ipdom.tolist() == [1, 2, 3, -1]
    assert t.n_threads == 80
    for cta in range(2):
        for i, c in enumerate(trips[cta]):
            assert t.thread_path(40 * cta + i).tolist() == [0] + [1] * c + [2, 3]
    total = sum(2 + 3 * c + 1 for c in trips[0] + trips[1])
    assert t.total_thread_insts() == total
    # every thread executes the loop's BRA one last time with a false guard
    assert t.attrs["accelsim_thread_insts"] == total - 80


def test_predicated_off_bra_and_exit_are_not_control_flow(tmp_path):
    lines = [
        line(0x00, 0xF, "S2R", ["R0"], []),
        line(0x10, 0xF, "ISETP.GE.AND", [], ["R0"]),
        line(0x20, 0x3, "EXIT", [], []),  # @P0 EXIT: lanes 0, 1 leave; 2, 3 go on with a false guard
        line(0x30, 0x0, "BRA", [], []),  # @P1 BRA 0x60 with P1 false everywhere: nobody jumps
        line(0x40, 0xC, "IADD3", ["R1"], ["R0"]),
        line(0x50, 0x4, "BRA", [], []),  # @P2 BRA 0x70: lane 2 jumps, lane 3 falls through
        line(0x60, 0x8, "IADD3", ["R1"], ["R1"]),
        line(0x70, 0xC, "EXIT", [], []),
    ]
    t = load_text(tmp_path, ah.trace_text({(0, 0, 0): [lines]}, block=(4, 1, 1)))
    assert t.label == ["0x0000", "0x0030", "0x0040", "0x0060", "0x0070", "<exit>"]
    assert [succs(t, b) for b in range(6)] == [[5, 1], [2], [4, 3], [4], [5], []]
    assert t.ipdom.tolist() == [5, 2, 4, 4, 5, -1]
    assert [thread_pcs(t, i) for i in range(4)] == [
        [0x00, 0x10, 0x20], [0x00, 0x10, 0x20],
        [0x00, 0x10, 0x20, 0x30, 0x40, 0x50, 0x70],
        [0x00, 0x10, 0x20, 0x30, 0x40, 0x50, 0x60, 0x70]]
    assert t.total_thread_insts() == 3 + 3 + 7 + 8
    assert t.attrs["accelsim_thread_insts"] == 16 and t.attrs["predicated_off_thread_insts"] == 5


def test_branch_target_with_a_false_guard_in_one_warp(tmp_path):
    """@P0 BRA 0x40 lands on @P1 STG 0x40. CTA 0's jumpers store there; CTA 1's jumpers have P1
    false, so they are first seen at 0x50: the target comes from CTA 0 (the lowest landing) and
    CTA 1's jumpers still pass 0x40 (a NO_ACCESS entry), with no edge 0x20 -> 0x50."""
    def warp(stores):
        return [line(0x00, 0xF, "S2R", ["R0"], []), line(0x10, 0xF, "ISETP.GE.AND", [], ["R0"]),
                line(0x20, 0x3, "BRA", [], []),
                line(0x30, 0xC, "IADD3", ["R1"], ["R0"]),
                line(0x40, 0xF & stores, "STG.E", [], ["R2", "R1"], (4, 1, "0x7f5c1b000000", 4)),
                line(0x50, 0xF, "EXIT", [], [])]
    t = load_text(tmp_path, ah.trace_text({(0, 0, 0): [warp(0xF)], (1, 0, 0): [warp(0xC)]}, grid=(2, 1, 1),
                                          block=(4, 1, 1)))
    assert t.label == ["0x0000", "0x0030", "0x0040", "<exit>"]
    assert [succs(t, b) for b in range(4)] == [[2, 1], [2], [3], []]
    for tid in (0, 1, 4, 5):
        assert thread_pcs(t, tid) == [0x00, 0x10, 0x20, 0x40, 0x50]
    for tid in (2, 3, 6, 7):
        assert thread_pcs(t, tid) == [0x00, 0x10, 0x20, 0x30, 0x40, 0x50]
    assert mem_of(t, 4) == [NA] and mem_of(t, 5) == [NA]
    assert mem_of(t, 6) == [0x7F5C1B000000] and mem_of(t, 1) == [0x7F5C1B000004]


def test_two_groups_at_one_pc_executed_separately(tmp_path):
    """Independent thread scheduling: after @P0 BRA 0x30 both groups sit at 0x30 but run it one
    after the other. The first group's lines pull lanes 2, 3 along (their PC matches); the second
    group's lines show lane 2 at 0x30 again and lane 3 at 0x40, and they are moved back there."""
    lines = [
        line(0x00, 0xF, "S2R", ["R0"], []),
        line(0x10, 0x3, "BRA", [], []),
        line(0x20, 0xC, "IADD3", ["R1"], ["R0"]),
        line(0x30, 0x1, "IADD3", ["R2"], ["R0"]),  # group {0,1}; lane 1's guard false
        line(0x40, 0x3, "STG.E", [], ["R4", "R2"], (4, 1, "0x7f5c1b000000", 4)),
        line(0x50, 0x3, "EXIT", [], []),
        line(0x30, 0x4, "IADD3", ["R2"], ["R0"]),  # group {2,3}; lane 3's guard false
        line(0x40, 0xC, "STG.E", [], ["R4", "R2"], (4, 1, "0x7f5c1b000008", 4)),
        line(0x50, 0xC, "EXIT", [], []),
    ]
    t = load_text(tmp_path, ah.trace_text({(0, 0, 0): [lines]}, block=(4, 1, 1)))
    assert [thread_pcs(t, i) for i in range(4)] == [[0x00, 0x10, 0x30, 0x40, 0x50]] * 2 + [
        [0x00, 0x10, 0x20, 0x30, 0x40, 0x50]] * 2
    assert [mem_of(t, i) for i in range(4)] == [[0x7F5C1B000000 + 4 * i] for i in range(4)]
    assert t.total_thread_insts() == 5 + 5 + 6 + 6


def test_indirect_branch_bra_div_and_a_called_subroutine(tmp_path):
    """BRX sends lanes 0,1 to 0x20 and lanes 2,3 to 0x40 (each thread its own target); BRA.DIV
    with every lane in its mask lands on the next instruction (not taken); CALL jumps to the
    subroutine at 0x90 whose RET (through R20) returns to 0x70. No line at 0x80: never executed."""
    lines = [
        line(0x00, 0xF, "S2R", ["R0"], []),
        line(0x10, 0xF, "BRX", [], ["R2"]),
        line(0x20, 0x3, "IADD3", ["R1"], ["R0"]),
        line(0x30, 0x3, "BRA", [], []),
        line(0x40, 0xC, "IADD3", ["R1"], ["R0"]),
        line(0x50, 0xC, "BRA.DIV", [], []),
        line(0x60, 0xF, "CALL.REL.NOINC", [], []),
        line(0x90, 0xF, "IADD3", ["R1"], ["R1"]),
        line(0xA0, 0xF, "RET.REL.NODEC", [], ["R20"]),
        line(0x70, 0xF, "EXIT", [], []),
    ]
    t = load_text(tmp_path, ah.trace_text({(0, 0, 0): [lines]}, block=(4, 1, 1)))
    assert t.label == ["0x0000", "0x0020", "0x0040", "0x0060", "0x0070", "0x0090", "<exit>"]
    assert [succs(t, b) for b in range(7)] == [[2, 1], [3], [3], [5], [6], [4], []]
    assert t.ipdom.tolist() == [3, 3, 3, 5, 6, 4, -1]
    assert [t.thread_path(i).tolist() for i in range(4)] == [[0, 1, 3, 5, 4, 6]] * 2 + [[0, 2, 3, 5, 4, 6]] * 2
    assert t.total_thread_insts() == 32 == t.attrs["accelsim_thread_insts"]
    assert t.op_class[pcs_of(t).index(0xA0)] == OpClass.BRANCH and t.src_reg[pcs_of(t).index(0xA0)][0] == 20


def test_address_modes_windows_widths_and_kinds(tmp_path):
    base = ah.SHMEM_BASE
    lines = [
        line(0x00, 0xFF, "S2R", ["R0"], []),
        # mode 0: one address per thread of the mask; lanes 0, 2, 5, 7 have a false guard
        line(0x10, 0x5A, "LDG.E.64", ["R2"], ["R4"], (8, 0, *[f"{0x1000 + 64 * i:#018x}" for i in (1, 3, 4, 6)])),
        # mode 1, negative stride, in the shared window
        line(0x20, 0xFF, "LDS.U16", ["R3"], ["R0"], (2, 1, f"{base + 0x200:#x}", -8)),
        # mode 2, deltas (one fewer than the threads), local window
        line(0x30, 0x0F, "STL", [], ["R1", "R3"], (4, 2, f"{ah.LOCAL_BASE + 0x10:#x}", 4, -4, 100)),
        line(0x40, 0xFF, "ATOMG.E.ADD.STRONG.GPU", ["R5"], ["R6", "R7", "R8", "R9"], (4, 1, "0x2000", 0)),
        line(0x50, 0xF0, "LDC.64", ["R10"], ["R0"]),  # no address in the trace: offset 0
        line(0x60, 0xFF, "EXIT", [], []),
    ]
    t = load_text(tmp_path, ah.trace_text({(0, 0, 0): [lines]}, block=(8, 1, 1)))
    assert t.op_class.tolist() == [OpClass.ALU, OpClass.MEM_GLOBAL, OpClass.MEM_SHARED, OpClass.MEM_LOCAL,
                                   OpClass.MEM_GLOBAL, OpClass.MEM_CONST, OpClass.EXIT]
    assert t.mem_bytes.tolist() == [0, 8, 2, 4, 4, 8, 0]
    assert t.mem_kind.tolist() == [0, MEM_LOAD, MEM_LOAD, MEM_STORE, MEM_ATOMIC, MEM_LOAD, 0]
    assert t.src_reg[4].tolist() == [6, 7, 8]  # capped at three sources
    ldg = {1: 0x1040, 3: 0x10C0, 4: 0x1100, 6: 0x1180}
    stl = [0x10, 0x14, 0x10, 0x74]
    for lane in range(8):
        assert mem_of(t, lane) == [ldg.get(lane, NA), 0x200 - 8 * lane, stl[lane] if lane < 4 else NA, 0x2000,
                                   0 if lane >= 4 else NA]


def test_lineinfo_version3_and_immediates(tmp_path):
    body = [line(0x00, 0x3, "S2R", ["R0"], [], lineno=12, imm=0), line(0x10, 0x3, "EXIT", [], [], lineno=13, imm=-1)]
    t = load_text(tmp_path, ah.trace_text({(0, 0, 0): [body]}, block=(2, 1, 1), lineinfo=True))
    assert t.total_thread_insts() == 4
    v3 = [line(0x00, 0x3, "S2R", ["R0"], []), line(0x10, 0x3, "EXIT", [], [])]
    t3 = load_text(tmp_path, ah.trace_text({(0, 0, 0): [v3]}, block=(2, 1, 1), version=3), name="v3.traceg")
    assert t3.attrs["accelsim_tracer_version"] == 3 and t3.total_thread_insts() == 4


def test_xz_file_imports_to_the_same_trace(tmp_path):
    text = ah.trace_text({(0, 0, 0): [IFELSE]}, block=(4, 1, 1))
    plain = accelsim.load(ah.write(tmp_path / "kernel-1.traceg", text))
    packed = accelsim.load(ah.write(tmp_path / "kernel-1.traceg.xz", text))
    assert packed.digest() == plain.digest()


# ---------------------------------------------------------------------------------------------
# Differential: a random SIMT machine knows every thread's true path
# ---------------------------------------------------------------------------------------------


def _machine_trace(seed, mode, guarded_targets, tmp, stated_targets=False):
    """A random program run by the SIMT machine, printed as the tracer would, and imported."""
    m = ah.machine_trace(seed, mode, guarded_targets, stated_targets=stated_targets)
    return load_text(tmp, m.text), m.pcs, m.mem, m.on


@examples(60)
@given(seed=st.integers(0, 2**32 - 1), mode=st.sampled_from(["merge", "split"]))
def test_recovered_paths_equal_the_machines(tmp_path_factory, seed, mode):
    """Branch targets unguarded (as nvcc emits them): every path and /mem entry is exact, whether
    threads at one PC always run together ("merge") or groups run one PC separately ("split")."""
    t, truth_pcs, truth_mem, _ = _machine_trace(seed, mode, False, tmp_path_factory.mktemp("as"))
    for tid in range(t.n_threads):
        assert thread_pcs(t, tid) == truth_pcs[tid], tid
        assert mem_of(t, tid) == truth_mem[tid], tid
    assert t.total_thread_insts() == sum(len(p) for p in truth_pcs)


def _is_subsequence(part, whole) -> bool:
    it = iter(whole)
    return all(x in it for x in part)


@examples(30)
@given(seed=st.integers(0, 2**32 - 1), mode=st.sampled_from(["merge", "split"]))
def test_guarded_branch_targets_lose_only_predicated_off_steps(tmp_path_factory, seed, mode):
    """Branch targets with a guard that may be false for every jumping thread: a thread's jump
    is then ambiguous and it is taken to land at its next true-guard instruction. The import
    still succeeds and validates; each path is the true path minus some predicated-off steps."""
    t, truth_pcs, _, truth_on = _machine_trace(seed, mode, True, tmp_path_factory.mktemp("as"))
    for tid in range(t.n_threads):
        got = thread_pcs(t, tid)
        assert _is_subsequence(got, truth_pcs[tid]) and _is_subsequence(truth_on[tid], got), tid


@examples(30)
@given(seed=st.integers(0, 2**32 - 1), mode=st.sampled_from(["merge", "split"]))
def test_stated_branch_targets_make_guarded_targets_exact(tmp_path_factory, seed, mode):
    """The same guarded targets with each BRA line's immediate its target (tracer versions 4 and
    5): every path and /mem entry is exact again."""
    t, truth_pcs, truth_mem, _ = _machine_trace(seed, mode, True, tmp_path_factory.mktemp("as"), stated_targets=True)
    for tid in range(t.n_threads):
        assert thread_pcs(t, tid) == truth_pcs[tid], tid
        assert mem_of(t, tid) == truth_mem[tid], tid


# ---------------------------------------------------------------------------------------------
# Bad input: one sentence with file and line
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("bad, words", [
    (line(0x10, 0xF, "LDG.E", ["R2"], ["R4"], (4, 2, "0x1000", 4)), "mode 2 needs a base address and 3 deltas (one per thread of the mask after the first) but 2 fields are left"),
    (line(0x10, 0xF, "LDG.E", ["R2"], ["R4"], (4, 1, "0x1000", "x4")), "an address field of mode 1 is not a number"),
    (line(0x10, 0xF, "LDG.E", ["R2"], ["R4"], (4, 0, "0x1000", "0x1004")), "mode 0 needs 4 addresses (one per thread of the mask) but 2 fields are left"),
    (line(0x10, 0xF, "LDG.E", ["R2"], ["R4"], (4, 7, 0)), "address mode 7"),
    ("0010 0000000g 0 NOP 0 0", "active mask '0000000g'"),
    ("0010 1ffffffff 0 NOP 0 0", "is not a 32-bit hex number"),
    ("0010 0000000f 1 Q7 NOP 0 0", "destination register 'Q7'"),
    ("0010 0000000f 0 NOP 3 R1 0", "source register count 3 does not match"),
    ("0010 0000000f 0 NOP 0 0 1 2", "2 fields follow the mem_width"),
    ("0010 0000000f 0 NOP 0 0 x", "the last field 'x' is not an immediate"),
    ("0010 0000000f", "too few"),
    (line(0x00, 0xF, "IADD3", ["R2"], []), "PC 0x0000 is '/*0000*/ S2R R0' on line 24"),
])
def test_malformed_line_names_file_and_line(tmp_path, bad, words):
    lines = [line(0x00, 0xF, "S2R", ["R0"], []), bad, line(0x20, 0xF, "EXIT", [], [])]
    text = ah.trace_text({(0, 0, 0): [lines]}, block=(4, 1, 1))
    path = ah.write(tmp_path / "kernel-1.traceg", text)
    number = [s.rstrip() for s in text.splitlines()].index(bad.rstrip()) + 1
    with pytest.raises(TraceError) as err:
        accelsim.load(path)
    msg = str(err.value)
    assert msg.startswith(f"{path}:{number}: ") and words in msg and "\n" not in msg


@pytest.mark.parametrize("edit, words", [
    (lambda s: s.replace("insts = 3", "insts = 4"), "announces 4 instructions but 3 follow"),
    (lambda s: s.replace("-accelsim tracer version = 4", "-accelsim tracer version = 2"), "tracer version 2"),
    (lambda s: s.replace("-grid dim = (1,1,1)", "-grid dim = (2,1,1)"), "thread block (1,0,0) of the 2-block grid is missing"),
    (lambda s: s.replace("thread block = 0,0,0", "thread block = 0,5,0"), "is not a thread block of the grid"),
    (lambda s: s.replace("0020 0000000f 0 EXIT", "0020 00000007 0 EXIT"), "never executes an EXIT"),
    (lambda s: s.replace("0020 0000000f 0 EXIT", "0020 0000001f 0 EXIT"), "has no thread in that lane"),
])
def test_inconsistent_trace_is_one_sentence(tmp_path, edit, words):
    lines = [line(0x00, 0xF, "S2R", ["R0"], []), line(0x10, 0xF, "NOP", [], []), line(0x20, 0xF, "EXIT", [], [])]
    path = ah.write(tmp_path / "kernel-1.traceg", edit(ah.trace_text({(0, 0, 0): [lines]}, block=(4, 1, 1))))
    with pytest.raises(TraceError, match=re.escape(words)) as err:
        accelsim.load(path)
    assert str(err.value).startswith(str(path)) and "\n" not in str(err.value)


def test_an_error_in_the_text_stops_the_reading_thread(tmp_path):
    """The text is read on a second thread up to two chunks ahead (`accelsim_text.read_ahead`): a line
    the importer refuses near the start of a text of several chunks must not leave that thread
    reading on (blocked on its full queue) after the error."""
    lines = ["thread block = 0,0,0", "", "warp = 0", "insts = 1", "this is not an instruction line"]
    filler = "# " + "x" * 1000
    text = "\n".join(header() + ["#BEGIN_TB", ""] + lines) + "\n" + (filler + "\n") * 20_000  # 20 MB, 5 chunks
    path = tmp_path / "kernel-1.traceg"
    path.write_text(text)
    with pytest.raises(TraceError):
        accelsim.load(path)
    assert not [t for t in threading.enumerate() if t.name == "simt-fast-read"]


@pytest.mark.parametrize("parts", [2, 3])
def test_paths_recovered_in_parts_name_the_first_bad_warp_of_the_file(tmp_path, monkeypatch, parts):
    """The warps' paths are recovered in consecutive parts of the file on several threads: with bad
    warps in more than one part, the error is still the file's first (the reference's sentence)."""
    good = [line(0x00, 0xF, "S2R", ["R0"], []), line(0x10, 0xF, "EXIT", [], [])]
    bad = [line(0x00, 0xF, "S2R", ["R0"], []), line(0x20, 0xF, "NOP", [], [])]  # no path leads to 0x20
    text = ah.trace_text({(c, 0, 0): [bad if c in (2, 6) else good] for c in range(8)}, grid=(8, 1, 1),
                         block=(4, 1, 1))
    path = ah.write(tmp_path / "kernel-1.traceg", text)
    monkeypatch.setattr(accelsim, "BATCH_ROWS", 2)
    monkeypatch.setattr(accelsim, "RECOVER_WORKERS", parts)
    assert len(accelsim._file_parts(accelsim.scan_kernel(path), parts)) == parts
    with pytest.raises(TraceError) as err:
        accelsim.load(path)
    assert "thread block 2,0,0" in str(err.value) or "thread block (2,0,0)" in str(err.value), str(err.value)
    with pytest.raises(TraceError) as want:
        accelsim_reference.load(path)
    assert str(err.value) == str(want.value)


def test_corrupt_xz_is_one_sentence(tmp_path):
    path = tmp_path / "kernel-1.traceg.xz"
    path.write_bytes(b"\xfd7zXZ\x00 not really")
    with pytest.raises(TraceError, match="is not a readable xz file"):
        accelsim.load(path)


# ---------------------------------------------------------------------------------------------
# Command line
# ---------------------------------------------------------------------------------------------


def _directory(tmp_path):
    d = tmp_path / "traces"
    d.mkdir()
    ah.write(d / "kernel-1.traceg", ah.trace_text({(0, 0, 0): [IFELSE]}, block=(4, 1, 1)))
    trips = [i % 3 + 1 for i in range(40)]
    ah.write(d / "kernel-2.traceg.xz", ah.trace_text({(0, 0, 0): [loop_warp(trips[:32]), loop_warp(trips[32:])]},
                                                      name="_Z4loopv", block=(40, 1, 1)))
    (d / "kernelslist.g").write_text("MemcpyHtoD,0x00007f5c1b000000,4096\nkernel-1.traceg\nkernel-2.traceg.xz\n")
    return d


def test_cli_imports_a_directory_and_prints_the_counts(tmp_path):
    d = _directory(tmp_path)
    r = CliRunner().invoke(app, ["import-accelsim", str(d / "kernelslist.g"), "-o", str(tmp_path / "out")])
    assert r.exit_code == 0, r.output
    assert f"kernel-1.traceg: _Z6kernelPi -> {tmp_path / 'out' / 'kernel-1.h5'}" in r.output
    assert "warp instructions 9; mask popcounts 28 (Accel-Sim gpu_sim_insn); thread_insts 30 " \
           "(= mask popcounts + 2 predicated off)" in r.output
    assert "kernel-2.traceg.xz: _Z4loopv" in r.output
    for name in ("kernel-1.h5", "kernel-2.h5"):
        v = CliRunner().invoke(app, ["validate", str(tmp_path / "out" / name)])
        assert v.exit_code == 0 and ": ok (" in v.output


def test_cli_bad_line_exits_2_with_one_line(tmp_path):
    d = _directory(tmp_path)
    text = (d / "kernel-1.traceg").read_text().replace("0040 0000000c 1 R2 LDG.E 1 R4 4 1", "0040 0000000c 1 R2 LDG.E 1 R4 4 9")
    (d / "kernel-1.traceg").write_text(text)
    r = CliRunner().invoke(app, ["import-accelsim", str(d / "kernelslist.g"), "-o", str(tmp_path / "out")])
    assert r.exit_code == 2
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {d / 'kernel-1.traceg'}:") and "address mode 9" in lines[0]
    assert not (tmp_path / "out" / "kernel-1.h5").exists()


def test_run_takes_an_accelsim_kernel_trace_as_its_imported_file(tmp_path):
    """`simt-fast run` on a .traceg imports it in memory: the same numbers as the imported file."""
    from simt_fast.commands.run import ACCELSIM_INPUTS

    assert set(accelsim.TRACE_SUFFIXES) <= set(ACCELSIM_INPUTS)
    d = _directory(tmp_path)
    assert CliRunner().invoke(app, ["import-accelsim", str(d / "kernelslist.g"), "-o", str(tmp_path / "out")]).exit_code == 0
    for kernel, h5 in (("kernel-1.traceg", "kernel-1.h5"), ("kernel-2.traceg.xz", "kernel-2.h5")):
        args = ["-m", "sps,dwf", "-c", "fermi", "--json"]
        direct = CliRunner().invoke(app, ["run", str(d / kernel), *args])
        stored = CliRunner().invoke(app, ["run", str(tmp_path / "out" / h5), *args])
        assert direct.exit_code == 0 and stored.exit_code == 0, direct.output
        results = [[r["stats"] for r in json.loads(x.stdout)["results"]] for x in (direct, stored)]
        assert results[0] == results[1]
        assert "imported in memory for this run" in direct.stderr
    (d / "one.g").write_text("kernel-1.traceg\n")  # a listing of one kernel runs it
    assert CliRunner().invoke(app, ["run", str(d / "one.g"), "-m", "sps"]).exit_code == 0


def test_run_on_a_listing_of_several_kernels_asks_for_one(tmp_path):
    d = _directory(tmp_path)
    r = CliRunner().invoke(app, ["run", str(d / "kernelslist.g"), "-m", "sps"])
    assert r.exit_code == 2
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {d / 'kernelslist.g'} lists 2 kernels (kernel-1.traceg, "
                                                    f"kernel-2.traceg.xz, ...); run one of them")


def test_run_notes_memory_lines_without_addresses(tmp_path):
    """An imported trace whose LDC lines carry no address: `run` says what the memory model sees."""
    lines = [line(0x00, 0xF, "S2R", ["R0"], []), line(0x10, 0xF, "LDC", ["R1"], ["R0"]),
             line(0x20, 0xF, "LDG.E", ["R2"], ["R4"], (4, 1, "0x7f5c1b000000", 4)), line(0x30, 0xF, "EXIT", [], [])]
    out = tmp_path / "k.h5"
    accelsim.convert(ah.write(tmp_path / "k.traceg", ah.trace_text({(0, 0, 0): [lines]}, block=(4, 1, 1))), out)
    r = CliRunner().invoke(app, ["run", str(out), "-m", "sps"])
    assert r.exit_code == 0, r.output
    assert "note: k.h5: 1 memory warp instructions of this Accel-Sim trace carry no address" in r.output
    r = CliRunner().invoke(app, ["run", str(out), "-m", "sps", "--set", "perfect_memory=true"])
    assert r.exit_code == 0 and "carry no address" not in r.output, r.output


def test_kernelslist_refuses_raw_tracer_files(tmp_path):
    (tmp_path / "kernelslist.g").write_text("kernel-1.trace\n")
    with pytest.raises(TraceError, match=r"kernelslist.g:1: 'kernel-1.trace' is a raw tracer file"):
        accelsim.kernel_files(tmp_path / "kernelslist.g")


# ---------------------------------------------------------------------------------------------
# End to end: an imported trace simulates
# ---------------------------------------------------------------------------------------------


def test_imported_trace_simulates_under_sps(tmp_path):
    from simt_fast.sim import simulate
    from simt_fast.sim.config import SimConfig

    trips = [i % 3 + 1 for i in range(40)]
    t = load_text(tmp_path, ah.trace_text({(0, 0, 0): [loop_warp(trips[:32]), loop_warp(trips[32:])]},
                                          block=(40, 1, 1)))
    stats = simulate(t, SimConfig(mechanism="sps"))
    assert stats.thread_insts == t.total_thread_insts()
    # two warps; each issues S2R+BAR, three loop iterations of 3 instructions, EXIT
    assert stats.warp_insts == 2 * (2 + 3 * 3 + 1)
