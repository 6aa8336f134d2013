"""Each workload's CUDA source, compiled for the host, against its numpy reference.

An executor independent of both the numpy reference and the PTX emulator: kernel.cu is built
with g++ together with tests/data/workloads/cuda_host.h (one std::thread per CUDA thread, real
barriers and warp exchanges) and launched through ctypes on the ``tiny`` spec; the outputs must
pass ``Workload.check``.  Host libm and the absence of fma contraction differ from the GPU only
within each workload's documented float tolerance.  Skipped when no g++ is installed.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import simt_fast.workloads as workloads

from hypothesis_budget import examples

HERE = Path(__file__).resolve().parent / "data" / "workloads"
CXX = shutil.which("g++")
pytestmark = pytest.mark.skipif(CXX is None, reason="g++ is needed to build kernels for the host")


def build(workload) -> Path:
    """Compile (once per source content) and return the shared library's path."""
    parts = [workload.source.read_bytes(), (HERE / "cuda_host.h").read_bytes(), (HERE / "host_launch.cpp").read_bytes()]
    digest = hashlib.sha256(b"\0".join(parts)).hexdigest()[:16]
    cache = Path(tempfile.gettempdir()) / "simt-fast-host-kernels"
    cache.mkdir(exist_ok=True)
    lib = cache / f"{workload.name}-{digest}.so"
    if not lib.exists():
        tmp = lib.with_suffix(f".{os.getpid()}.tmp")  # concurrent builders never share a file
        cmd = [CXX, "-std=c++20", "-O1", "-shared", "-fPIC", "-pthread", "-ffp-contract=off", "-w",
               f'-DKERNEL_SOURCE="{workload.source}"', f"-DKERNEL={workload.kernel}", "-I", str(HERE),
               str(HERE / "host_launch.cpp"), "-o", str(tmp)]
        res = subprocess.run(cmd, capture_output=True, text=True)
        assert res.returncode == 0, f"g++ failed on {workload.source}:\n{res.stderr[-3000:]}"
        tmp.replace(lib)
    return lib


_LIBS: dict = {}


def host_launch(workload, spec) -> None:
    if workload.name not in _LIBS:
        _LIBS[workload.name] = ctypes.CDLL(str(build(workload)))
    lib = _LIBS[workload.name]
    keep = []  # storage that argv points into
    argv = (ctypes.c_void_p * len(spec.args))()
    for i, arg in enumerate(spec.args):
        if isinstance(arg, np.ndarray):
            assert arg.flags.c_contiguous
            cell = ctypes.c_void_p(arg.ctypes.data)
            keep.append(cell)
            argv[i] = ctypes.addressof(cell)
        else:
            cell = np.array([arg])
            keep.append(cell)
            argv[i] = cell.ctypes.data
    lib.simt_host_launch(*(ctypes.c_uint(v) for v in spec.grid + spec.block), argv)


@pytest.mark.parametrize("name", workloads.names())
def test_host_build_of_kernel_matches_numpy_reference(name):
    wl = workloads.get(name)
    spec = wl.launch_spec("tiny", seed=3)
    host_launch(wl, spec)
    wl.check(spec)


def test_host_lexer_kernel_on_hand_written_lines():
    # Edge cases the random lines rarely produce: escapes at the line end, escaped NUL, a line
    # that fills the whole width, a number running into the width.
    from simt_fast.workloads import statemachine

    width = 16
    lines = [b'x = 3.14 + "a\\"b', b'12. a.b "open \\', b'"a\\\x00b" q', b"abcdefghijklmnop", b"# all comment",
             b"0123456789012345", b'"\\', b""]
    text = np.zeros((len(lines), width), np.uint8)
    for i, line in enumerate(lines):
        text[i, :len(line)] = np.frombuffer(line[:width], np.uint8)
    counts = np.full(len(lines) * statemachine.N_KINDS, -1, np.int32)
    spec = workloads.LaunchSpec((1, 1, 1), (32, 1, 1), [text.ravel(), np.int32(len(lines)), np.int32(width), counts])
    host_launch(workloads.get("statemachine"), spec)
    want = [statemachine.tokenize_counts(text[i].tobytes()) for i in range(len(lines))]
    assert counts.reshape(len(lines), -1).tolist() == want


