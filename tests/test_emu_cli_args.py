"""`simt-fast trace K.ptx --arg ...`: the argument forms, their documented ranges, errors in CLI terms,
`--seed` and the `npy:` / `--save-outputs` round trips, on the README's example kernels."""

from __future__ import annotations

import re

import numpy as np
import pytest
from typer.testing import CliRunner

from example_kernels import DIVERGENT_PTX as EXAMPLES, collatz_hist, collatz_steps
from simt_fast.cli import app
from simt_fast.commands._kernel_args import ArgError, PTX_DTYPES, parse_arg, parse_args, pointer_params
from simt_fast.ir.ptx_parser import parse_ptx
from simt_fast.trace import Trace

MODULE = parse_ptx(EXAMPLES.read_text(), str(EXAMPLES))
COLLATZ = MODULE.find_kernel("collatz")  # (in*, steps*, hist*, u32 n, u32 bins)
BINSEARCH = MODULE.find_kernel("binsearch")  # (table*, u32 m, queries*, pos*, u32 n)
HEAD = ".version 7.0\n.target sm_75\n.address_size 64\n"
# a pointer used without cvta (its register is the address base), a 64-bit integer that is no address
RAW = parse_ptx(HEAD + """
.visible .entry raw(.param .u64 out, .param .u64 count, .param .u32 v)
{
 .reg .b32 %r<3>;
 .reg .b64 %rd<5>;
 ld.param.u64 %rd1, [out];
 ld.param.u64 %rd4, [count];
 ld.param.u32 %r2, [v];
 mov.u32 %r1, %tid.x;
 mul.wide.u32 %rd2, %r1, 4;
 add.s64 %rd3, %rd1, %rd2;
 st.global.u32 [%rd3], %r2;
 ret;
}
""", "raw.ptx").find_kernel("raw")

runner = CliRunner()


def test_pointers_are_found_by_use():
    assert pointer_params(COLLATZ) == {f"collatz_param_{k}" for k in (0, 1, 2)}
    assert pointer_params(BINSEARCH) == {f"binsearch_param_{k}" for k in (0, 2, 3)}
    assert pointer_params(RAW) == {"out"}  # count is a .u64 the kernel never uses as an address


@pytest.mark.parametrize("ptx, numpy_name", sorted(PTX_DTYPES.items()))
def test_ptx_type_spellings(ptx, numpy_name):
    value = parse_arg(f"buf:{ptx}:3", 0, COLLATZ.params[0], True)
    assert value.dtype == np.dtype(numpy_name) and len(value) == 3
    assert np.dtype({"u": "uint", "s": "int", "b": "uint", "f": "float"}[ptx[0]] + ptx[1:]) == value.dtype


def test_rand_ranges_are_the_documented_ones():
    p = COLLATZ.params[0]
    ints = parse_arg("rand:u32:5000:1:6", 0, p, True)
    assert ints.dtype == np.uint32 and set(ints.tolist()) == {1, 2, 3, 4, 5, 6}  # both ends included
    default = parse_arg("rand:s32:50000", 0, p, True)
    assert default.min() >= 0 and default.max() <= 65535 and default.max() > 60000
    assert parse_arg("rand:u16:50000", 0, p, True).max() <= 32767
    assert parse_arg("rand:s8:5000", 0, p, True).max() <= 127
    floats = parse_arg("rand:f32:5000:-2:3", 0, p, True)
    assert floats.dtype == np.float32 and floats.min() >= -2 and floats.max() < 3 and floats.min() < -1.9
    unit = parse_arg("rand:f64:5000", 0, p, True)
    assert unit.min() >= 0 and unit.max() < 1
    table = parse_arg("sorted:s32:1000:-50:50", 0, p, True)
    assert (np.diff(table) >= 0).all() and table.min() >= -50 and table.max() <= 50
    assert parse_arg("iota:s32:5", 0, p, True).tolist() == [0, 1, 2, 3, 4]
    assert parse_arg("iota:s16:4:10:-3", 0, p, True).tolist() == [10, 7, 4, 1]
    assert parse_arg("iota:f32:3:0.5:0.25", 0, p, True).tolist() == [0.5, 0.75, 1.0]


