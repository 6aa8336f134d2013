"""/mem of emulated traces (DESIGN §3): one entry per memory instruction on each thread's path.

A hand-written kernel touches every address space with known patterns (a stride, predicated-off
lanes, a branch around a store, shared, local, const, ld.param, atomics, a vector load, generic
addressing, a prefetch); each thread's entries are worked out by hand below and must match exactly.
"""

from __future__ import annotations

import numpy as np
import pytest

from simt_fast.emu import launch, load_kernel
from simt_fast.emu.reference import run_reference
from simt_fast.ir.model import OpClass
from simt_fast.trace import Trace, validate
from simt_fast.trace.model import MEM_ATOMIC, MEM_FORMAT, MEM_LOAD, MEM_NONE, MEM_STORE, NO_ACCESS, PARAM_TAG

MEMK = """.version 7.0
.target sm_75
.address_size 64

.const .align 4 .b32 ctab[8] = {1, 2, 3, 4, 5, 6, 7, 8};

.visible .entry memk(.param .u64 gin, .param .u64 gout, .param .u32 stride)
{
 .reg .pred %p<4>;
 .reg .b32 %r<40>;
 .reg .b64 %rd<40>;
 .shared .align 16 .b32 sh[64];
 .local .align 16 .b32 loc[4];

 ld.param.u64 %rd1, [gin];
 ld.param.u64 %rd2, [gout];
 ld.param.u32 %r1, [stride];
 mov.u32 %r2, %tid.x;
 cvta.to.global.u64 %rd3, %rd1;
 cvta.to.global.u64 %rd4, %rd2;
 mul.lo.u32 %r3, %r2, %r1;
 mul.wide.u32 %rd5, %r3, 4;
 add.s64 %rd6, %rd3, %rd5;
 ld.global.u32 %r4, [%rd6];
 setp.lt.u32 %p1, %r2, 5;
 @%p1 ld.global.u32 %r5, [%rd6+4];
 prefetch.global.L2 [%rd6];
 mul.wide.u32 %rd7, %r2, 16;
 add.s64 %rd8, %rd3, %rd7;
 ld.global.v4.u32 {%r6, %r7, %r8, %r9}, [%rd8];
 mov.u32 %r10, sh;
 shl.b32 %r11, %r2, 2;
 add.s32 %r12, %r10, %r11;
 st.shared.u32 [%r12], %r2;
 bar.sync 0;
 ld.shared.u32 %r13, [sh+8];
 atom.shared.add.u32 %r14, [sh+4], 1;
 st.local.u32 [loc+4], %r2;
 ld.local.u32 %r15, [loc+4];
 ld.const.u32 %r16, [ctab+12];
 and.b32 %r17, %r2, 7;
 mov.u64 %rd9, ctab;
 mul.wide.u32 %rd10, %r17, 4;
 add.s64 %rd11, %rd9, %rd10;
 ld.const.u32 %r18, [%rd11];
 atom.global.add.u32 %r19, [%rd4], 1;
 red.global.add.u32 [%rd4+4], %r2;
 mov.u64 %rd12, sh;
 cvta.shared.u64 %rd13, %rd12;
 ld.u32 %r20, [%rd13+12];
 ld.u32 %r21, [%rd6];
 mul.wide.u32 %rd14, %r2, 4;
 add.s64 %rd15, %rd4, %rd14;
 setp.ge.u32 %p2, %r2, 16;
 @%p2 bra SKIP;
 st.global.u32 [%rd15+64], %r13;
SKIP:
 @%p1 st.global.u32 [%rd15+128], %r5;
 ret;
}
"""

# (instruction text start, op_class, mem_bytes, mem_kind) of every memory instruction, in order
MEM_INSTRS = [
    ("ld.param.u64 %rd1", OpClass.MEM_CONST, 8, MEM_LOAD),
    ("ld.param.u64 %rd2", OpClass.MEM_CONST, 8, MEM_LOAD),
    ("ld.param.u32", OpClass.MEM_CONST, 4, MEM_LOAD),
    ("ld.global.u32 %r4", OpClass.MEM_GLOBAL, 4, MEM_LOAD),
    ("@%p1 ld.global.u32", OpClass.MEM_GLOBAL, 4, MEM_LOAD),
    ("prefetch", OpClass.MEM_GLOBAL, 0, MEM_NONE),
    ("ld.global.v4.u32", OpClass.MEM_GLOBAL, 16, MEM_LOAD),
    ("st.shared.u32", OpClass.MEM_SHARED, 4, MEM_STORE),
    ("ld.shared.u32", OpClass.MEM_SHARED, 4, MEM_LOAD),
    ("atom.shared.add.u32", OpClass.MEM_SHARED, 4, MEM_ATOMIC),
    ("st.local.u32", OpClass.MEM_LOCAL, 4, MEM_STORE),
    ("ld.local.u32", OpClass.MEM_LOCAL, 4, MEM_LOAD),
    ("ld.const.u32 %r16", OpClass.MEM_CONST, 4, MEM_LOAD),
    ("ld.const.u32 %r18", OpClass.MEM_CONST, 4, MEM_LOAD),
    ("atom.global.add.u32", OpClass.MEM_GLOBAL, 4, MEM_ATOMIC),
    ("red.global.add.u32", OpClass.MEM_GLOBAL, 4, MEM_ATOMIC),
    ("ld.u32 %r20", OpClass.MEM_GLOBAL, 4, MEM_LOAD),
    ("ld.u32 %r21", OpClass.MEM_GLOBAL, 4, MEM_LOAD),
    ("st.global.u32 [%rd15+64]", OpClass.MEM_GLOBAL, 4, MEM_STORE),
    ("@%p1 st.global.u32", OpClass.MEM_GLOBAL, 4, MEM_STORE),
]

