"""The console script's exit (`simt_fast.cli.main`): it ends the process without the interpreter's
teardown, so these run it as users do, in a fresh process, and check what that must keep: the
output whole, the exit status, the exit handlers, and a closed pipe without a traceback."""

from __future__ import annotations

import json
import subprocess
import sys

from simt_fast import __version__
from simt_fast.trace.synth import synthetic


def cli(*args, **kwargs):
    return subprocess.run([sys.executable, "-m", "simt_fast.cli", *args], capture_output=True, text=True, **kwargs)


def test_output_and_status_survive_the_quick_exit(tmp_path):
    trace = tmp_path / "t.h5"
    synthetic(4, 128, seed=1, with_mem=True).save(trace)
    run = cli("run", str(trace), "-m", "sps", "-m", "mp-oer", "--json")
    assert run.returncode == 0, run.stderr
    assert [r["mechanism"] for r in json.loads(run.stdout)["results"]] == ["sps", "mp-oer"]  # the whole JSON
    table = cli("run", str(trace), "-m", "sps")
    assert table.returncode == 0 and "speedup = cycles of sps / cycles" in table.stdout  # the legend after the table
    assert cli("version").stdout.strip() == __version__


def test_bad_input_keeps_exit_status_2(tmp_path):
    bad = cli("run", str(tmp_path / "missing.h5"))
    assert bad.returncode == 2
    assert "missing.h5" in bad.stderr and "Traceback" not in bad.stderr


def test_exit_handlers_run(tmp_path):
    """A handler registered during the command (here before it) still runs: the quick exit calls
    them before it ends the process."""
    marker = tmp_path / "ran"
    code = ("import atexit, pathlib, sys; "
            f"atexit.register(lambda: pathlib.Path({str(marker)!r}).write_text('yes')); "
            "sys.argv = ['simt-fast', 'version']; "
            "from simt_fast.cli import main; main()")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.strip() == __version__
    assert marker.read_text() == "yes"


def test_a_closed_pipe_is_no_traceback(tmp_path):
    trace = tmp_path / "t.h5"
    synthetic(4, 128, seed=1, with_mem=True).save(trace)
    proc = subprocess.Popen([sys.executable, "-m", "simt_fast.cli", "run", str(trace), "-m", "sps"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()  # the reader went away (`| head -0`) before anything was printed
    _, err = proc.communicate()
    assert b"Traceback" not in err