def test_seed_and_position_choose_the_stream():
    p = COLLATZ.params[0]
    a = parse_arg("rand:u32:64", 0, p, True, seed=0)
    assert np.array_equal(a, parse_arg("rand:u32:64", 0, p, True, seed=0))
    assert not np.array_equal(a, parse_arg("rand:u32:64", 0, p, True, seed=7))
    assert not np.array_equal(a, parse_arg("rand:u32:64", 1, p, True, seed=0))


@pytest.mark.parametrize("func, args, message", [
    (COLLATZ, ["int32:5", "buf:u32:8", "buf:u32:8", "s32:8", "s32:4"],
     "--arg 0 'int32:5' is a scalar, but parameter 0 (collatz_param_0) is a pointer: pass a buffer "
     "(buf:, rand:, sorted:, iota: or npy:)"),
    (COLLATZ, ["rand:u32:8", "buf:u32:8", "buf:u32:8", "buf:u32:8", "s32:4"],
     "--arg 3 'buf:u32:8' is a buffer, but parameter 3 (collatz_param_3) is a .u32 value: pass u32:VALUE"),
    (COLLATZ, ["rand:u32:8", "buf:u32:8", "buf:u32:8", "s64:8", "s32:4"],
     "--arg 3 's64:8' is s64, but parameter 3 (collatz_param_3) is .u32: pass u32:8"),
    (COLLATZ, ["rand:u32:8", "buf:u32:8"],
     "kernel collatz takes 5 parameter(s) (0 pointer, 1 pointer, 2 pointer, 3 .u32, 4 .u32) but --arg was given "
     "2 time(s); pass one --arg per parameter, in order"),
    (RAW, ["buf:u32:8", "s32:1", "u32:1"], "--arg 1 's32:1' is s32, but parameter 1 (count) is .u64: pass u64:1"),
    (RAW, ["buf:u32:8", "u64:1", "u32:99999999999"], "--arg 2 'u32:99999999999': 99999999999 does not fit u32 (0..4294967295)"),
    (RAW, ["rand:u32:8:9:1", "u64:1", "u32:1"], "--arg 0 'rand:u32:8:9:1': LO 9 must be at most HI 1"),
    (RAW, ["rand:u32:8:9", "u64:1", "u32:1"], "--arg 0 'rand:u32:8:9' is not rand:DTYPE:N[:LO:HI]"),
    (RAW, ["iota:u8:300", "u64:1", "u32:1"], "--arg 0 'iota:u8:300': its last value 299 does not fit u8 (0..255)"),
    (RAW, ["rand:uint:8", "u64:1", "u32:1"], "--arg 0 'rand:uint:8': 'uint' is not a type; use u8..u64, s8..s64, "
                                              "b8..b64, f16, f32, f64 (or int32, float32, ...)"),
    (RAW, ["buf:u32:8", "u64:1", "u32"], "--arg 2 'u32' has no value: write u32:VALUE (e.g. u32:5)"),
])
def test_mistakes_are_one_sentence_in_cli_terms(func, args, message):
    with pytest.raises(ArgError) as e:
        parse_args(args, func)
    assert str(e.value) == message


