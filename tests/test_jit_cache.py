"""The numba cache never serves stale machine code: a kernel that calls a helper from another
module (numba keys its cache on the kernel's own file only) sees an edit of that helper."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import simt_fast

PACKAGE = Path(simt_fast.__file__).resolve().parent

HELPER = '''from simt_fast._jit import helper


@helper
def value():
    return {}
'''
KERNEL = '''from simt_fast._jit import jit
from simt_fast.probe_helper import value


@jit
def probe():
    return value() + 1
'''


def run_probe(root: Path, cache: Path) -> tuple:
    code = ("import numba, simt_fast.probe_kernel as k; "
            "print(k.probe(), len(k.probe.stats.cache_hits), numba.config.CACHE_DIR)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=root,
                         env=dict(os.environ, PYTHONPATH=str(root), NUMBA_CACHE_DIR=str(cache)))
    result, hits, cache_dir = out.stdout.split()
    return int(result), int(hits), cache_dir


def test_editing_a_helper_module_recompiles_the_kernel_that_calls_it(tmp_path):
    root = tmp_path / "src"
    shutil.copytree(PACKAGE, root / "simt_fast", ignore=shutil.ignore_patterns("__pycache__"))
    helper_file = root / "simt_fast" / "probe_helper.py"
    helper_file.write_text(HELPER.format(1))
    (root / "simt_fast" / "probe_kernel.py").write_text(KERNEL)
    cache = tmp_path / "numba"
    first = run_probe(root, cache)
    assert first[:2] == (2, 0)  # compiled
    assert run_probe(root, cache)[:2] == (2, 1)  # loaded from the cache
    helper_file.write_text(HELPER.format(41))  # the kernel's own file is untouched
    edited = run_probe(root, cache)
    assert edited[0] == 42 and edited[2] != first[2]  # a fresh cache directory, the new machine code


class FakeDispatcher:
    """What `announce_compile` reads of a numba dispatcher: its signatures and its cache index."""

    def __init__(self, index: Path, signatures=()):
        self.signatures = list(signatures)
        self._cache = type("C", (), {"_cache_file": type("F", (), {"_index_path": str(index)})()})()


def test_first_compile_says_so_on_stderr_once_and_never_when_cached(tmp_path, capsys):
    from simt_fast import _jit

    cold = FakeDispatcher(tmp_path / "missing.nbi")
    _jit.announce_compile(cold, "the test kernel", 12)
    _jit.announce_compile(cold, "the test kernel", 12)
    err = capsys.readouterr().err
    assert err.count("compiling the test kernel (first run only, about 12 s") == 1
    index = tmp_path / "cached.nbi"
    index.write_text("")
    _jit.announce_compile(FakeDispatcher(index), "a cached kernel", 12)
    _jit.announce_compile(FakeDispatcher(tmp_path / "missing.nbi", ["int64()"]), "a loaded kernel", 12)
    assert capsys.readouterr().err == ""


def test_machine_code_is_known_per_argument_types(tmp_path, monkeypatch):
    """A kernel with two builds (the cycle loops with and without the memory model): the first use
    of each is announced, so the check reads this process's builds and the disk cache per type."""
    import numba

    from simt_fast import _jit

    monkeypatch.setattr(numba.config, "CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "probe_two_builds.py").write_text("import numba\n\n@numba.njit(cache=True)\ndef twice(x):\n"
                                                  "    return x * 2\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import probe_two_builds

    kernel = probe_two_builds.twice
    assert not _jit.has_machine_code(kernel, (1,))
    assert kernel(1) == 2
    assert _jit.has_machine_code(kernel, (1,))  # built in this process
    assert not _jit.has_machine_code(kernel, (1.5,))  # the other build: not yet
    again = numba.njit(cache=True)(kernel.py_func)  # a new process' dispatcher: only the disk cache
    assert _jit.has_machine_code(again, (3,))
    assert not _jit.has_machine_code(again, (1.5,))
