"""A full disk loses nothing: the results and trace writers stop with one sentence, every row
stored before stays readable, and a re-run with space resumes to the same results.

The disk is "filled" with a small ``RLIMIT_FSIZE`` (``ulimit -f``) in a subprocess: writes past
it fail with EFBIG exactly as HDF5 would meet ENOSPC, deterministically and without root.
"""

import os
import resource
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sweep_helpers import make_sweep, make_traces

from simt_fast import _storage, results
from simt_fast.results import DiskFullError, ResultsWriter
from simt_fast.sim.config import SimConfig
from simt_fast.sim.stats import Stats
from simt_fast.sweep import run_sweep

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

SWEEP_72 = """\
baseline = "sps"
traces = ["traces/*.h5"]

[grid]
mechanism = ["sps", "mp", "mimd"]
simd_width = [4, 8, 16, 32]
lat_alu = [8, 16, 24]
"""


def _limited(limit: int):
    def set_limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.RLIM_INFINITY))

    return set_limit


def _python(code: str, limit: int, **kw) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(HERE), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, "-W", "ignore", "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, preexec_fn=_limited(limit), env=env, timeout=600, **kw)


def _stats(i: int) -> dict:
    return Stats(cycles=100 + i, warp_insts=10, thread_insts=200, occupancy_hist=np.arange(33),
                 quarter_hist=np.arange(5)).finalize(32).to_dict()


def test_reservation_refuses_past_the_file_size_limit(tmp_path):
    p = tmp_path / "f.bin"
    p.write_bytes(b"x" * 1000)
    fd = os.open(p, os.O_RDWR)
    try:
        soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
        resource.setrlimit(resource.RLIMIT_FSIZE, (50_000, hard))
        try:
            _storage.reserve(fd, 10_000)  # fits
            with pytest.raises(_storage.NoSpace) as info:
                _storage.reserve(fd, 100_000)
        finally:
            resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
    finally:
        os.close(fd)
    assert _storage.is_disk_full(info.value) and p.stat().st_size == 1000
    assert _storage.is_disk_full(RuntimeError("Can't write data (file write failed: errno = 28, ...)"))
    assert not _storage.is_disk_full(RuntimeError("Can't write data (errno = 5)"))


def test_writer_stops_before_hdf5_meets_the_full_disk(tmp_path):
    """Rows are appended until the limit; every one stored before is readable, and a resume while the
    disk is still full is refused before anything is written."""
    out = tmp_path / "r.h5"
    limit = 4_000_000
    proc = _python(f"""
        import numpy as np
        from simt_fast.results import ResultsWriter, DiskFullError
        from simt_fast.sim.config import SimConfig
        from test_sweep_disk_full import _stats
        n = 0
        try:
            with ResultsWriter({str(out)!r}) as w:
                for i in range(100_000):
                    w.append(f"{{i:032x}}", "t" * 64, "tr", SimConfig().to_dict(), _stats(i))
                    n += 1
        except DiskFullError as e:
            print(n, e)
        try:
            ResultsWriter({str(out)!r})
        except DiskFullError as e:
            print(e)
    """, limit)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    n = int(lines[0].split()[0])
    assert n > 500, "the writer stopped long before the limit"
    assert lines[0].endswith(f"{out}: disk full after {n} rows (the file-size limit (ulimit -f) of {limit} bytes is "
                             f"reached); they are kept; free space and re-run to resume")
    assert lines[1] == lines[0].split(" ", 1)[1]
    assert out.stat().st_size <= limit
    df = results.load(out, hist=True)
    assert len(df) == n and list(df["cycles"]) == [100 + i for i in range(n)]
    np.testing.assert_array_equal(df["occupancy_hist"].iloc[-1], np.arange(33))
    # with space again, the same file takes more rows
    with ResultsWriter(out) as w:
        assert len(w.ids) == n and not w.recovered
        w.append("f" * 32, "t" * 64, "tr", SimConfig().to_dict(), _stats(n))
    assert len(results.load(out)) == n + 1


def test_hdf5_failing_mid_write_does_not_crash(tmp_path):
    """If the space is taken between the reservation and the write (another program), HDF5 meets the
    error itself: the writer says so in one sentence and the process ends normally (no segfault)."""
    out = tmp_path / "r.h5"
    proc = _python(f"""
        from simt_fast import _storage
        from simt_fast.results import ResultsWriter, DiskFullError
        from simt_fast.sim.config import SimConfig
        from test_sweep_disk_full import _stats
        _storage.reserve = lambda fd, n: None   # the reservation is overtaken
        try:
            with ResultsWriter({str(out)!r}) as w:
                for i in range(100_000):
                    w.append(f"{{i:032x}}", "t" * 64, "tr", SimConfig().to_dict(), _stats(i))
        except DiskFullError as e:
            print(e)
        print("exited normally")
    """, 4_000_000)  # room to create the file (one dataset per results column) and write some rows
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.splitlines()[-1] == "exited normally"
    assert "while HDF5 was writing" in proc.stdout
    assert "Traceback" not in proc.stderr


