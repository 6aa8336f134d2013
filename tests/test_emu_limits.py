"""Reliability of launches (issue 23): runaway kernels stop at a bound that fits the machine, launch
sizes are checked against CUDA's limits and this machine before anything is allocated, bad CLI
inputs are one sentence with exit 2, and SIGTERM during a streamed trace is handled like SIGINT."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from simt_fast.cli import app
from simt_fast.emu import EmuError, launch
from simt_fast.emu import device_memory

ROOT = Path(__file__).resolve().parents[1]
HEAD = ".version 7.0\n.target sm_75\n.address_size 64\n"

ENDLESS = HEAD + """
.visible .entry spin(.param .u64 out)
{
 .reg .b32 %r<3>;
 mov.u32 %r1, 0;
LOOP:
 add.u32 %r1, %r1, 1;
 bra.uni LOOP;
}
"""

FILL = HEAD + """
.visible .entry fill(.param .u64 out, .param .u32 v)
{
 .reg .b32 %r<3>;
 .reg .b64 %rd<4>;
 ld.param.u64 %rd1, [out];
 ld.param.u32 %r2, [v];
 mov.u32 %r1, %tid.x;
 mul.wide.u32 %rd2, %r1, 4;
 add.s64 %rd3, %rd1, %rd2;
 st.global.u32 [%rd3], %r2;
 ret;
}
"""


# The sentence a runaway kernel stops with: the kernel, the instructions executed, the limit, and where
# its threads were (block 1 is LOOP, PTX lines 10-11 of ENDLESS; they stand at its first instruction).
RUNAWAY = (r"^<ptx>:10: kernel 'spin' stopped after (\d+) thread instructions: {limit}; 32 of the 32 unfinished "
           r"threads of CTA \(0, 0, 0\) were in block 1 \(LOOP, PTX lines 10-11\), at `add\.u32 %r1, %r1, 1` "
           r"\(an endless loop\?\)$")
HELD = r"what it holds for its trace reached max_trace_bytes=1048576 \(1 MiB\)"


@pytest.mark.parametrize("mode", ["streamed", "in memory", "no trace"])
def test_a_runaway_kernel_stops_at_the_trace_budget_in_one_sentence(tmp_path, mode):
    kw = {"streamed": {"trace_path": tmp_path / "t.h5"}, "in memory": {}, "no trace": {"trace": False}}[mode]
    with pytest.raises(EmuError) as err:
        launch(ENDLESS, "spin", 1, 32, [np.zeros(1, np.uint32)], max_trace_bytes=1 << 20, **kw)
    m = re.match(RUNAWAY.format(limit=HELD), str(err.value))
    assert m, str(err.value)
    # it stopped when the event log (8 bytes per block event, one event per two instructions of the loop)
    # filled the budget: not before, and without growing past it
    events = (1 << 20) // 8
    assert 0.99 * 2 * events < int(m.group(1)) <= 2 * events
    assert not list(tmp_path.iterdir())  # the streamed trace's temporary file is gone: nothing looks finished


def test_max_insts_stops_a_runaway_kernel_in_the_same_sentence():
    with pytest.raises(EmuError) as err:
        launch(ENDLESS, "spin", 1, 32, [np.zeros(1, np.uint32)], max_insts=10_000)
    m = re.match(RUNAWAY.format(limit="it reached max_insts=10000"), str(err.value))
    assert m and 10_000 < int(m.group(1)) <= 10_032, str(err.value)


def test_the_default_budgets_follow_the_memory_available(monkeypatch):
    """An eighth of what this process can still allocate holds the trace; the instruction budget is the
    most a trace within it can hold (8 bytes per block event, each at most the longest block)."""
    from simt_fast.emu import host

    monkeypatch.setattr(host, "available_bytes", lambda: 8 << 20)
    with pytest.raises(EmuError) as err:
        launch(ENDLESS, "spin", 1, 32, [np.zeros(1, np.uint32)])
    limit = (r"what it holds for its trace reached max_trace_bytes=1048576 \(1 MiB, an eighth of the 8 MiB of "
             r"memory available; raise it with max_trace_bytes\)")
    assert re.match(RUNAWAY.format(limit=limit), str(err.value)), str(err.value)
    # FILL's longest block is its entry, 7 instructions (`ret` ends it): max_insts = 1 MiB / 8 x 7, which
    # 129 CTAs of 1024 threads pass before any thread leaves the entry block
    with pytest.raises(EmuError, match=r"runs 132096 threads, each executing at least the 7 instruction\(s\) of the "
                                       r"entry block: more than max_insts=917504 thread instructions"):
        launch(FILL, "fill", 129, 1024, [np.zeros(1, np.uint32), np.uint32(1)], trace=False)


def test_available_memory_counts_the_address_space_limit():
    """``ulimit -v`` (and -d) caps what a process may allocate whatever the machine has: the budget
    follows it (a runaway once died with numpy's 'Unable to allocate 2.00 GiB' under such a limit)."""
    import resource

    from simt_fast.emu import limits

    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    status = Path("/proc/self/status").read_text()
    vm = int(re.search(r"^VmSize:\s+(\d+) kB", status, re.M).group(1)) * 1024
    resource.setrlimit(resource.RLIMIT_AS, (vm + (256 << 20), hard))
    try:
        assert limits.available_bytes() <= 256 << 20
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
    assert limits.available_bytes() > 256 << 20  # this machine has more (the test needs it to mean anything)


def test_the_cli_stops_a_runaway_kernel_with_exit_2_and_writes_nothing(tmp_path):
    ptx = tmp_path / "spin.ptx"
    ptx.write_text(ENDLESS)
    out = tmp_path / "spin.h5"
    res = CliRunner().invoke(app, ["trace", str(ptx), "--kernel", "spin", "--grid", "1", "--block", "32", "--arg",
                                   "buf:uint32:1", "-o", str(out), "--max-trace-bytes", "1048576"])
    assert res.exit_code == 2, res.output
    lines = [line for line in res.output.splitlines() if line.strip() and not line.startswith("simt-fast: compiling")]
    assert len(lines) == 1 and lines[0].startswith("error: "), res.output
    assert re.match(RUNAWAY.replace("<ptx>", re.escape(str(ptx))).format(limit=HELD).replace("^", "^error: "),
                    lines[0]), lines[0]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["spin.ptx"]


def test_the_sweeps_workload_cache_takes_the_budgets(tmp_path):
    """A workload traced into the sweep's cache runs under the budgets `simt-fast sweep` is given; one
    that outgrows them is one sentence naming the workload, exit 2, and nothing is cached."""
    sweep = tmp_path / "s.toml"
    sweep.write_text('baseline = "sps"\nsize = "tiny"\nworkloads = ["nqueens"]\n[grid]\nmechanism = ["sps"]\n')
    cache = tmp_path / "cache"
    res = CliRunner().invoke(app, ["sweep", str(sweep), "-o", str(tmp_path / "r.h5"), "-q", "--cache-dir", str(cache),
                                   "--max-insts", "5000"])
    assert res.exit_code == 2, res.output
    line = res.output.strip().splitlines()[-1]
    assert line.startswith("error: workload 'nqueens' (tiny, seed 0) could not be traced, so nothing was cached: ")
    assert re.search(r"kernel '\w*nqueens\w*' stopped after 50\d\d thread instructions: it reached max_insts=5000; ",
                     line), line
    assert not [p for p in cache.rglob("*") if p.is_file() and p.suffix in (".h5", ".tmp")]
    assert not (tmp_path / "r.h5").exists()


@pytest.mark.parametrize("grid, block, pattern", [
    ((2**31, 1, 1), 32, r"grid x = 2147483648 is more than CUDA allows \(2147483647\)"),
    ((4294967296, 65536, 65536), 32, r"grid x = 4294967296 is more than CUDA allows"),
    ((1, 65536), 32, r"grid y = 65536 is more than CUDA allows \(65535\)"),
    (1, (1, 1, 65), r"block z = 65 is more than CUDA allows \(64\)"),
    (1, (64, 32), r"block \(64, 32, 1\) has 2048 threads; a CTA has at most 1024"),
    ("12", 32, r"grid must be an int or a tuple of 1-3 ints, got '12'"),
    (1.5, 32, r"grid must be an int or a tuple of 1-3 ints, got 1\.5"),
    ((2, "3"), 32, r"grid must be an int or a tuple of 1-3 ints"),
    (0, 32, r"every grid dimension must be >= 1"),
])
def test_launch_sizes_are_checked_against_cuda(grid, block, pattern):
    with pytest.raises(EmuError, match=pattern):
        launch(FILL, "fill", grid, block, [np.zeros(32, np.uint32), np.uint32(1)])


def test_a_huge_grid_is_refused_before_anything_runs():
    args = [np.zeros(4, np.uint32), np.uint32(1)]
    t0 = time.perf_counter()
    with pytest.raises(EmuError, match=r"runs 2199023254528 threads, each executing at least the .* more than max_insts"):
        launch(FILL, "fill", 2**31 - 1, 1024, args)
    with pytest.raises(EmuError, match=r"an in-memory trace of 2199023254528 threads needs at least .* stream it with trace_path="):
        launch(FILL, "fill", 2**31 - 1, 1024, args, max_insts=10**18)
    assert time.perf_counter() - t0 < 5


@pytest.mark.parametrize("shared, pattern", [
    (10_000_000_000_000, r"shared_bytes=10000000000000 plus the kernel's 0 static bytes is more shared memory than a CUDA block can have"),
    (-1, r"shared_bytes must be a non-negative integer, got -1"),
    ("5", r"shared_bytes must be a non-negative integer, got '5'"),
])
def test_shared_bytes_are_checked(shared, pattern):
    with pytest.raises(EmuError, match=pattern):
        launch(FILL, "fill", 1, 32, [np.zeros(32, np.uint32), np.uint32(1)], shared)


def test_device_memory_beyond_the_machine_is_refused(monkeypatch):
    monkeypatch.setattr(device_memory, "machine_bytes", lambda: 1 << 20)
    with pytest.raises(EmuError, match=r"the launch needs 0\.00\d+ GiB of device memory, more than half of this machine's"):
        launch(FILL, "fill", 1, 32, [np.zeros(1 << 18, np.uint32), np.uint32(1)])


@pytest.mark.parametrize("extra, pattern", [
    (["--arg", "buf:uint32:64", "--arg", "int32:99999999999"], r"--arg 1 'int32:99999999999': 99999999999 does not fit int32"),
    (["--arg", "buf:int32:99999999999999", "--arg", "uint32:1"], r"--arg 0 'buf:int32:99999999999999' asks for 99999999999999 elements"),
    (["--arg", "buf:uint32:64", "--arg", "uint32:1", "--shared-bytes", "10000000000000"], r"is more shared memory than a CUDA block can have"),
    (["--arg", "buf:uint32:64", "--arg", "float32:1e300"], r"1e300 does not fit float32"),
])
def test_cli_inputs_are_one_sentence_exit_2(tmp_path, extra, pattern):
    ptx = tmp_path / "k.ptx"
    ptx.write_text(FILL)
    res = CliRunner().invoke(app, ["trace", str(ptx), "--grid", "1", "--block", "64", "-o", str(tmp_path / "k.h5"), *extra])
    assert res.exit_code == 2, res.output
    lines = [line for line in res.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in res.output
    assert re.search(pattern, lines[0]), lines[0]
    res = CliRunner().invoke(app, ["trace", str(ptx), "--grid", "4294967296,65536,65536", "--block", "64",
                                   "--arg", "buf:uint32:64", "--arg", "uint32:1"])
    assert res.exit_code == 2 and "grid x = 4294967296 is more than CUDA allows" in res.output


LONG = HEAD + """
.visible .entry slow(.param .u64 out)
{
 .reg .pred %p<2>;
 .reg .b32 %r<4>;
 mov.u32 %r1, 0;
LOOP:
 add.u32 %r1, %r1, 1;
 setp.lt.u32 %p1, %r1, 2000;
 @%p1 bra LOOP;
 ret;
}
"""


def _sigint_default():
    # A child inherits an ignored SIGINT (pytest-xdist workers ignore it), and Python then leaves it
    # ignored; restored, the CLI gets Ctrl-C as a terminal user's process does.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_during_a_streamed_trace_removes_the_temporary_file(tmp_path, sig):
    launch(LONG, "slow", 1, 32, [np.zeros(1, np.uint32)], trace=False)  # numba's cache holds the machine code
    ptx = tmp_path / "slow.ptx"
    ptx.write_text(LONG)
    out = tmp_path / "slow.h5"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    # The kernel never ends by itself: it stops at its default instruction budget (about a second of
    # emulation on an idle machine). A signal that loses that race is handled after the budget's error,
    # so such a run (exit 2, budget sentence, temporary file removed) is tried again, up to three times.
    for _attempt in range(3):
        proc = subprocess.Popen([sys.executable, "-m", "simt_fast.cli", "trace", str(ptx), "--grid", "20000",
                                 "--block", "256", "--arg", "buf:uint32:1", "-o", str(out)], env=env, cwd=tmp_path,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                preexec_fn=_sigint_default)
        deadline = time.time() + 300
        while time.time() < deadline and not list(tmp_path.glob(".slow.h5.*.tmp")):  # the writer has started
            time.sleep(0.01)
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=300)
        if not (proc.returncode == 2 and "it reached max_insts" in err):
            break
        assert not out.exists() and not list(tmp_path.glob(".*.tmp"))
    assert proc.returncode == 128 + sig, err
    assert f"error: interrupted by {signal.Signals(sig).name}: the trace was not written" in err
    assert "Traceback" not in err
    assert not out.exists() and not list(tmp_path.glob(".*.tmp"))