def test_trace_seed_npy_and_save_outputs_round_trip(tmp_path):
    """--seed changes every random argument (and the trace), the same seed repeats it; npy: files go in
    and --save-outputs files come out as the kernel left them (checked against numpy)."""
    ptx = str(EXAMPLES)
    common = ["-k", "collatz", "--grid", "2", "--block", "64", "--arg", "rand:u32:128:1:3000", "--arg", "buf:u32:128",
              "--arg", "buf:u32:16", "--arg", "s32:128", "--arg", "s32:16"]
    digests, inputs = [], []
    for seed, name in ((0, "a"), (0, "b"), (7, "c")):
        res = runner.invoke(app, ["trace", ptx, *common, "--seed", str(seed), "-o", str(tmp_path / f"{name}.h5"),
                                  "--save-outputs", str(tmp_path / name)])
        assert res.exit_code == 0, res.output
        # the summary line (a first-compile notice on stderr may come before it in the mixed output)
        assert any(line.startswith(f"{tmp_path / name}.h5: divergent.ptx, kernel collatz")
                   for line in res.output.splitlines()), res.output
        assert f"{tmp_path / name}: wrote the 3 buffer(s) after the run: arg0.npy, arg1.npy, arg2.npy" in res.output
        digests.append(Trace.load(tmp_path / f"{name}.h5").digest())
        inputs.append(np.load(tmp_path / name / "arg0.npy"))
        steps = np.load(tmp_path / name / "arg1.npy")
        assert np.array_equal(steps, collatz_steps(inputs[-1]))
        assert np.array_equal(np.load(tmp_path / name / "arg2.npy"), collatz_hist(steps, 16))
    assert digests[0] == digests[1] != digests[2] and not np.array_equal(inputs[0], inputs[2])
    assert Trace.load(tmp_path / "c.h5").attrs["seed"] == 7

    rng = np.random.default_rng(3)
    table = np.unique(rng.integers(0, 1000, 300)).astype(np.int32)
    queries = rng.integers(-5, 1005, 256).astype(np.int32)
    np.save(tmp_path / "table.npy", table)
    np.save(tmp_path / "queries.npy", queries)
    out = tmp_path / "bs"
    res = runner.invoke(app, ["trace", ptx, "-k", "binsearch", "--grid", "2", "--block", "128",
                              "--arg", f"npy:{tmp_path / 'table.npy'}", "--arg", f"s32:{len(table)}",
                              "--arg", f"npy:{tmp_path / 'queries.npy'}", "--arg", "buf:s32:256", "--arg", "s32:256",
                              "-o", str(tmp_path / "bs.h5"), "--save-outputs", str(out)])
    assert res.exit_code == 0, res.output
    assert sorted(p.name for p in out.iterdir()) == ["arg0.npy", "arg2.npy", "arg3.npy"]  # buffers only
    assert np.array_equal(np.load(out / "arg0.npy"), table) and np.array_equal(np.load(out / "arg2.npy"), queries)
    pos = np.load(out / "arg3.npy")
    found = np.isin(queries, table)
    assert np.array_equal(table[pos[found]], queries[found])  # a key's index (the table has no duplicates)
    assert np.array_equal(pos[~found], np.searchsorted(table, queries[~found]))


def test_trace_refuses_bad_outputs_and_files_before_any_work(tmp_path):
    ptx = str(EXAMPLES)
    args = ["-k", "collatz", "--grid", "1", "--block", "32", "--arg", "rand:u32:32:1:9", "--arg", "buf:u32:32",
            "--arg", "buf:u32:4", "--arg", "s32:32", "--arg", "s32:4"]
    blocker = tmp_path / "file"
    blocker.write_text("x")
    res = runner.invoke(app, ["trace", ptx, *args, "-o", str(tmp_path / "t.h5"), "--save-outputs", str(blocker)])
    assert res.exit_code == 2 and "--save-outputs directory" in res.output and not (tmp_path / "t.h5").exists()
    np.save(tmp_path / "words.npy", np.array(["a", "b"]))
    bad = [a if a != "rand:u32:32:1:9" else f"npy:{tmp_path / 'words.npy'}" for a in args]
    res = runner.invoke(app, ["trace", ptx, *bad, "-o", str(tmp_path / "t.h5")])
    assert res.exit_code == 2 and re.search(r"words\.npy holds <U1; a buffer holds integers or floats", res.output)
    res = runner.invoke(app, ["trace", ptx, *[a.replace("rand:u32:32:1:9", "npy:nope.npy") for a in args]])
    assert res.exit_code == 2 and "--arg 0 'npy:nope.npy': nope.npy does not exist" in res.output


def test_trace_default_name_is_the_ptx_stem_and_kernel(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    res = runner.invoke(app, ["trace", str(EXAMPLES), "-k", "collatz", "--grid", "1", "--block", "32",
                              "--arg", "iota:u32:32:1", "--arg", "buf:u32:32", "--arg", "buf:u32:4", "--arg", "u32:32",
                              "--arg", "u32:4"])
    assert res.exit_code == 0, res.output
    assert res.output.startswith("divergent-collatz.h5: ") and (tmp_path / "divergent-collatz.h5").is_file()
    help_text = runner.invoke(app, ["trace", "--help"], env={"COLUMNS": "200"}).output
    assert "<file stem>-<kernel>.h5" in help_text
