"""Launch API, faults, traces, inlining and warp-level instructions of the emulator."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from simt_fast.emu import EmuError, launch, load_kernel
from simt_fast.ir import PTXError, parse_ptx
from simt_fast.ir.inline import inline_calls
from simt_fast.trace import Trace, validate
from simt_fast.trace.model import PARAM_TAG

from hypothesis_budget import examples

HEAD = ".version 7.0\n.target sm_75\n.address_size 64\n"

# out[tid] = tid odd ? 2*tid : tid+100, through a divergent branch (hand-worked paths below)
DIVERGE = HEAD + """
.visible .entry diverge(.param .u64 out)
{
 .reg .pred %p<2>;
 .reg .b32 %r<6>;
 .reg .b64 %rd<4>;
 ld.param.u64 %rd1, [out];
 mov.u32 %r1, %tid.x;
 and.b32 %r2, %r1, 1;
 setp.eq.u32 %p1, %r2, 0;
 @%p1 bra EVEN;
 shl.b32 %r3, %r1, 1;
 bra.uni JOIN;
EVEN:
 add.u32 %r3, %r1, 100;
JOIN:
 mul.wide.u32 %rd2, %r1, 4;
 add.s64 %rd3, %rd1, %rd2;
 st.global.u32 [%rd3], %r3;
 ret;
}
"""


def test_divergent_branch_outputs_and_hand_worked_paths():
    out = np.zeros(64, np.uint32)
    run = launch(DIVERGE, "diverge", 2, 32, [out])
    tid = np.arange(32)
    assert np.array_equal(out[:32], np.where(tid % 2, 2 * tid, tid + 100)) and not out[32:].any()
    tr = run.trace
    validate(tr)
    # blocks: 0 entry, 1 odd side, 2 EVEN, 3 JOIN, 4 exit
    assert list(tr.thread_path(0)) == [0, 2, 3, 4]
    assert list(tr.thread_path(1)) == [0, 1, 3, 4]
    assert run.thread_insts == tr.total_thread_insts() == 64 * 5 + 32 * 2 + 32 * 1 + 64 * 4
    assert tr.kernel == "diverge" and tr.grid == (2, 1, 1) and tr.block == (32, 1, 1)


def test_streamed_trace_equals_in_memory_trace_across_batch_sizes(tmp_path):
    out = np.zeros(96, np.uint32)
    mem = launch(DIVERGE, "diverge", 3, 32, [out]).trace
    path = tmp_path / "t.h5"
    run = launch(DIVERGE, "diverge", 3, 32, [out], trace_path=path, batch_threads=32)
    disk = Trace.load(path)
    assert run.trace_path == path and np.array_equal(disk.path, mem.path) and np.array_equal(disk.path_ptr, mem.path_ptr)
    assert np.array_equal(disk.mem_addr, mem.mem_addr) and np.array_equal(disk.mem_ptr, mem.mem_ptr)
    # per thread: ld.param of `out` (offset 0 of the parameter buffer) and the global store at out + 4*tid.x
    assert np.array_equal(np.diff(mem.mem_ptr), np.full(96, 2))
    assert np.all(mem.mem_addr[0::2] == PARAM_TAG)
    assert np.array_equal(mem.mem_addr[1::2], run.device_ptrs[0] + 4 * (np.arange(96, dtype=np.uint64) % 32))


OOB = HEAD + """
.visible .entry oob(.param .u64 out, .param .u32 n)
{
 .reg .b32 %r<3>;
 .reg .b64 %rd<4>;
 ld.param.u64 %rd1, [out];
 mov.u32 %r1, %tid.x;
 mul.wide.u32 %rd2, %r1, 4;
 add.s64 %rd3, %rd1, %rd2;
 st.global.u32 [%rd3], %r1;
 ret;
}
"""


def test_out_of_bounds_store_names_thread_line_and_address_and_writes_no_trace(tmp_path):
    out = np.zeros(20, np.uint32)
    path = tmp_path / "never.h5"
    with pytest.raises(EmuError) as e:
        launch(OOB, "oob", 2, 32, [out, np.uint32(20)], trace_path=path)
    msg = str(e.value)
    line = next(k for k, text in enumerate(OOB.splitlines(), 1) if "st.global" in text)
    assert f":{line}:" in msg and "thread (20, 0, 0) of CTA (0, 0, 0)" in msg and "address 0x" in msg and "st.global.u32" in msg
    assert not path.exists() and not list(tmp_path.iterdir())


BARRIER = HEAD + """
.visible .entry bar(.param .u64 out)
{
 .reg .pred %p<2>;
 .reg .b32 %r<3>;
 mov.u32 %r1, %tid.x;
 setp.gt.u32 %p1, %r1, 40;
 @%p1 bra DONE;
 bar.sync 0;
DONE:
 ret;
}
"""


def test_barrier_that_exited_threads_never_reach_is_reported():
    with pytest.raises(EmuError, match=r"barrier deadlock.*exited without reaching it"):
        launch(BARRIER, "bar", 1, 64, [np.zeros(1, np.uint32)])
    launch(BARRIER, "bar", 1, 32, [np.zeros(1, np.uint32)])  # all threads reach it: fine


SPIN = HEAD + """
.visible .entry spin()
{
L: bra.uni L;
}
"""


def test_max_insts_stops_an_endless_loop():
    with pytest.raises(EmuError, match=r"stopped after 10\d\d thread instructions: it reached max_insts=1000;"):
        launch(SPIN, "spin", 1, 32, [], max_insts=1000)


def test_argument_errors_are_one_sentence_before_running():
    with pytest.raises(EmuError, match=r"takes 2 parameter\(s\).*1 argument"):
        launch(OOB, "oob", 1, 32, [np.zeros(32, np.uint32)])
    with pytest.raises(EmuError, match=r"argument 1 \(n, \.u32\) needs a numpy scalar of dtype uint32 or int32, got float32"):
        launch(OOB, "oob", 1, 32, [np.zeros(32, np.uint32), np.float32(1)])
    with pytest.raises(EmuError, match=r"argument 1 .*got a int"):
        launch(OOB, "oob", 1, 32, [np.zeros(32, np.uint32), 5])
    with pytest.raises(EmuError, match=r"by-value parameter but a numpy array"):
        launch(OOB, "oob", 1, 32, [np.zeros(32, np.uint32), np.zeros(2, np.uint32)])
    with pytest.raises(EmuError, match=r"at most 1024"):
        launch(OOB, "oob", 1, (32, 64), [np.zeros(32, np.uint32), np.uint32(1)])


def test_unsupported_opcode_is_rejected_at_load_naming_opcode_and_line():
    src = HEAD + ".visible .entry t(.param .u64 o)\n{\n .reg .b32 %r<3>;\n txq.width.b32 %r1, [o];\n ret;\n}\n"
    with pytest.raises(PTXError, match=r":7:.*'txq.width.b32' is not supported"):
        load_kernel(src)
    src = HEAD + ".visible .entry t(.param .u64 o)\n{\n .reg .b32 %r<3>;\n tex.1d.v4.s32.s32 {%r1, %r1, %r1, %r1}, [o, {%r2}];\n ret;\n}\n"
    with pytest.raises(PTXError, match=r":7:.*'o' is not a \.texref variable"):
        load_kernel(src)


CALLS = HEAD + """
.func (.param .b32 ret) twice(.param .b32 x)
{
 .reg .b32 %r<3>;
 .reg .pred %p<2>;
 ld.param.b32 %r1, [x];
 setp.gt.s32 %p1, %r1, 10;
 @%p1 bra BIG;
 shl.b32 %r2, %r1, 1;
 st.param.b32 [ret], %r2;
 ret;
BIG:
 st.param.b32 [ret], %r1;
 ret;
}
.visible .entry k(.param .u64 out)
{
 .reg .b32 %r<4>;
 .reg .b64 %rd<4>;
 ld.param.u64 %rd1, [out];
 mov.u32 %r1, %tid.x;
 {
 .param .b32 param0;
 st.param.b32 [param0], %r1;
 .param .b32 retval0;
 call.uni (retval0), twice, (param0);
 ld.param.b32 %r2, [retval0];
 }
 mul.wide.u32 %rd2, %r1, 4;
 add.s64 %rd3, %rd1, %rd2;
 st.global.u32 [%rd3], %r2;
 ret;
}
"""


def test_calls_are_inlined_and_returns_reconverge_after_the_call():
    out = np.zeros(32, np.uint32)
    run = launch(CALLS, "k", 1, 32, [out])
    t = np.arange(32)
    assert np.array_equal(out, np.where(t > 10, t, 2 * t))
    tr = run.trace
    validate(tr)
    assert "call" not in " ".join(tr.text)
    # both returns of the callee branch to the block after the call site
    module = parse_ptx(CALLS)
    inlined = inline_calls(module, module.find_kernel("k"))
    assert sum(1 for i in inlined.instructions if "return from twice" in i.text) == 2


def test_recursion_is_rejected_with_the_call_chain():
    src = CALLS.replace("shl.b32 %r2, %r1, 1;", "{\n .param .b32 p0;\n st.param.b32 [p0], %r1;\n .param .b32 r0;\n call.uni (r0), twice, (p0);\n ld.param.b32 %r2, [r0];\n }")
    with pytest.raises(PTXError, match=r"recursive call chain k -> twice -> twice"):
        load_kernel(src, "k")


WARP = HEAD + """
.visible .entry warp(.param .u64 vin, .param .u64 ballot, .param .u64 sh, .param .u64 am)
{
 .reg .pred %p<4>;
 .reg .b32 %r<12>;
 .reg .b64 %rd<12>;
 ld.param.u64 %rd1, [vin];
 mov.u32 %r1, %tid.x;
 mul.wide.u32 %rd2, %r1, 4;
 add.s64 %rd3, %rd1, %rd2;
 ld.global.u32 %r2, [%rd3];
 setp.ne.u32 %p1, %r2, 0;
 vote.sync.ballot.b32 %r3, %p1, -1;
 ld.param.u64 %rd4, [ballot];
 add.s64 %rd5, %rd4, %rd2;
 st.global.u32 [%rd5], %r3;
 shfl.sync.bfly.b32 %r4|%p2, %r2, 5, 31, -1;
 ld.param.u64 %rd6, [sh];
 add.s64 %rd7, %rd6, %rd2;
 st.global.u32 [%rd7], %r4;
 and.b32 %r5, %r1, 3;
 setp.eq.u32 %p3, %r5, 0;
 @%p3 bra SKIP;
 activemask.b32 %r6;
 ld.param.u64 %rd8, [am];
 add.s64 %rd9, %rd8, %rd2;
 st.global.u32 [%rd9], %r6;
SKIP:
 ret;
}
"""


@examples(20)
@given(bits=st.lists(st.integers(0, 3), min_size=64, max_size=64))
def test_vote_shfl_activemask_match_numpy(bits):
    vin = np.array(bits, np.uint32)
    ballot, sh, am = (np.zeros(64, np.uint32) for _ in range(3))
    launch(WARP, "warp", 1, 64, [vin, ballot, sh, am])
    for w in range(2):
        lanes = slice(32 * w, 32 * w + 32)
        want = sum(1 << k for k in range(32) if vin[lanes][k] != 0)
        assert np.all(ballot[lanes] == want)
        assert np.array_equal(sh[lanes], vin[lanes][np.arange(32) ^ 5])
        # lanes with tid % 4 != 0 executed activemask together
        mask = sum(1 << k for k in range(32) if k % 4)
        assert np.all(am[lanes][np.arange(32) % 4 != 0] == mask) and np.all(am[lanes][::4] == 0)


def test_shfl_membermask_naming_a_diverged_lane_is_reported():
    src = WARP.replace("activemask.b32 %r6;", "shfl.sync.idx.b32 %r6|%p2, %r2, 0, 31, -1;")
    with pytest.raises(EmuError, match=r"membermask 0xffffffff, but thread \(0, 0, 0\) named in it is not executing it"):
        launch(src, "warp", 1, 32, [np.zeros(32, np.uint32)] * 4)


SHARED = HEAD + """
.visible .entry rev(.param .u64 io)
{
 .reg .b32 %r<8>;
 .reg .b64 %rd<4>;
 .shared .align 4 .b8 buf[512];
 ld.param.u64 %rd1, [io];
 mov.u32 %r1, %tid.x;
 mul.wide.u32 %rd2, %r1, 4;
 add.s64 %rd3, %rd1, %rd2;
 ld.global.u32 %r2, [%rd3];
 mov.u32 %r3, buf;
 shl.b32 %r4, %r1, 2;
 add.u32 %r5, %r3, %r4;
 st.shared.u32 [%r5], %r2;
 bar.sync 0;
 mov.u32 %r6, 508;
 sub.u32 %r6, %r6, %r4;
 add.u32 %r6, %r6, %r3;
 ld.shared.u32 %r7, [%r6];
 st.global.u32 [%rd3], %r7;
 ret;
}
"""


def test_shared_memory_and_barrier_across_warps_reverse_a_block():
    io = np.arange(128, dtype=np.uint32)
    run = launch(SHARED, "rev", 1, 128, [io])  # 4 warps exchange values through shared memory
    assert np.array_equal(io, np.arange(127, -1, -1))
    assert run.trace.has_barrier.any()


def test_disable_jit_gives_the_same_trace():
    """The numba kernels run as plain Python under NUMBA_DISABLE_JIT=1 (coverage mode)."""
    code = (
        "import numpy as np, sys; sys.path.insert(0, %r)\n"
        "from test_emu_launch import DIVERGE\n"
        "from simt_fast.emu import launch\n"
        "out = np.zeros(64, np.uint32); r = launch(DIVERGE, 'diverge', 2, 32, [out])\n"
        "print(r.thread_insts, int(r.trace.path.sum()), int(out.sum()))\n"
    ) % str(Path(__file__).parent)
    env = dict(os.environ, NUMBA_DISABLE_JIT="1")
    res = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr[-2000:]
    out = np.zeros(64, np.uint32)
    r = launch(DIVERGE, "diverge", 2, 32, [out])
    assert res.stdout.split() == [str(r.thread_insts), str(int(r.trace.path.sum())), str(int(out.sum()))]


DATA = Path(__file__).parent / "data" / "emu"


@pytest.mark.parametrize("flavour", ["O3", "O0", "G"])
def test_nvcc_call_sequences_at_every_optimisation_level(flavour):
    """tests/data/emu/calls.cu compiled with -O3, -O0 (stack frames, call sequences) and -G."""
    out = np.zeros(64, np.int32)
    f = np.zeros(64, np.float32)
    run = launch(DATA / f"calls.{flavour}.ptx", "k", 1, 64, [out, f])
    t = np.arange(64)
    s = np.where(t > 3, t * t, t + 1)
    shfl = np.where(t % 32 == 31, t, t + 1)
    assert np.array_equal(out, s[63 - t] + shfl)
    assert np.array_equal(f, (t <= 3).astype(np.float32))
    validate(run.trace)


WARP_MODES = HEAD + """
.visible .entry modes(.param .u64 vin, .param .u64 res, .param .u32 delta, .param .u32 cval)
{
 .reg .pred %p<8>;
 .reg .b32 %r<16>;
 .reg .b64 %rd<8>;
 ld.param.u64 %rd1, [vin];
 ld.param.u64 %rd2, [res];
 ld.param.u32 %r9, [delta];
 ld.param.u32 %r10, [cval];
 mov.u32 %r1, %tid.x;
 mul.wide.u32 %rd3, %r1, 4;
 add.s64 %rd4, %rd1, %rd3;
 ld.global.u32 %r2, [%rd4];
 mul.wide.u32 %rd5, %r1, 32;
 add.s64 %rd6, %rd2, %rd5;
 shfl.sync.up.b32 %r3|%p1, %r2, %r9, %r10, -1;
 shfl.sync.down.b32 %r4|%p2, %r2, %r9, %r10, -1;
 shfl.sync.idx.b32 %r5|%p3, %r2, %r9, %r10, -1;
 setp.ne.u32 %p4, %r2, 0;
 vote.sync.all.pred %p5, %p4, -1;
 vote.sync.any.pred %p6, %p4, -1;
 vote.sync.uni.pred %p7, %p4, -1;
 selp.u32 %r6, 1, 0, %p5;
 selp.u32 %r7, 1, 0, %p6;
 selp.u32 %r8, 1, 0, %p7;
 selp.u32 %r11, 1, 0, %p1;
 st.global.v4.u32 [%rd6], {%r3, %r4, %r5, %r11};
 st.global.v4.u32 [%rd6+16], {%r6, %r7, %r8, %r2};
 ret;
}
"""


def shfl_ref(vals, mode, b, c):
    """PTX shfl.sync with clamp value c[4:0] and segment mask c[12:8] (ISA pseudo-code)."""
    out, ok = [], []
    cval, segmask = c & 0x1F, (c >> 8) & 0x1F
    for lane in range(32):
        max_lane = (lane & segmask) | (cval & ~segmask)
        min_lane = lane & segmask
        if mode == "up":
            j, p = lane - b, lane - b >= max_lane
        elif mode == "down":
            j, p = lane + b, lane + b <= max_lane
        else:
            j = min_lane | (b & ~segmask)
            p = j <= max_lane
        out.append(vals[j] if p else vals[lane])
        ok.append(int(p))
    return out, ok


@examples(15)
@given(vals=st.lists(st.integers(0, 3), min_size=32, max_size=32), delta=st.integers(0, 31),
       c=st.sampled_from([0x1F, 0x0, 0x1C1F, 0x181F, 0x1F00, 0x7]))
def test_shfl_modes_vote_modes_and_vector_stores(vals, delta, c):
    vin = np.array(vals, np.uint32)
    res = np.zeros((32, 8), np.uint32)
    launch(WARP_MODES, "modes", 1, 32, [vin, res, np.uint32(delta), np.uint32(c)])
    up, up_ok = shfl_ref(vals, "up", delta, c)
    down, _ = shfl_ref(vals, "down", delta, c)
    idx, _ = shfl_ref(vals, "idx", delta, c)
    assert list(res[:, 0]) == up and list(res[:, 3]) == up_ok
    assert list(res[:, 1]) == down and list(res[:, 2]) == idx
    nz = [v != 0 for v in vals]
    assert np.all(res[:, 4] == int(all(nz))) and np.all(res[:, 5] == int(any(nz)))
    assert np.all(res[:, 6] == int(all(nz) or not any(nz))) and list(res[:, 7]) == vals


SWITCH = HEAD + """
.visible .entry sw(.param .u64 io)
{
 .reg .pred %p<2>;
 .reg .b32 %r<6>;
 .reg .b64 %rd<4>;
 ld.param.u64 %rd1, [io];
 mov.u32 %r1, %tid.x;
 mul.wide.u32 %rd2, %r1, 8;
 add.s64 %rd3, %rd1, %rd2;
 ld.global.v2.u32 {%r2, %r3}, [%rd3];
 setp.gt.u32 %p1, %r2, 2;
 @%p1 bra DEFAULT;
$L_table:
 .branchtargets A, B, C;
 brx.idx %r2, $L_table;
A:
 add.u32 %r4, %r3, 10;
 bra.uni END;
B:
 mul.lo.u32 %r4, %r3, 3;
 bra.uni END;
C:
 sub.u32 %r4, %r3, 1;
 bra.uni END;
DEFAULT:
 mov.u32 %r4, 0;
END:
 st.global.v2.u32 [%rd3], {%r4, %r2};
 ret;
}
"""


def test_brx_idx_jump_table_and_vector_loads():
    sel = np.array([0, 1, 2, 3, 7, 2, 1, 0] * 4, np.uint32)
    x = np.arange(32, dtype=np.uint32) + 5
    io = np.stack([sel, x], axis=1).copy()
    run = launch(SWITCH, "sw", 1, 32, [io])
    want = np.select([sel == 0, sel == 1, sel == 2], [x + 10, x * 3, x - 1], 0)
    assert np.array_equal(io[:, 0], want) and np.array_equal(io[:, 1], sel)
    validate(run.trace)
    labels = run.trace.label
    for t in range(8):
        names = [labels[b] for b in run.trace.thread_path(t)]
        assert names[-2] == "END" and names[-1] == "<exit>"
        if sel[t] <= 2:
            assert names[2] == "ABC"[sel[t]]  # entry -> brx.idx block -> the jump-table target
        else:
            assert names[1] == "DEFAULT"


def test_empty_kernel_paths_go_from_entry_to_exit():
    run = launch(HEAD + ".visible .entry nothing()\n{\n}\n", None, 2, 8, [])
    tr = run.trace
    assert run.thread_insts == 0 and all(list(tr.thread_path(t)) == [0, tr.exit] for t in range(16))
    validate(tr)


BAR_RED = HEAD + """
.visible .entry red(.param .u64 flags, .param .u64 res)
{
 .reg .pred %p<5>;
 .reg .b32 %r<8>;
 .reg .b64 %rd<6>;
 ld.param.u64 %rd1, [flags];
 ld.param.u64 %rd2, [res];
 mov.u32 %r1, %tid.x;
 mul.wide.u32 %rd3, %r1, 4;
 add.s64 %rd4, %rd1, %rd3;
 ld.global.u32 %r2, [%rd4];
 setp.ne.u32 %p1, %r2, 0;
 bar.red.popc.u32 %r3, 0, %p1;
 bar.red.and.pred %p2, 0, %p1;
 bar.red.or.pred %p3, 0, %p1;
 selp.u32 %r4, 1, 0, %p2;
 selp.u32 %r5, 1, 0, %p3;
 mul.wide.u32 %rd3, %r1, 12;
 add.s64 %rd5, %rd2, %rd3;
 st.global.u32 [%rd5], %r3;
 st.global.u32 [%rd5+4], %r4;
 st.global.u32 [%rd5+8], %r5;
 ret;
}
"""


@examples(10)
@given(flags=st.lists(st.integers(0, 1), min_size=96, max_size=96))
def test_bar_red_popc_and_or_over_the_cta(flags):
    from simt_fast.emu.reference import run_reference

    f = np.array(flags, np.uint32)
    res = np.zeros((96, 3), np.uint32)
    run = launch(BAR_RED, "red", 1, 96, [f, res])
    assert np.all(res[:, 0] == f.sum()) and np.all(res[:, 1] == int(f.all())) and np.all(res[:, 2] == int(f.any()))
    res2 = np.zeros((96, 3), np.uint32)
    paths, insts = run_reference(load_kernel(BAR_RED), 1, 96, [f.copy(), res2])
    assert np.array_equal(res, res2) and insts == run.thread_insts


def test_long_paths_flush_batches_early_with_the_same_trace():
    out = np.zeros(32, np.uint32)
    whole = launch(DIVERGE, "diverge", 6, 32, [out]).trace
    parts = launch(DIVERGE, "diverge", 6, 32, [out], ev_soft_limit=40).trace  # flush after every CTA
    assert np.array_equal(whole.path, parts.path) and np.array_equal(whole.path_ptr, parts.path_ptr)
