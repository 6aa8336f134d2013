"""Device memory as CUDA has it (issue 20): aliasing arrays are one allocation, pointer arithmetic
between views works, symbols are set and read back, [reg+imm] wraps at the register's width, a
kernel name that disagrees with a loaded kernel is refused, and faults name the nearest buffer."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from simt_fast.emu import EmuError, launch, load_kernel

CORPUS = Path(__file__).resolve().parents[1] / "data" / "ptx" / "corpus"
HEAD = ".version 7.0\n.target sm_75\n.address_size 64\n"


@pytest.mark.parametrize("level", ["O3", "O0"])
def test_in_place_scan_with_the_same_array_twice(level):
    vals = np.random.default_rng(1).integers(-50, 50, 200).astype(np.int32)
    a = vals.copy()
    run = launch(CORPUS / f"inplace.{level}.ptx", "scan_inplace", 1, 256, [a, a, np.int32(len(a))])
    assert np.array_equal(a, np.cumsum(vals))
    assert run.device_ptrs[0] == run.device_ptrs[1]  # one allocation, one pointer


def test_two_views_of_one_base_are_one_allocation_with_pointer_arithmetic():
    n = 100
    base = np.arange(2 * n, dtype=np.float32)
    first, second = base[:n], base[n:]
    run = launch(CORPUS / "inplace.O3.ptx", "add_halves", 4, 32, [first, second, np.int32(n)])
    # first[i] = first[i + n] (read past the first view, into the second) + 2 * second[i]
    assert np.array_equal(base[:n], 3 * np.arange(n, 2 * n, dtype=np.float32))
    assert np.array_equal(base[n:], np.arange(n, 2 * n, dtype=np.float32))
    assert run.device_ptrs[1] - run.device_ptrs[0] == n * 4 and run.device_ptrs[0] % 256 == 0


def test_overlapping_views_share_an_allocation_at_their_offsets():
    base = np.zeros(64, np.uint32)
    run = launch(HEAD + """
.visible .entry two(.param .u64 a, .param .u64 b)
{
 .reg .b32 %r<3>;
 .reg .b64 %rd<6>;
 ld.param.u64 %rd1, [a];
 ld.param.u64 %rd2, [b];
 mov.u32 %r1, %tid.x;
 mul.wide.u32 %rd3, %r1, 4;
 add.s64 %rd4, %rd1, %rd3;
 st.global.u32 [%rd4], 1;
 add.s64 %rd5, %rd2, %rd3;
 atom.global.add.u32 %r2, [%rd5], 10;
 ret;
}""", "two", 1, 16, [base[0:16], base[8:24]])
    assert run.device_ptrs[1] - run.device_ptrs[0] == 32
    # a[0:16] = 1 (stores first, warp in lock step), then b = base[8:24] += 10
    assert np.array_equal(base[:24], np.r_[np.ones(8), np.full(8, 11), np.full(8, 10)].astype(np.uint32))
    assert not base[24:].any()


def test_separate_arrays_stay_separate_allocations():
    a, b = np.zeros(10, np.uint32), np.zeros(10, np.uint32)
    run = launch(HEAD + """
