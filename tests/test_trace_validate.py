"""`validate`: every invariant of DESIGN §3, each broken one reported as one sentence naming the fault."""

import h5py
import numpy as np
import pytest

from simt_fast.ir.model import OpClass
from simt_fast.trace import Trace, TraceError, validate

from hypothesis_budget import examples
from trace_helpers import tiny_trace


def reject(trace_or_path, pattern: str) -> str:
    with pytest.raises(TraceError, match=pattern) as info:
        validate(trace_or_path)
    msg = str(info.value)
    assert "\n" not in msg and msg.count(". ") == 0, f"not one sentence: {msg!r}"
    return msg


def test_hand_built_trace_is_valid(tmp_path):
    validate(tiny_trace())
    tiny_trace().save(tmp_path / "t.h5")
    validate(tmp_path / "t.h5")
    validate(str(tmp_path / "t.h5"))


# ---- file-level problems -------------------------------------------------------------------


def test_truncated_file(tmp_path):
    p = tmp_path / "t.h5"
    tiny_trace().save(p)
    data = p.read_bytes()
    for keep in (len(data) // 10, len(data) // 2, len(data) - 100):
        p.write_bytes(data[:keep])
        reject(p, r"^.*t\.h5 is truncated \(the HDF5 file ends early\); re-generate the trace$")


def test_corrupt_data_inside_a_valid_container(tmp_path):
    p = tmp_path / "t.h5"
    tiny_trace().save(p)
    with h5py.File(p) as f:  # find where /threads/path's raw chunk lives and scribble over it
        offset = f["threads/path"].id.get_chunk_info(0).byte_offset
    data = bytearray(p.read_bytes())
    data[offset : offset + 16] = b"\xff" * 16
    p.write_bytes(bytes(data))
    reject(p, r"t\.h5 is corrupt \(HDF5 reports: .+\); re-generate the trace")


def test_not_hdf5(tmp_path):
    p = tmp_path / "notes.txt"
    p.write_text("this is not a trace\n")
    reject(p, r"notes\.txt is not an HDF5 file, so it cannot be a simt-fast trace")


def test_missing_file_and_directory(tmp_path):
    reject(tmp_path / "nope.h5", r"nope\.h5 does not exist")
    reject(tmp_path, "is a directory, not a trace file")


def test_foreign_hdf5(tmp_path):
    p = tmp_path / "other.h5"
    with h5py.File(p, "w") as f:
        f["x"] = np.arange(3)
    reject(p, r"other\.h5 is not a simt-fast trace \(no schema attribute\)")


def test_newer_schema_version_is_refused(tmp_path):
    p = tmp_path / "t.h5"
    tiny_trace().save(p)
    with h5py.File(p, "a") as f:
        f.attrs["schema"] = "simt-fast/trace/2"
    msg = reject(p, r"uses trace schema version 2")
    assert "'simt-fast/trace/2'" in msg and "reads only version 1 ('simt-fast/trace/1')" in msg
    with pytest.raises(TraceError, match="version 2"):
        Trace.load(p)  # the reader refuses it too, not only validate


def test_minor_schema_versions_are_read(tmp_path):
    p = tmp_path / "t.h5"
    tiny_trace().save(p)
    with h5py.File(p, "a") as f:
        f.attrs["schema"] = "simt-fast/trace/1.3"  # additive changes keep the major version
    validate(p)
    with h5py.File(p, "a") as f:
        f.attrs["schema"] = "simt-fast/trace/one"
    reject(p, r"has malformed schema 'simt-fast/trace/one' \(expected 'simt-fast/trace/1'\)")


def test_other_schema_family_is_refused(tmp_path):
    p = tmp_path / "r.h5"
    tiny_trace().save(p)
    with h5py.File(p, "a") as f:
        f.attrs["schema"] = "simt-fast/results/1"
    reject(p, r"has schema 'simt-fast/results/1', which is not a simt-fast trace schema")


def test_file_edited_after_writing(tmp_path):
    p = tmp_path / "t.h5"
    tiny_trace().save(p)
    with h5py.File(p, "a") as f:  # thread 1 now takes the other (still valid) side of the branch
        f["threads/path"][5] = 1
    reject(p, r"t\.h5: the stored digest [0-9a-f]{12} does not match the content's [0-9a-f]{12}, "
              r"so the file was modified after it was written")
    with pytest.raises(TraceError, match="modified after it was written; re-generate it, or allow it explicitly"):
        Trace.load(p)  # the reader refuses it too: every simulation starts from Trace.load
    validate(Trace.load(p, allow_digest_mismatch=True))  # the content itself is a valid trace


def test_missing_dataset_is_named(tmp_path):
    p = tmp_path / "t.h5"
    tiny_trace().save(p)
    with h5py.File(p, "a") as f:
        del f["cfg/ipdom"]
    reject(p, r"t\.h5 is missing dataset /cfg/ipdom")


def test_file_name_is_in_path_errors(tmp_path):
    p = tmp_path / "bad.h5"
    tiny_trace(path=np.array([0, 1, 3, 4, 0, 2, 3, 4, 0, 1, 3, 4, 0, 2, 3, 3], np.uint16)).save(p)
    reject(p, r"^.*bad\.h5: thread 3 \(CTA 0, thread 3\) ends at block 3 instead of the exit block 4")


# ---- paths ---------------------------------------------------------------------------------


def test_path_that_leaves_the_cfg():
    path = np.array([0, 1, 3, 4, 0, 2, 1, 4, 0, 1, 3, 4, 0, 2, 3, 4], np.uint16)  # 2 -> 1 is no edge
    msg = reject(tiny_trace(path=path), r"thread 1 \(CTA 0, thread 1\) step 1 goes from block 2 to block 1")
    assert "('$L2' -> '$L1'), which is not a CFG edge" in msg


def test_path_that_does_not_end_at_exit():
    path_ptr = np.array([0, 4, 8, 12, 15], np.int64)
    path = np.array([0, 1, 3, 4, 0, 2, 3, 4, 0, 1, 3, 4, 0, 2, 3], np.uint16)
    reject(tiny_trace(path_ptr=path_ptr, path=path),
           r"thread 3 \(CTA 0, thread 3\) ends at block 3 instead of the exit block 4, so its path is incomplete")


def test_path_that_does_not_start_at_entry():
    path = np.array([0, 1, 3, 4, 2, 3, 4, 4, 0, 1, 3, 4, 0, 2, 3, 4], np.uint16)
    reject(tiny_trace(path=path), r"thread 1 \(CTA 0, thread 1\) starts at block 2 instead of the entry block 0")


def test_exit_in_the_middle():
    # Thread 2 "exits" then keeps running; the edge 4 -> 0 does not exist either, but the exit is named.
    path_ptr = np.array([0, 4, 8, 16, 20], np.int64)
    path = np.array([0, 1, 3, 4, 0, 2, 3, 4, 0, 1, 3, 4, 0, 1, 3, 4, 0, 2, 3, 4], np.uint16)
    reject(tiny_trace(path_ptr=path_ptr, path=path),
           r"thread 2 \(CTA 0, thread 2\) reaches the exit block 4 at step 3 but its path continues")


def test_block_id_outside_the_cfg():
    path = np.array([0, 1, 3, 4, 0, 7, 3, 4, 0, 1, 3, 4, 0, 2, 3, 4], np.uint16)
    reject(tiny_trace(path=path), r"thread 1 \(CTA 0, thread 1\) step 1 is block 7, outside the CFG's 0\.\.4")


def test_negative_block_id():
    path = np.array([0, 1, 3, 4, 0, -2, 3, 4, 0, 1, 3, 4, 0, 2, 3, 4], np.int32)
    reject(tiny_trace(path=path), r"thread 1 \(CTA 0, thread 1\) step 1 is block -2, outside the CFG's 0\.\.4")


def test_too_short_path():
    path_ptr = np.array([0, 4, 8, 12, 13], np.int64)
    reject(tiny_trace(path_ptr=path_ptr, path=np.array([0, 1, 3, 4, 0, 2, 3, 4, 0, 1, 3, 4, 0], np.uint16)),
           r"thread 3 \(CTA 0, thread 3\) has a path of 1 blocks")


def test_thread_count_must_match_launch():
    reject(tiny_trace(block=(8, 1, 1)), r"has 4 thread paths but grid \(1, 1, 1\) x block \(8, 1, 1\) launches 8 threads")


def test_cta_numbering_in_messages():
    t = tiny_trace(grid=(2, 1, 1), block=(2, 1, 1), path=np.array([0, 1, 3, 4, 0, 2, 3, 4, 0, 1, 3, 4, 0, 1, 2, 4], np.uint16))
    reject(t, r"thread 3 \(CTA 1, thread 1\) step 1 goes from block 1 to block 2")


def test_path_checks_span_chunk_boundaries(monkeypatch):
    import sys

    v = sys.modules["simt_fast.trace.validate"]  # the module (the package attribute is the function)
    monkeypatch.setattr(v, "STEP_CHUNK", 3)  # every step pair straddles some chunk boundary
    validate(tiny_trace())
    path = np.array([0, 1, 3, 4, 0, 2, 3, 4, 0, 1, 3, 4, 0, 2, 1, 4], np.uint16)
    reject(tiny_trace(path=path), r"thread 3 \(CTA 0, thread 3\) step 1 goes from block 2 to block 1")


# ---- CFG and instruction arrays --------------------------------------------------------------


@pytest.mark.parametrize(
    "change, pattern",
    [
        (dict(block_start=np.array([0, 2, 1, 4, 5, 5], np.int32)), r"'block_start' decreases at block 1 \(2 -> 1\)"),
        (dict(block_start=np.array([0, 2, 3, 4, 4, 5], np.int32)), r"virtual exit block 4 must own no instructions"),
        (dict(block_start=np.array([0, 2, 3, 5], np.int32)), r"'succ_ptr' has 6 entries but block_start describes 3 blocks \(needs 4\)"),
        (dict(succ_ptr=np.array([0, 2, 3, 2, 5, 5], np.int32)), r"'succ_ptr' decreases at block 2"),
        (dict(succ_ptr=np.array([0, 2, 3, 4, 5], np.int32)), r"'succ_ptr' has 5 entries but block_start describes 5 blocks \(needs 6\)"),
        (dict(succ_idx=np.array([1, 2, 3, 9, 4], np.int32)), r"'succ_idx' entry 3 is block 9, outside 0\.\.4"),
        (dict(succ_ptr=np.array([0, 2, 3, 3, 4, 4], np.int32), succ_idx=np.array([1, 2, 3, 4], np.int32)),
         r"block 2 has no successor, so threads reaching it could never exit"),
        (dict(ipdom=np.array([3, 3, 3, 4, 4], np.int32)), r"'ipdom' of the virtual exit block 4 must be -1 \(got 4\)"),
        (dict(ipdom=np.array([3, 7, 3, 4, -1], np.int32)), r"'ipdom' of block 1 is 7, not another block in 0\.\.4"),
        (dict(ipdom=np.array([3, 3, 2, 4, -1], np.int32)), r"'ipdom' of block 2 is 2"),
        (dict(ipdom=np.array([3, 2, 3, 4, -1], np.int32)),
         r"'ipdom' of block 1 is 2 but the CFG's immediate post-dominator of block 1 is 3"),
        (dict(ipdom=np.array([3, 3, 3, 4], np.int32)), r"'ipdom' has 4 entries but block_start describes 5 blocks"),
        (dict(label=["", "a"]), r"'label' has 2 entries but block_start describes 5 blocks"),
        (dict(has_barrier=np.zeros(5, np.int8)), r"'has_barrier' must be bool\[5\]"),
        (dict(has_barrier=np.zeros(3, np.bool_)), r"'has_barrier' has 3 entries but block_start describes 5 blocks"),
        (dict(op_class=np.array([0, 6, 2, 0], np.uint8)), r"'block_start' ends at 5 but there are 4 values"),
        (dict(op_class=np.array([0, 6, 2, 0, 42], np.uint8)), r"instruction 4 has op_class 42, not one of 0\.\.9"),
        (dict(dst_reg=np.array([0, -1, -2, 2, -1], np.int16)), r"instruction 2 has a 'dst_reg' outside -1\.\.32767"),
        (dict(src_reg=np.zeros((5, 2), np.int16)), r"'src_reg' must have shape \(5, 3\)"),
        (dict(text=["ret;"]), r"'text' has 1 entries for 5 instructions"),
        (dict(path_ptr=np.array([0, 4, 8, 12, 20], np.int64)), r"'path_ptr' ends at 20 but there are 16 values"),
        (dict(path_ptr=np.array([0, 4, 2, 12, 16], np.int64)), r"'path_ptr' decreases at thread 1"),
        (dict(path=np.arange(16, dtype=np.float32)), r"field 'path' has dtype float32, expected an integer type"),
        (dict(grid=(1, 0, 1)), r"header 'grid' must be 3 positive integers"),
        (dict(block=4), r"header 'block' must be 3 positive integers \(got \(4,\)\)"),
        (dict(kernel=""), r"header 'kernel' must be a non-empty string"),
        (dict(mem_ptr=np.array([0, 1, 1, 1, 3], np.int64), mem_addr=np.array([4, 8], np.uint64)),
         r"'mem_ptr' ends at 3 but there are 2 values"),
        (dict(mem_ptr=np.array([0, 1, 1, 1, 2], np.int64)), r"'/mem' needs both mem_ptr and mem_addr"),
    ],
)
def test_broken_arrays_are_named(change, pattern):
    msg = reject(tiny_trace(**change), pattern)
    assert msg.startswith(f"trace of kernel '{change.get('kernel', 'ifelse')}': ")


def test_barrier_must_end_its_block():
    op = np.array([OpClass.BARRIER, 6, 2, 0, 8], np.uint8)
    reject(tiny_trace(op_class=op), r"barrier instruction 0 is not the last instruction of block 0; barriers must end their block")


def test_has_barrier_must_match_the_instructions():
    hb = np.array([False, True, False, False, False])
    reject(tiny_trace(has_barrier=hb), r"'has_barrier' of block 1 is True but the block does not end with a barrier instruction")
    op = np.array([0, 6, OpClass.BARRIER, 0, 8], np.uint8)
    reject(tiny_trace(op_class=op), r"'has_barrier' of block 1 is False but the block ends with a barrier instruction")
    validate(tiny_trace(op_class=op, has_barrier=hb))


# ---- the parser's flat arrays satisfy the trace contract -------------------------------------


def test_every_shipped_kernel_cfg_is_a_valid_trace_cfg():
    """flatten() output of every shipped PTX kernel, with one shortest entry->exit path, validates."""
    from pathlib import Path

    from simt_fast.ir import parse_ptx
    from simt_fast.ir.cfg import build_cfg
    from simt_fast.ir.flat import flatten
    from simt_fast.trace.io import CFG_FIELDS, INSTR_FIELDS
    from simt_fast.trace.synth import _distance_to_exit

    files = sorted((Path(__file__).parents[1] / "data" / "ptx").glob("*/*.ptx"))
    assert files, "no shipped PTX found"
    checked = 0
    for f in files:
        for kernel in parse_ptx(f).kernels:
            flat = flatten(kernel, build_cfg(kernel))
            n = len(flat["block_start"]) - 1
            succ = [list(flat["succ_idx"][flat["succ_ptr"][b] : flat["succ_ptr"][b + 1]]) for b in range(n)]
            dist = _distance_to_exit(n, succ)
            path = [0]
            while path[-1] != n - 1:
                path.append(next(s for s in succ[path[-1]] if dist[s] == dist[path[-1]] - 1))
            arrays = {k: flat[k] for k in (*CFG_FIELDS, *INSTR_FIELDS, "label", "text")}
            validate(Trace(kernel=kernel.name, grid=(1, 1, 1), block=(1, 1, 1), path_ptr=np.array([0, len(path)]),
                           path=np.array(path, np.uint32), **arrays), name=f"{f.name}:{kernel.name}")
            checked += 1
    assert checked >= 20


# ---- property: any single corrupted step of a valid trace is found and located ---------------


def _first_bad_step_reference(trace):
    """Plain-Python reference for the path checks: (thread, step, kind) of the first violation."""
    edges = {(b, int(s)) for b in range(trace.n_blocks) for s in trace.succ_idx[trace.succ_ptr[b] : trace.succ_ptr[b + 1]]}
    paths = [[int(x) for x in trace.thread_path(t)] for t in range(trace.n_threads)]
    for t, p in enumerate(paths):  # validate reports bad starts first, then bad ends, then steps
        if p[0] != 0:
            return t, 0, "start"
    for t, p in enumerate(paths):
        if p[-1] != trace.exit:
            return t, len(p) - 1, "end"
    for t in range(trace.n_threads):
        p = [int(x) for x in trace.thread_path(t)]
        for s, (a, b) in enumerate(zip(p, p[1:])):
            if a == trace.exit:
                return t, s, "exit"
            if (a, b) not in edges:
                return t, s, "edge"
    return None


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from simt_fast.trace.synth import traces  # noqa: E402


@examples(100)
@given(trace=traces(max_blocks=16, max_threads=32), data=st.data())
def test_corrupted_step_is_located(trace, data):
    i = data.draw(st.integers(0, len(trace.path) - 1), label="step index")
    new = data.draw(st.integers(0, trace.n_blocks - 1).filter(lambda b: b != trace.path[i]), label="new block")
    path = trace.path.copy()
    path[i] = new
    bad = Trace(**{**trace.__dict__, "path": path})
    expected = _first_bad_step_reference(bad)
    if expected is None:  # the replacement happened to form another valid path
        validate(bad)
        return
    t, s, kind = expected
    phrase = {
        "start": f"thread {t} \\(.*\\) starts at block",
        "end": f"thread {t} \\(.*\\) ends at block",
        "exit": f"thread {t} \\(.*\\) reaches the exit block {trace.exit} at step {s} but its path continues",
        "edge": f"thread {t} \\(.*\\) step {s} goes from block",
    }[kind]
    with pytest.raises(TraceError, match=phrase):
        validate(bad)


@pytest.mark.parametrize("workload", ["earlyexit", "bfs"])
def test_emulated_traces_validate_streamed_and_in_memory(tmp_path, workload):
    """The emulator's two trace routes (TraceWriter streaming, in-memory Trace) give one valid content."""
    from simt_fast import emu, workloads
    from simt_fast.trace.io import file_digest

    wl = workloads.get(workload)
    spec = wl.launch_spec("tiny", seed=0)
    out = tmp_path / f"{workload}.h5"
    emu.launch(wl.ptx_path, wl.kernel, spec.grid, spec.block, spec.args, spec.shared_bytes, trace=True, trace_path=out)
    validate(out)
    spec = wl.launch_spec("tiny", seed=0)
    in_memory = emu.launch(wl.ptx_path, wl.kernel, spec.grid, spec.block, spec.args, spec.shared_bytes, trace=True).trace
    validate(in_memory)
    assert in_memory.digest() == file_digest(out)


def test_docs_foreign_writer_snippet_validates(tmp_path, monkeypatch):
    """The 'Writing a trace with another tool' example of docs/trace.md is complete and valid."""
    import re
    from pathlib import Path

    doc = (Path(__file__).parents[1] / "docs" / "trace.md").read_text()
    section = doc.split("### Writing a trace with another tool", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "docs/trace.md", "exec"), {})
    t = Trace.load(tmp_path / "mine.h5")
    validate(tmp_path / "mine.h5")
    assert (t.n_threads, t.n_blocks, t.n_instrs) == (2, 5, 5) and "digest" not in t.attrs