# Lines over the characters the lexer cares about: quotes, escapes, NULs, digits, dots, '#'.
_LEXER_CHARS = st.sampled_from(list(b'a_Z09."\\# \t+\x00'))


@examples(60)
@given(st.lists(st.lists(_LEXER_CHARS, max_size=20), min_size=1, max_size=40))
def test_host_lexer_kernel_equals_regex_tokenizer_on_random_lines(lines):
    from simt_fast.workloads import statemachine

    width = 20
    text = np.zeros((len(lines), width), np.uint8)
    for i, line in enumerate(lines):
        text[i, :len(line)] = line
    counts = np.full(len(lines) * statemachine.N_KINDS, -1, np.int32)
    spec = workloads.LaunchSpec((1, 1, 1), (64, 1, 1), [text.ravel(), np.int32(len(lines)), np.int32(width), counts])
    host_launch(workloads.get("statemachine"), spec)
    want = [statemachine.tokenize_counts(text[i].tobytes()) for i in range(len(lines))]
    assert counts.reshape(len(lines), -1).tolist() == want


@examples(40)
@given(st.lists(st.integers(0, 3), min_size=1, max_size=60), st.lists(st.integers(0, 4), min_size=8, max_size=8 * 12),
       st.integers(1, 10))
def test_host_trie_matcher_equals_substring_reference(ref_bases, query_bases, depth):
    from simt_fast.workloads import mummer

    qlen = 8
    n_q = len(query_bases) // qlen
    reference = np.array(ref_bases, np.uint8)
    queries = np.array(query_bases[:n_q * qlen], np.uint8)
    args = [mummer.build_trie(reference, depth).ravel(), queries, np.int32(n_q), np.int32(qlen),
            np.full(n_q * qlen, -7, np.int32), np.full(2 * n_q, -7, np.int32)]
    spec = workloads.LaunchSpec((1, 1, 1), (32, 1, 1), args, outputs=(4, 5),
                                arg_names=("trie", "queries", "n_queries", "query_len", "match_len", "best"),
                                meta={"reference": reference, "depth": depth})
    wl = workloads.get("mummer")
    host_launch(wl, spec)
    wl.check(spec)


@examples(25)
@given(st.integers(4, 9), st.data())
def test_host_nqueens_kernel_equals_recursive_solver(n, data):
    from simt_fast.workloads import nqueens

    rows = data.draw(st.integers(1, n - 1))
    pre = nqueens.prefixes(n, rows)
    if not pre:
        return
    k = len(pre)
    masks = np.array([nqueens.encode(p, n) for p in pre], np.uint32)
    args = [masks.ravel(), np.int32(k), np.int32(n), np.int32(rows), np.full(k, -1, np.int32), np.zeros(1, np.uint64)]
    spec = workloads.LaunchSpec(((k + 63) // 64, 1, 1), (64, 1, 1), args, outputs=(4, 5),
                                arg_names=("prefixes", "n_prefixes", "n", "prefix_rows", "solutions", "total"),
                                meta={"prefixes": pre})
    wl = workloads.get("nqueens")
    host_launch(wl, spec)
    wl.check(spec)
    assert int(args[5][0]) == {4: 2, 5: 10, 6: 4, 7: 40, 8: 92, 9: 352}[n]


@examples(50)
@given(st.lists(st.lists(st.sampled_from(list(b"aZ_09 .\x00")), max_size=16), min_size=1, max_size=40))
def test_host_multientry_kernel_equals_regex_scanner(lines):
    from simt_fast.workloads import multientry

    width = 16
    text = np.zeros((len(lines), width), np.uint8)
    for i, line in enumerate(lines):
        text[i, :len(line)] = line
    counts = np.full(len(lines) * 4, -1, np.int32)
    spec = workloads.LaunchSpec((1, 1, 1), (64, 1, 1), [text.ravel(), np.int32(len(lines)), np.int32(width), counts])
    host_launch(workloads.get("multientry"), spec)
    assert counts.reshape(len(lines), 4).tolist() == [multientry.scan_counts(text[i].tobytes()) for i in range(len(lines))]
