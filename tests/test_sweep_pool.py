"""The local pool dies with its coordinator: `kill -9` of a running sweep leaves no process behind."""

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from sweep_helpers import make_sweep

from simt_fast import results
from simt_fast.sweep import worker

HERE = Path(__file__).resolve().parent

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="lists processes through /proc")


def _session_members(sid: int) -> list:
    """Live (not zombie) processes of session ``sid``, from /proc."""
    out = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()  # after "pid (comm) "
        state, session = fields[0], int(fields[3])
        if session == sid and state != "Z":
            out.append(int(entry.name))
    return out


def test_killing_the_coordinator_stops_every_worker(tmp_path):
    make_sweep(tmp_path)
    out = tmp_path / "r.h5"
    code = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(HERE)!r})
        from simt_fast.sweep import run_sweep
        run_sweep({str(tmp_path / 'sweep.toml')!r}, {str(out)!r}, jobs=2, cache_dir={str(tmp_path / 'cache')!r},
                  simulate="sweep_helpers:slow_simulate")
    """)
    proc = subprocess.Popen([sys.executable, "-W", "ignore", "-c", code], start_new_session=True)
    try:
        t0 = time.time()
        while not (out.exists() and _stored(out) >= 1):
            assert proc.poll() is None and time.time() - t0 < 120, "the sweep never stored a point"
            time.sleep(0.05)
        members = _session_members(proc.pid)
        assert len(members) >= 3, members  # coordinator, fork server and workers (and the resource tracker)
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        deadline = time.time() + 10 * worker.WATCH_SECONDS + 5
        while _session_members(proc.pid) and time.time() < deadline:
            time.sleep(0.1)
        assert _session_members(proc.pid) == [], "pool processes outlived the coordinator"
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def _stored(out) -> int:
    try:
        return len(results.point_ids(out))
    except results.ResultsError:
        return 0


def test_watch_thread_exits_when_the_watched_process_is_gone():
    """The watcher itself, in a child process watching a short-lived grandchild."""
    code = textwrap.dedent("""
        import subprocess, sys, time
        from simt_fast.sweep import worker
        short = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(0.3)"])
        worker.watch_coordinator(short.pid)
        short.wait()
        time.sleep(30)
        print("still alive")
    """)
    t0 = time.time()
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 1 and "still alive" not in r.stdout
    assert time.time() - t0 < 20


def test_first_pool_run_compiles_a_kernel_once(tmp_path):
    """Two workers that need the same unbuilt kernel at once: one compiles it (and says so, once),
    the other waits for it and loads it from the cache (`_jit.ensure_compiled`)."""
    from sweep_helpers import COMPILE_NOTICE, sweep_test_kernel

    cache = sweep_test_kernel._cache._cache_file
    index = Path(cache._index_path)
    for f in index.parent.glob(index.name.rsplit(".py", 1)[0] + "*"):
        f.unlink()  # this kernel's machine code (index, data, lock), so that the sweep must build it
    make_sweep(tmp_path)
    code = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(HERE)!r})
        from simt_fast.sweep import run_sweep
        run_sweep({str(tmp_path / 'sweep.toml')!r}, {str(tmp_path / 'r.h5')!r}, jobs=2,
                  cache_dir={str(tmp_path / 'cache')!r}, simulate="sweep_helpers:compiling_simulate")
    """)
    out = subprocess.run([sys.executable, "-W", "ignore", "-c", code], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    assert out.stderr.count(f"compiling {COMPILE_NOTICE}") == 1, out.stderr
    assert _stored(tmp_path / "r.h5") == 10