# ---- /mem per instruction (DESIGN §3) and the per-instruction memory facts ----------------------

from simt_fast.trace.model import MEM_FORMAT, NO_ACCESS  # noqa: E402
from simt_fast.trace.validate import notes  # noqa: E402

# tiny_trace: threads 0 and 2 run block 1 (the ld.global, instruction 2), threads 1 and 3 do not
MEM_FACTS = dict(mem_bytes=np.array([0, 0, 4, 0, 0], np.uint8), mem_kind=np.array([0, 0, 1, 0, 0], np.uint8))


def _with_mem(**kw):
    args = dict(mem_ptr=np.array([0, 1, 1, 2, 2], np.int64), mem_addr=np.array([1 << 40, NO_ACCESS], np.uint64),
                mem_format=MEM_FORMAT, **MEM_FACTS)
    args.update(kw)
    return tiny_trace(**args)


def test_per_instruction_mem_is_valid_and_round_trips(tmp_path):
    validate(_with_mem())
    assert notes(_with_mem()) == []
    _with_mem().save(tmp_path / "m.h5")
    validate(tmp_path / "m.h5")
    assert Trace.load(tmp_path / "m.h5").has_mem


def test_mem_entries_must_match_the_memory_instructions_on_the_path():
    reject(_with_mem(mem_ptr=np.array([0, 1, 2, 3, 3], np.int64), mem_addr=np.zeros(3, np.uint64)),
           r"thread 1 \(CTA 0, thread 1\) has 1 /mem entries but its path holds 0 memory instructions")
    reject(_with_mem(mem_ptr=np.array([0, 0, 0, 1, 1], np.int64), mem_addr=np.zeros(1, np.uint64)),
           r"thread 0 \(CTA 0, thread 0\) has 0 /mem entries but its path holds 1 memory instructions")