.visible .entry k(.param .u64 a, .param .u64 b)
{
 ret;
}""", "k", 1, 1, [a, b])
    pa, pb = run.device_ptrs[0], run.device_ptrs[1]
    assert pa % 256 == 0 and pb % 256 == 0 and pb >= pa + a.nbytes + 256  # a gap: an overrun faults


# issue 20's reproducer: nvcc -O3 folds temp[m-tx+1][tx+1] into a 32-bit shared base below the array
WRAP = HEAD + """
.visible .entry wrap(.param .u64 out)
{
 .shared .align 4 .b8 buf[16];
 .reg .b32 %r<6>;
 .reg .b64 %rd<3>;
 mov.u32 %r1, buf;
 mov.u32 %r2, 42;
 st.shared.u32 [%r1+4], %r2;
 sub.s32 %r3, %r1, 64;
 ld.shared.u32 %r4, [%r3+68];
 ld.param.u64 %rd1, [out];
 st.global.u32 [%rd1], %r4;
 ret;
}"""


def test_reg_plus_imm_wraps_at_the_register_width():
    out = np.zeros(1, np.uint32)
    tr = launch(WRAP, "wrap", 1, 1, [out]).trace
    assert out[0] == 42
    assert tr.mem_addr.tolist()[:2] == [4, 4]  # the store and the wrapped load hit shared offset 4


def test_symbols_are_written_before_and_read_back_after():
    coef = np.array([1, 2, 3, 4], np.float32)
    table = np.arange(8, dtype=np.float32) + 10
    counter = np.array([5], np.int32)
    out = np.zeros(32, np.float32)
    # one warp: every thread reads `table` before the first ones increment it (lock step)
    launch(CORPUS / "symbols.O3.ptx", "scale", 1, 32, [out, np.int32(30)],
           symbols={"coef": coef, "table": table, "counter": counter})
    i = np.arange(30)
    assert np.array_equal(out[:30], np.array([1, 2, 3, 4], np.float32)[i & 3] * (np.arange(8) + 10)[i & 7])
    assert counter[0] == 35  # read back in place: 5 + one atomicAdd per thread
    assert np.array_equal(table, np.arange(8, dtype=np.float32) + 11)
    assert np.array_equal(coef, [1, 2, 3, 4])


@pytest.mark.parametrize("symbols, pattern", [
    ({"coeff": np.zeros(4, np.float32)}, r"'coeff' is not a __constant__ or __device__ variable of the module \(it has: coef, counter, table\)"),
    ({"coef": np.zeros(3, np.float32)}, r"'coef' is 16 bytes \(\.const \.b8\[16\]\) but the array has 12 bytes"),
    ({"counter": 5}, r"'counter' needs a numpy array of 4 bytes, got a int"),
])
def test_wrong_symbols_are_one_sentence(symbols, pattern):
    with pytest.raises(EmuError, match=pattern):
        launch(CORPUS / "symbols.O3.ptx", "scale", 1, 32, [np.zeros(32, np.float32), np.int32(32)], symbols=symbols)


def test_a_shared_variable_cannot_be_set_from_the_host():
    with pytest.raises(EmuError, match=r"'buf' is a \.shared variable; only __constant__"):
        launch(WRAP, "wrap", 1, 1, [np.zeros(1, np.uint32)], symbols={"buf": np.zeros(4, np.uint32)})


def test_kernel_name_must_match_a_loaded_kernel():
    kern = load_kernel(CORPUS / "inplace.O3.ptx", "add_halves")
    args = [np.zeros(4, np.float32), np.zeros(4, np.float32), np.int32(0)]
    launch(kern, "add_halves", 1, 1, args)
    launch(kern, None, 1, 1, args)
    with pytest.raises(EmuError, match=r"loaded kernel 'add_halves' but kernel='scan_inplace' names another"):
        launch(kern, "scan_inplace", 1, 1, args)


def test_out_of_bounds_fault_names_the_nearest_buffer():
    a, out = np.zeros(8, np.uint32), np.zeros(20, np.uint32)
    with pytest.raises(EmuError) as e:
        launch(HEAD + """
.visible .entry oob(.param .u64 a, .param .u64 out)
{
 .reg .b32 %r<3>;
 .reg .b64 %rd<4>;
 ld.param.u64 %rd1, [out];
 mov.u32 %r1, %tid.x;
 mul.wide.u32 %rd2, %r1, 4;
 add.s64 %rd3, %rd1, %rd2;
 st.global.u32 [%rd3], %r1;
 ret;
}""", "oob", 1, 32, [a, out])
    msg = str(e.value)
    assert "thread (20, 0, 0)" in msg and "the nearest is argument 1 (out) (80 bytes at 0x" in msg
    assert "0 byte(s) past its end" in msg


def test_shared_out_of_bounds_names_the_space():
    with pytest.raises(EmuError, match=r"outside the 16-byte shared memory \(offset 0x40\)"):
        launch(HEAD + """
.visible .entry s()
{
 .shared .align 4 .b8 buf[16];
 .reg .b32 %r<3>;
 mov.u32 %r1, buf;
 st.shared.u32 [%r1+64], %r1;
 ret;
}""", "s", 1, 1, [])
