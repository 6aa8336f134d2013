"""Trace files: save/load round trip, streaming writer, atomicity, digest (DESIGN §3)."""

import h5py
import numpy as np
import pytest
from hypothesis import HealthCheck, given

from simt_fast.trace import SCHEMA, Trace, TraceError, TraceWriter, synthetic
from simt_fast.trace.io import CFG_FIELDS, INSTR_FIELDS, file_digest, path_dtype, read_header
from simt_fast.trace.synth import traces

from hypothesis_budget import examples
from trace_helpers import tiny_trace

ARRAYS = (*CFG_FIELDS, *INSTR_FIELDS, "path_ptr", "path")


def assert_same(a: Trace, b: Trace):
    for k in ARRAYS:
        x, y = getattr(a, k), getattr(b, k)
        assert np.array_equal(x, y), k
    assert a.path.dtype == b.path.dtype == path_dtype(a.n_blocks)
    assert (a.kernel, tuple(a.grid), tuple(a.block), a.source_sha256) == (b.kernel, tuple(b.grid), tuple(b.block), b.source_sha256)
    assert a.label == b.label and a.text == b.text
    assert a.digest() == b.digest()


def test_round_trip_hand_built(tmp_path):
    t = tiny_trace(attrs={"workload": "ifelse", "size": 4, "args": [1, 2, 3]})
    t.save(tmp_path / "t.h5")
    u = Trace.load(tmp_path / "t.h5")
    assert_same(t, u)
    assert u.attrs == {"workload": "ifelse", "size": 4, "args": [1, 2, 3]}
    for k, dt in {**CFG_FIELDS, **INSTR_FIELDS}.items():
        assert getattr(u, k).dtype == dt, k


def test_file_layout_matches_design(tmp_path):
    tiny_trace().save(tmp_path / "t.h5")
    with h5py.File(tmp_path / "t.h5") as f:
        assert f.attrs["schema"] == SCHEMA
        assert list(f.attrs["grid"]) == [1, 1, 1] and list(f.attrs["block"]) == [4, 1, 1]
        for key in ("kernel", "source_sha256", "simt_fast_version", "created"):
            assert key in f.attrs
        assert set(f["cfg"]) == {"block_start", "succ_ptr", "succ_idx", "ipdom", "label", "has_barrier"}
        assert set(f["instr"]) == {"op_class", "dst_reg", "src_reg", "text"}
        path = f["threads/path"]
        assert path.dtype == np.uint16 and path.chunks is not None and path.compression == "gzip"
        assert f["threads/path_ptr"].dtype == np.int64
        assert f["cfg/label"].asstr()[1] == "$L1"
        assert "mem" not in f


def test_mem_group_round_trip(tmp_path):
    t = tiny_trace(mem_ptr=np.array([0, 1, 1, 2, 2], np.int64), mem_addr=np.array([64, 1 << 40], np.uint64))
    t.save(tmp_path / "m.h5")
    u = Trace.load(tmp_path / "m.h5")
    assert np.array_equal(u.mem_ptr, t.mem_ptr) and np.array_equal(u.mem_addr, t.mem_addr)
    assert u.mem_addr.dtype == np.uint64
    assert u.digest() == t.digest() != tiny_trace().digest()