def test_unknown_mem_format_is_refused():
    reject(_with_mem(mem_format="per-warp/9"), r"'/mem' has format 'per-warp/9'; this simt-fast reads 'per-instruction/1'")


def test_untagged_mem_is_the_older_layout_with_a_note():
    old = tiny_trace(mem_ptr=np.array([0, 1, 1, 1, 1], np.int64), mem_addr=np.array([64], np.uint64))
    validate(old)  # any count per thread: it cannot be aligned with instructions
    assert [n for n in notes(old) if "older global/shared-only layout" in n]
    assert [n for n in notes(_with_mem(mem_bytes=None, mem_kind=None)) if "taken as 4-byte loads" in n]
    assert notes(tiny_trace()) == []


@pytest.mark.parametrize(
    "change, pattern",
    [
        (dict(mem_bytes=np.zeros(4, np.uint8)), r"'mem_bytes' has 4 entries but block_start covers 5 instructions"),
        (dict(mem_kind=np.array([0, 0, 7, 0, 0], np.uint8)), r"instruction 2 has mem_kind 7, not one of 0\.\.3"),
        (dict(mem_bytes=np.array([0, 0, 4, 4, 0], np.uint8), mem_kind=np.array([0, 0, 1, 2, 0], np.uint8)),
         r"instruction 3 is not a memory instruction \(op_class 0\) but has mem_bytes 4 and mem_kind 2"),
        (dict(mem_kind=np.array([0, 0, 0, 0, 0], np.uint8)), r"instruction 2 has mem_bytes 4 with mem_kind 0"),
        (dict(mem_kind=None), r"'/instr' has only one of mem_bytes and mem_kind"),
    ],
)
def test_broken_memory_facts_are_named(change, pattern):
    reject(_with_mem(**change), pattern)