SHARED_WINDOW = 1 << 56  # the generic address of shared offset 0 (docs/emu.md, memory model)


def expected_entries(tid: int, stride: int, gin: int, gout: int) -> list:
    """Thread ``tid``'s /mem entries, worked out from the kernel text above."""
    idx = gin + 4 * stride * tid
    e = [
        int(PARAM_TAG) | 0, int(PARAM_TAG) | 8, int(PARAM_TAG) | 16,  # ld.param: gin, gout, stride offsets
        idx,                                                          # the strided load
        idx + 4 if tid < 5 else int(NO_ACCESS),                       # guard false from lane 5 on
        int(NO_ACCESS),                                               # prefetch: no access
        gin + 16 * tid,                                               # v4 load: its first byte
        4 * tid,                                                      # shared offsets
        8,                                                            # broadcast
        4,                                                            # shared atomic
        4, 4,                                                         # local frame offsets
        12, 4 * (tid & 7),                                            # constant bank offsets
        gout, gout + 4,                                               # global atomic, red
        SHARED_WINDOW + 12,                                           # generic access to shared
        idx,                                                          # generic access to global
    ]
    if tid < 16:  # threads 16.. branch around this store: no entry at all
        e.append(gout + 64 + 4 * tid)
    e.append(gout + 128 + 4 * tid if tid < 5 else int(NO_ACCESS))
    return e


def _args(stride):
    gin = np.arange(1024, dtype=np.uint32)
    gout = np.zeros(256, np.uint32)
    return [gin, gout, np.uint32(stride)]


@pytest.mark.parametrize("stride", [1, 2, 32])
def test_every_space_gives_the_hand_worked_entries(stride):
    args = _args(stride)
    run = launch(MEMK, "memk", 2, 32, args)
    tr = run.trace
    validate(tr)
    assert tr.mem_format == MEM_FORMAT and tr.has_mem
    gin, gout = run.device_ptrs[0], run.device_ptrs[1]
    assert gin % 256 == 0 and gout % 256 == 0 and gout >= gin + args[0].nbytes  # cudaMalloc-like allocations
    for t in range(tr.n_threads):
        got = tr.mem_addr[tr.mem_ptr[t]:tr.mem_ptr[t + 1]].tolist()
        assert got == expected_entries(t % 32, stride, gin, gout), f"thread {t}"
    # the kernel computed what it should (the addresses above are the ones it used)
    assert args[1][0] == 64 and args[1][1] == 2 * sum(range(32))


def test_per_instruction_memory_facts():
    tr = launch(MEMK, "memk", 1, 32, _args(1)).trace
    mem = [i for i, c in enumerate(tr.op_class) if c in (OpClass.MEM_GLOBAL, OpClass.MEM_SHARED, OpClass.MEM_LOCAL,
                                                          OpClass.MEM_CONST)]
    assert len(mem) == len(MEM_INSTRS)
    for i, (text, cls, nbytes, kind) in zip(mem, MEM_INSTRS):
        assert tr.text[i].strip().startswith(text), (tr.text[i], text)
        assert (tr.op_class[i], tr.mem_bytes[i], tr.mem_kind[i]) == (cls, nbytes, kind), tr.text[i]
    others = np.setdiff1d(np.arange(tr.n_instrs), mem)
    assert not tr.mem_bytes[others].any() and not tr.mem_kind[others].any()


def test_streamed_file_equals_the_in_memory_trace(tmp_path):
    mem_run = launch(MEMK, "memk", 3, 32, _args(2))
    file_run = launch(MEMK, "memk", 3, 32, _args(2), trace_path=tmp_path / "m.h5", batch_threads=32)
    loaded = Trace.load(tmp_path / "m.h5")
    assert loaded.mem_format == MEM_FORMAT
    assert np.array_equal(loaded.mem_addr, mem_run.trace.mem_addr)
    assert np.array_equal(loaded.mem_ptr, mem_run.trace.mem_ptr)
    assert loaded.digest() == mem_run.trace.digest() == file_run.trace.digest()


def test_record_mem_off_leaves_mem_out():
    tr = launch(MEMK, "memk", 1, 32, _args(1), record_mem=False).trace
    assert tr.mem_ptr is None and not tr.has_mem
    assert tr.mem_bytes is not None  # the per-instruction facts are static: always there
    validate(tr)


def test_reference_model_gives_the_same_entries():
    kern = load_kernel(MEMK, "memk")
    run = launch(kern, None, 2, 32, _args(32))
    mem = []
    run_reference(kern, 2, 32, _args(32), mem_out=mem)
    tr = run.trace
    assert [tr.mem_addr[tr.mem_ptr[t]:tr.mem_ptr[t + 1]].tolist() for t in range(tr.n_threads)] == mem