def _messages(stderr: str) -> list:
    """stderr's lines without the one-line notices of a kernel's first compile (a cold numba cache)."""
    return [line for line in stderr.strip().splitlines() if not line.startswith("simt-fast: compiling ")]


def _cli(args, limit):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, "-X", "faulthandler", "-m", "simt_fast.cli", *map(str, args)],
                          capture_output=True, text=True, preexec_fn=_limited(limit), env=env, timeout=600)


@pytest.mark.parametrize("limit", [1_000_000, 3_000_000], ids=["at-creation", "at-a-flush"])
def test_trace_writer_full_disk_is_one_sentence_and_keeps_the_old_file(tmp_path, limit):
    out = tmp_path / "big.h5"
    out.write_bytes(b"previous content")
    proc = _cli(["synth", out, "--threads", "65536", "--blocks", "64", "--max-path-len", "512", "--force"], limit)
    assert proc.returncode == 2, proc.stderr
    lines = _messages(proc.stderr)
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith(f"error: {out}: disk full after ") and "of 65536 thread paths" in lines[0]
    assert lines[0].endswith(f"the partial trace was removed and any earlier big.h5 is unchanged; free space and re-run")
    assert out.read_bytes() == b"previous content"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.h5"]  # no temporary left behind


def test_streamed_trace_from_the_emulator_stops_cleanly(tmp_path):
    """`simt-fast trace` streams CTA batches; the disk fills at a batch flush inside the emulator's
    launch, which aborts the writer a second time on the way out (that once crashed h5py)."""
    out = tmp_path / "sm.h5"
    proc = _cli(["trace", "statemachine", "--size", "default", "--mem", "-o", out], 3_000_000)
    assert proc.returncode == 2, proc.stderr[-3000:]
    (line,) = _messages(proc.stderr)
    assert line.startswith(f"error: {out}: disk full after ") and line.endswith("free space and re-run")
    assert list(tmp_path.iterdir()) == []


@pytest.fixture(scope="module")
def sweep72(tmp_path_factory):
    d = tmp_path_factory.mktemp("sweep72")
    make_traces(d / "traces")
    (d / "sweep.toml").write_text(SWEEP_72)
    clean = d / "clean.h5"
    outcome = run_sweep(d / "sweep.toml", clean, jobs=1, cache_dir=d / "cache")
    assert outcome.ran == 72 and not outcome.failed
    return d, clean


def test_full_disk_during_a_sweep_then_resume_equals_a_clean_run(sweep72, tmp_path):
    """The must-show case: `simt-fast sweep` (2 pool workers) meets a full disk part way, says so in one
    sentence, exits 2, keeps every stored row; the same command with space resumes, and the file ends
    identical to an uninterrupted run's."""
    d, clean = sweep72
    out = tmp_path / "r.h5"
    # Where the limit falls: the file with its first chunks written, plus the writer's reservation,
    # plus half a histogram chunk, so the sweep stops once the 65th row needs new chunks.
    probe = tmp_path / "probe.h5"
    with ResultsWriter(probe, sweep_text=SWEEP_72, baseline={"mechanism": "sps"}) as w:
        w.append("0" * 32, "t" * 64, "syn0", SimConfig().to_dict(), _stats(0))
    limit = probe.stat().st_size + results._reserve_bytes(1) + 40_000
    cmd = ["sweep", str(d / "sweep.toml"), "-o", str(out), "-j", "2", "-q", "--cache-dir", str(d / "cache")]
    proc = _python(f"""
        import sys
        from simt_fast.cli import app
        sys.argv = ["simt-fast", *{cmd!r}]
        app()
    """, limit)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    stored = len(results.point_ids(out))
    assert 0 < stored < 72
    assert _messages(proc.stderr) == [
        f"error: {out}: disk full after {stored} rows (the file-size limit (ulimit -f) of {limit} bytes is reached); "
        f"they are kept; free space and re-run to resume"]

    resumed = _python(f"""
        import sys
        from simt_fast.cli import app
        sys.argv = ["simt-fast", *{cmd!r}]
        app()
    """, resource.RLIM_INFINITY)
    assert resumed.returncode == 0, resumed.stderr
    assert f"{72 - stored} points run, {stored} already stored" in resumed.stdout
    pd.testing.assert_frame_equal(results.contents(out), results.contents(clean))