@examples(40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(trace=traces())
def test_round_trip_synthetic(tmp_path, trace):
    p = tmp_path / "s.h5"
    trace.save(p)
    assert_same(trace, Trace.load(p))


def test_path_dtype_widens_past_uint16(tmp_path):
    n_blocks = 70_000  # block ids above 65535 need uint32 (DESIGN §3)
    block_start = np.zeros(n_blocks + 1, np.int32)
    block_start[1:] = 1
    succ_ptr = np.arange(n_blocks + 1, dtype=np.int32)
    succ_ptr[-1] = n_blocks - 1
    succ_idx = np.arange(1, n_blocks, dtype=np.int32)
    ipdom = np.append(np.arange(1, n_blocks, dtype=np.int32), -1)
    t = Trace(kernel="chain", grid=(1, 1, 1), block=(1, 1, 1), block_start=block_start, succ_ptr=succ_ptr,
              succ_idx=succ_idx, ipdom=ipdom, label=[""] * n_blocks, has_barrier=np.zeros(n_blocks, np.bool_),
              op_class=np.array([8], np.uint8), dst_reg=np.array([-1], np.int16),
              src_reg=np.full((1, 3), -1, np.int16), text=["ret;"],
              path_ptr=np.array([0, 2], np.int64), path=np.array([0, n_blocks - 1], np.uint32))
    t.save(tmp_path / "w.h5")
    u = Trace.load(tmp_path / "w.h5")
    assert u.path.dtype == np.uint32 and u.path[-1] == n_blocks - 1


@pytest.mark.parametrize("flush_items", [7, 1 << 20])  # flush mid-batch-stream, or only at close
def test_streaming_writer_equals_one_shot(tmp_path, monkeypatch, flush_items):
    import sys

    monkeypatch.setattr(sys.modules["simt_fast.trace.io"], "FLUSH_ITEMS", flush_items)
    t = synthetic(20, 6 * 32, 7, block=(32, 1, 1))
    t.save(tmp_path / "one.h5")
    cfg = {k: getattr(t, k) for k in (*CFG_FIELDS, *INSTR_FIELDS, "label", "text")}
    with TraceWriter(tmp_path / "many.h5", kernel=t.kernel, grid=t.grid, block=t.block, cfg=cfg, attrs=t.attrs) as w:
        for cta in range(t.n_ctas):  # one CTA per batch, local CSR offsets as the emulator produces them
            lo, hi = cta * 32, (cta + 1) * 32
            ptr = t.path_ptr[lo : hi + 1]
            batch = t.path[ptr[0] : ptr[-1]].copy()
            w.append(ptr - ptr[0], batch)
            batch[:] = 0  # the emulator reuses its buffers: the writer must not keep references
        w.append(np.zeros(1, np.int64), np.zeros(0, np.uint16))  # an empty batch is harmless
    one, many = Trace.load(tmp_path / "one.h5"), Trace.load(tmp_path / "many.h5")
    assert_same(one, many)
    assert one.digest() == many.digest() == t.digest()


def test_failed_launch_leaves_no_file(tmp_path):
    t = tiny_trace()
    cfg = {k: getattr(t, k) for k in (*CFG_FIELDS, *INSTR_FIELDS, "label", "text")}
    target = tmp_path / "t.h5"
    with pytest.raises(RuntimeError, match="emulator blew up"):
        with TraceWriter(target, kernel="k", grid=(1, 1, 1), block=(4, 1, 1), cfg=cfg) as w:
            w.append([0, 4], [0, 1, 3, 4])
            raise RuntimeError("emulator blew up")
    assert list(tmp_path.iterdir()) == []
    # An incomplete launch (fewer threads than grid x block) is refused at close, also without a file.
    with pytest.raises(TraceError, match="wrote 1 thread paths but grid .* has 4 threads"):
        with TraceWriter(target, kernel="k", grid=(1, 1, 1), block=(4, 1, 1), cfg=cfg) as w:
            w.append([0, 4], [0, 1, 3, 4])
    assert list(tmp_path.iterdir()) == []


def test_dropped_writer_leaves_no_file(tmp_path):
    import gc

    t = tiny_trace()
    cfg = {k: getattr(t, k) for k in (*CFG_FIELDS, *INSTR_FIELDS, "label", "text")}
    w = TraceWriter(tmp_path / "t.h5", kernel="k", grid=(1, 1, 1), block=(4, 1, 1), cfg=cfg)
    w.append([0, 4], [0, 1, 3, 4])
    assert len(list(tmp_path.iterdir())) == 1  # the temporary file, hidden next to the target
    del w
    gc.collect()
    assert list(tmp_path.iterdir()) == []


def test_existing_file_survives_a_failed_rewrite(tmp_path):
    t = tiny_trace()
    t.save(tmp_path / "t.h5")
    before = (tmp_path / "t.h5").read_bytes()
    cfg = {k: getattr(t, k) for k in (*CFG_FIELDS, *INSTR_FIELDS, "label", "text")}
    with pytest.raises(TraceError):
        with TraceWriter(tmp_path / "t.h5", kernel="k", grid=(1, 1, 1), block=(4, 1, 1), cfg=cfg) as w:
            w.append([0, 2], [0, 9])  # block 9 does not exist
    assert (tmp_path / "t.h5").read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.h5"]


def test_writer_rejects_bad_batches(tmp_path):
    t = tiny_trace()
    cfg = {k: getattr(t, k) for k in (*CFG_FIELDS, *INSTR_FIELDS, "label", "text")}
    w = TraceWriter(tmp_path / "t.h5", kernel="k", grid=(1, 1, 1), block=(4, 1, 1), cfg=cfg)
    with pytest.raises(TraceError, match="starting at 0"):
        w.append([1, 4], [0, 1, 3, 4])
    with pytest.raises(TraceError, match="end at len"):
        w.append([0, 3], [0, 1, 3, 4])
    with pytest.raises(TraceError, match="mem_ptr and mem_addr"):
        TraceWriter(tmp_path / "u.h5", kernel="k", grid=(1, 1, 1), block=(1, 1, 1), cfg=cfg, with_mem=True).append(
            [0, 4], [0, 1, 3, 4])
    w.abort()
    with pytest.raises(TraceError, match="missing ipdom"):
        TraceWriter(tmp_path / "v.h5", kernel="k", grid=(1, 1, 1), block=(1, 1, 1),
                    cfg={k: v for k, v in cfg.items() if k != "ipdom"})


def test_digest_is_content_only(tmp_path):
    t = tiny_trace()
    t.save(tmp_path / "a.h5")
    t.save(tmp_path / "b.h5")  # another file, another `created` stamp
    a, b = Trace.load(tmp_path / "a.h5"), Trace.load(tmp_path / "b.h5")
    assert a.digest() == b.digest() == t.digest()
    assert len(t.digest()) == 64
    assert tiny_trace(path=t.path.astype(np.uint32)).digest() == t.digest()  # dtype width is not content
    changed = tiny_trace(path=np.array([0, 2, 3, 4, 0, 2, 3, 4, 0, 1, 3, 4, 0, 2, 3, 4], np.uint16))
    assert changed.digest() != t.digest()
    assert tiny_trace(kernel="other").digest() != t.digest()
    assert tiny_trace(grid=(4, 1, 1), block=(1, 1, 1)).digest() != t.digest()


def test_stored_digest_matches_content(tmp_path):
    t = synthetic(20, 64, 3, with_mem=True)
    t.save(tmp_path / "s.h5")
    assert read_header(tmp_path / "s.h5")["digest"] == t.digest() == file_digest(tmp_path / "s.h5")
    assert "digest" not in Trace.load(tmp_path / "s.h5").attrs  # a header attribute, not free-form
    with h5py.File(tmp_path / "s.h5", "a") as f:  # a foreign writer without the attribute
        del f.attrs["digest"]
    assert file_digest(tmp_path / "s.h5") == t.digest()


def test_read_header_without_paths(tmp_path):
    tiny_trace().save(tmp_path / "t.h5")
    h = read_header(tmp_path / "t.h5")
    assert h["kernel"] == "ifelse" and h["n_threads"] == 4 and h["n_steps"] == 16 and h["n_blocks"] == 5


def test_committed_v1_file_stays_readable():
    """A schema-1 file written by simt-fast 0.1.0: future readers must load it to the same content.

    The digest is pinned because sweep results identify traces by it; changing the digest
    recipe silently orphans every stored result, so it must be a deliberate, visible change.
    """
    from pathlib import Path

    from simt_fast.trace import validate

    p = Path(__file__).parent / "data" / "trace" / "ifelse_v1.h5"
    t = Trace.load(p)
    validate(p)
    assert_same(t, tiny_trace())
    assert t.attrs == {"workload": "ifelse"}
    assert file_digest(p) == read_header(p)["digest"] == t.digest()
    assert t.digest() == "fe5cde89487c1c7267f931336fcd3f61b0ce7ae47d680cf342a50c3a546fa2a5"


# ---- /mem on disk: rows of 32 threads, or addresses (docs/trace.md, *Addresses on disk*) ----------
def _mem_trace(n_threads=200, seed=4):
    # 200 threads: the last group of 32 is partial; converged, so rows are the smaller encoding (0.38
    # words per entry, 10 rows not affine)
    return synthetic(12, n_threads, seed, block=(40, 1, 1), divergence=0.0, with_mem=True)


@pytest.mark.parametrize("divergence", [0.0, 0.3, 0.9])
@pytest.mark.parametrize("seed", [1, 2])
def test_mem_rows_encode_exactly(divergence, seed):
    from simt_fast.trace import mem_rows

    t = synthetic(12, 200, seed, block=(40, 1, 1), divergence=divergence, with_mem=True)
    t.mem_addr[::7] = 1 << 63 | 12345  # addresses far apart (int64 wrap-around) break affine rows too
    for shift in (mem_rows.GROUP_SHIFT, 0):
        _, rows, full = mem_rows.encode(t.mem_ptr, mem_rows.as_int64(t.mem_addr), shift)
        assert np.array_equal(mem_rows.decode(t.mem_ptr, rows, full, shift), t.mem_addr)


def _write_batches(t, path, sizes):
    cfg = {k: getattr(t, k) for k in (*CFG_FIELDS, *INSTR_FIELDS, "label", "text", "mem_bytes", "mem_kind")}
    with TraceWriter(path, kernel=t.kernel, grid=t.grid, block=t.block, cfg=cfg, attrs=t.attrs, with_mem=True,
                     mem_format=t.mem_format) as w:
        lo = 0
        for size in sizes:
            hi = min(lo + size, t.n_threads)
            ptr, mptr = t.path_ptr[lo:hi + 1], t.mem_ptr[lo:hi + 1]
            addr = t.mem_addr[mptr[0]:mptr[-1]].copy()
            w.append(ptr - ptr[0], t.path[ptr[0]:ptr[-1]], mptr - mptr[0], addr)
            addr[:] = 0  # the emulator reuses its buffers
            lo = hi
        assert lo == t.n_threads


@pytest.mark.parametrize("sizes", [[200], [40] * 5, [7, 45, 3, 31, 33, 81], [1] * 200])
def test_mem_rows_on_disk_decode_exactly(tmp_path, monkeypatch, sizes):
    import sys

    from simt_fast.trace import mem_rows

    monkeypatch.setattr(sys.modules["simt_fast.trace.io"], "FLUSH_ITEMS", 50)  # decide early, flush often
    t = _mem_trace()
    _write_batches(t, tmp_path / "b.h5", sizes)
    with h5py.File(tmp_path / "b.h5") as f:
        assert f["mem"].attrs["encoding"] == "rows/1" and "mem_addr" not in f["mem"]
        stored = f["mem/rows"][()], f["mem/full"][()]
    _, rows, full = mem_rows.encode(t.mem_ptr, mem_rows.as_int64(t.mem_addr))
    assert np.array_equal(stored[0], rows)  # batch by batch, the rows of the whole trace
    assert np.array_equal(stored[1], full[: len(stored[1])])
    u = Trace.load(tmp_path / "b.h5")
    assert u.stored_rows() is not None and u.n_mem_entries == len(t.mem_addr)
    assert u.digest() == t.digest() == file_digest(tmp_path / "b.h5")  # without decoding
    assert u.stored_rows() is not None
    assert np.array_equal(u.mem_addr, t.mem_addr) and u.mem_addr.dtype == np.uint64
    assert u.stored_rows() is None  # read once: the array is what counts from now on
    v = Trace.load(tmp_path / "b.h5")
    v.mem_ptr = v.mem_ptr.copy()  # a new mem_ptr: the rows are not its layout any more
    assert v.stored_rows() is None and np.array_equal(v.mem_addr, t.mem_addr)


def test_sparse_rows_are_stored_as_addresses(tmp_path):
    from simt_fast.trace import mem_rows

    t = _mem_trace(80)
    rng = np.random.default_rng(1)
    counts = np.zeros(t.n_threads, np.int64)
    counts[:3] = counts[32:35] = 50  # three threads per group with scattered addresses, the others none
    t.mem_ptr = np.concatenate(([0], np.cumsum(counts)))
    t.mem_addr = rng.integers(0, 1 << 40, int(counts.sum())).astype(np.uint64)
    _, rows, full = mem_rows.encode(t.mem_ptr, mem_rows.as_int64(t.mem_addr))
    assert len(rows) + len(full) > 10 * len(t.mem_addr)  # each row keeps 32 lanes for 3 addresses
    t.save(tmp_path / "s.h5")
    with h5py.File(tmp_path / "s.h5") as f:
        assert f["mem"].attrs["encoding"] == "addresses" and "rows" not in f["mem"]
    u = Trace.load(tmp_path / "s.h5")
    assert u.stored_rows() is None and np.array_equal(u.mem_addr, t.mem_addr) and u.digest() == t.digest()


def test_simulating_stored_rows_equals_the_addresses(tmp_path):
    from simt_fast.sim import simulate
    from simt_fast.sim.config import load_config

    t = _mem_trace()
    t.save(tmp_path / "r.h5")
    u = Trace.load(tmp_path / "r.h5")
    for mech in ("sps", "dwf"):
        config = load_config("fermi", {"mechanism": mech})
        assert simulate(u, config).to_dict() == simulate(t, config).to_dict()
    assert u.stored_rows() is not None  # the run read the rows, never the addresses


def test_damaged_or_edited_rows_are_refused(tmp_path):
    import hashlib

    t = _mem_trace()
    t.save(tmp_path / "d.h5")
    with h5py.File(tmp_path / "d.h5", "r+") as f:
        rows = f["mem/rows"][()]
        rows[0] += 4
        f["mem/rows"][...] = rows
    with pytest.raises(TraceError, match=r"d\.h5: /mem/rows differs from what was written"):
        Trace.load(tmp_path / "d.h5")
    with h5py.File(tmp_path / "d.h5", "r+") as f:  # an edit that also rewrites the rows' checksum
        f["mem"].attrs["rows_sha256"] = hashlib.sha256(rows).hexdigest()
    u = Trace.load(tmp_path / "d.h5")
    with pytest.raises(TraceError, match=r"d\.h5: /mem decodes to addresses other than the ones written"):
        u.mem_addr


def test_digest_thread_errors_reach_the_caller():
    from simt_fast.trace.io import _concurrently

    done = []

    def fail():
        raise ValueError("hash failed")

    with pytest.raises(ValueError, match="hash failed"):
        _concurrently(fail, lambda: done.append(1))
    assert done == [1]  # the foreground work ran to its end first