def test_rows_left_unfinished_are_dropped_and_run_again(tmp_path):
    """The lock file names the rows a writer was writing; a writer that stopped mid-write (killed, or
    HDF5 failing) leaves them there, and the next writer drops those rows, which may be incomplete."""
    out = tmp_path / "r.h5"
    with ResultsWriter(out) as w:
        for i in range(5):
            w.append(f"{i:032x}", "t" * 64, "tr", SimConfig().to_dict(), _stats(i))
    assert not (tmp_path / "r.h5.lock").exists()  # a clean close leaves no intent record
    (tmp_path / "r.h5.lock").write_bytes(f"{3:032x},{9:032x}".encode() + b"\0")
    with ResultsWriter(out) as w:
        assert w.recovered and w.ids == {f"{i:032x}" for i in (0, 1, 2, 4)}
        assert w.append(f"{3:032x}", "t" * 64, "tr", SimConfig().to_dict(), _stats(3))
    df = results.load(out)
    assert sorted(df["cycles"]) == [100, 101, 102, 103, 104]
    with ResultsWriter(out) as w:  # the record was cleared: nothing is dropped again
        assert not w.recovered and len(w.ids) == 5


# A full disk before the first row: at the file's creation, while its schema is written, or at the first
# row's chunks; either HDF5 meets it (another program took the space the writer reserved, simulated by
# switching the reservation off) or the reservation refuses it. Each case pins the limit to that
# point from inside the sweep process, then checks the sentence, that nothing is left behind, and
# that the re-run the sentence asks for produces the rows of a clean run.
FIRST_WRITE = """
    import os, resource, sys
    from simt_fast import _storage, results
    where, overtaken, out, sweep, cache = sys.argv[1:6]
    hard = resource.getrlimit(resource.RLIMIT_FSIZE)[1]

    def limit_to(n):
        resource.setrlimit(resource.RLIMIT_FSIZE, (n, hard))

    if overtaken == "yes":
        _storage.reserve = lambda fd, n: None
        _storage.check_free = lambda directory, n: None
    if where == "creation":
        limit_to(0)  # HDF5 cannot write the superblock
    elif where == "schema":
        write_schema = results._write_schema

        def limited_schema(f, attrs):  # the superblock is on disk; datasets and attributes are not
            limit_to(os.path.getsize(f.filename))
            write_schema(f, attrs)

        results._write_schema = limited_schema
    else:
        write_rows = results.write_rows

        def limited_rows(path, *args):  # the empty file is in place; its first row's chunks do not fit
            write_rows(path, *args)
            limit_to(os.path.getsize(path) + 1000)

        results.write_rows = limited_rows
    from simt_fast.cli import app
    sys.argv = ["simt-fast", "sweep", sweep, "-o", out, "-j", "1", "-q", "--cache-dir", cache]
    app()
"""


@pytest.fixture(scope="module")
def sweep10(tmp_path_factory):
    d = tmp_path_factory.mktemp("sweep10")
    sweep = make_sweep(d)
    clean = d / "clean.h5"
    outcome = run_sweep(sweep, clean, jobs=1, cache_dir=d / "cache")
    assert outcome.ran == 10 and not outcome.failed
    return d, sweep, clean


@pytest.mark.parametrize("where, overtaken, why", [
    ("creation", "yes", "File too large"),
    ("schema", "yes", "File too large"),
    ("first chunk", "yes", "File too large"),
    ("creation", "no", r"the file-size limit \(ulimit -f\) of 0 bytes is reached"),
    ("first chunk", "no", r"the file-size limit \(ulimit -f\) of \d+ bytes is reached"),
], ids=["creation", "schema", "first-chunk", "creation-refused", "first-row-refused"])
def test_a_full_disk_before_the_first_row_leaves_nothing_and_the_rerun_resumes(sweep10, tmp_path, where, overtaken,
                                                                               why):
    import re

    d, sweep, clean = sweep10
    out = tmp_path / "r.h5"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, "-W", "ignore", "-X", "faulthandler", "-c", textwrap.dedent(FIRST_WRITE),
                           where, overtaken, str(out), str(sweep), str(d / "cache")],
                          capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 2, proc.stderr[-3000:]
    (line,) = _messages(proc.stderr)
    assert re.fullmatch(f"error: {re.escape(str(out))}: disk full before the first row was stored \\({why}\\); the "
                        f"file was removed; free space and re-run", line), line
    assert list(tmp_path.iterdir()) == []  # no results file, temporary or lock file
    resumed = run_sweep(sweep, out, jobs=1, cache_dir=d / "cache")
    assert resumed.ran == 10 and resumed.skipped == 0 and not resumed.failed
    pd.testing.assert_frame_equal(results.contents(out), results.contents(clean))
