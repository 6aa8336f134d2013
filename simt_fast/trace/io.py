"""HDF5 trace files (docs/DESIGN.md §3, docs/trace.md): one writer, one reader, one digest.

Layout (``schema = "simt-fast/trace/1"``)::

    /                attrs: schema, kernel, grid[3], block[3], source_sha256, simt_fast_version,
                     created (+ any free-form Trace.attrs)
    /cfg/            block_start, succ_ptr, succ_idx, ipdom, label, has_barrier
    /instr/          op_class, dst_reg, src_reg, text (+ optional mem_bytes, mem_kind)
    /threads/        path_ptr (int64, CSR), path (uint16|uint32, chunked + compressed)
    /mem/ (optional) mem_ptr (int64, CSR), mem_addr (uint64, chunked + compressed); attr format

Every file is produced by :class:`TraceWriter`, which streams thread paths CTA batch by CTA
batch into resizable datasets of a temporary file and renames it into place on ``close()``:
a launch that fails half way leaves no trace file behind, and a big launch never sits in
memory twice. :func:`save` is the one-batch special case, so one-shot and streamed files are
byte-for-byte the same layout.
"""

from __future__ import annotations

import datetime as _dt
import errno
import hashlib
import os
import re
import secrets
import threading
from pathlib import Path
from types import SimpleNamespace
from typing import Mapping, Optional

import h5py
import numpy as np

from .. import _storage
from . import mem_rows
from .schema import MEM_FORMAT, SCHEMA, SCHEMA_MAJOR, TraceError

# Root attributes the format owns; anything else on the root is a free-form Trace.attrs entry.
HEADER_ATTRS = ("schema", "kernel", "grid", "block", "source_sha256", "simt_fast_version", "created", "digest")

# (group, dataset) -> canonical dtype on disk and in a loaded Trace.
CFG_FIELDS = {
    "block_start": np.int32,
    "succ_ptr": np.int32,
    "succ_idx": np.int32,
    "ipdom": np.int32,
    "has_barrier": np.bool_,
}
INSTR_FIELDS = {
    "op_class": np.uint8,
    "dst_reg": np.int16,
    "src_reg": np.int16,
}
STRING_FIELDS = {"label": "cfg", "text": "instr"}
# optional per-instruction memory facts (absent in traces written before they existed)
MEM_INSTR_FIELDS = {
    "mem_bytes": np.uint8,
    "mem_kind": np.uint8,
}

# Paths are the bulk of a file: 64 Ki block ids per chunk, shuffle + gzip (readable by any
# HDF5 tool, unlike lzf) at a level that keeps the emulator's write cost small.
PATH_CHUNK = 1 << 16
PTR_CHUNK = 1 << 14
MEM_ROWS = "rows/1"  # /mem's encodings (attr `encoding`): rows of 32 threads (`trace.mem_rows`) ...
MEM_ADDRESSES = "addresses"  # ... or one uint64 per entry (`mem_addr`; also files without the attribute)
FLUSH_ITEMS = 1 << 20  # values staged in memory before TraceWriter writes them out
# Disk reserved beyond the staged bytes before a flush: the last, partly filled chunk of each
# dataset is rewritten (up to 1 MiB for the four of them), plus HDF5's own metadata.
FLUSH_RESERVE = 2 << 20
COMPRESSION = dict(compression="gzip", compression_opts=4, shuffle=True)


def path_dtype(n_blocks: int) -> np.dtype:
    """Block-id dtype of ``/threads/path``: uint16 while every id fits, else uint32 (DESIGN §3)."""
    return np.dtype(np.uint16) if n_blocks <= 0xFFFF else np.dtype(np.uint32)


def _utc_now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()


def _version() -> str:
    from .. import __version__

    return __version__


def _as_int_array(name: str, value, dtype, ndim: int = 1) -> np.ndarray:
    """Convert a header array to its canonical dtype, refusing values that would not fit."""
    arr = np.asarray(value)
    if arr.ndim != ndim:
        raise TraceError(f"trace field '{name}' must be {ndim}-D (got shape {arr.shape})")
    if arr.size and dtype is not np.bool_:
        if arr.dtype.kind not in "iub":
            raise TraceError(f"trace field '{name}' must hold integers (got dtype {arr.dtype})")
        info = np.iinfo(dtype)
        lo, hi = int(arr.min()), int(arr.max())
        if lo < info.min or hi > info.max:
            raise TraceError(
                f"trace field '{name}' has values {lo}..{hi} that do not fit its on-disk type {np.dtype(dtype).name}"
            )
    return np.ascontiguousarray(arr, dtype=dtype)


def _triple(name: str, value) -> tuple:
    t = tuple(int(v) for v in np.asarray(value).ravel())
    if len(t) != 3:
        raise TraceError(f"trace header '{name}' must have 3 dimensions (got {t})")
    return t


def _attr_value(value):
    """Free-form attrs as HDF5 can hold them: scalars, strings, numeric arrays."""
    if isinstance(value, (str, bytes, int, float, bool, np.generic, np.ndarray)):
        return value
    if isinstance(value, (list, tuple)):
        return np.asarray(value)
    raise TraceError(f"trace attribute value {value!r} cannot be stored in HDF5 (use str, numbers or arrays)")


def _from_attr(value):
    if isinstance(value, bytes):
        return value.decode()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    return value


# ---------------------------------------------------------------------------------------------
# Writing
# ---------------------------------------------------------------------------------------------


class TraceWriter:
    """Stream a trace to ``path`` CTA batch by CTA batch; nothing is written unless it completes.

    ``cfg`` is a mapping with the flat CFG/instruction arrays (``block_start``, ``succ_ptr``,
    ``succ_idx``, ``ipdom``, ``label``, ``has_barrier``, ``op_class``, ``dst_reg``, ``src_reg``,
    ``text``) — exactly what ``simt_fast.ir.flat.flatten`` returns (extra keys are ignored).
    Use as a context manager: leaving the block normally calls :meth:`close`, an exception
    calls :meth:`abort`, which deletes the temporary file::

        with TraceWriter(out, kernel="k", grid=grid, block=block, cfg=flat) as w:
            for cta_batch in ...:
                w.append(local_path_ptr, path)   # local_path_ptr starts at 0
    """

    def __init__(
        self,
        path,
        *,
        kernel: str,
        grid,
        block,
        cfg: Mapping,
        source_sha256: str = "",
        attrs: Optional[Mapping] = None,
        with_mem: bool = False,
        mem_format: str = "",
        gzip_level: int = COMPRESSION["compression_opts"],
    ):
        self.path = Path(path)
        self._compression = {**COMPRESSION, "compression_opts": int(gzip_level)}
        self.mem_format = str(mem_format or "")
        self.kernel = str(kernel)
        self.grid = _triple("grid", grid)
        self.block = _triple("block", block)
        self.expected_threads = int(np.prod(self.grid)) * int(np.prod(self.block))
        self.with_mem = bool(with_mem)
        missing = [k for k in (*CFG_FIELDS, *INSTR_FIELDS, *STRING_FIELDS) if k not in cfg]
        if missing:
            raise TraceError(f"TraceWriter cfg is missing {', '.join(missing)}")
        arrays = {k: _as_int_array(k, cfg[k], dt) for k, dt in CFG_FIELDS.items()}
        arrays["op_class"] = _as_int_array("op_class", cfg["op_class"], np.uint8)
        arrays["dst_reg"] = _as_int_array("dst_reg", cfg["dst_reg"], np.int16)
        arrays["src_reg"] = _as_int_array("src_reg", cfg["src_reg"], np.int16, ndim=2)
        self.mem_instr = {k: _as_int_array(k, cfg[k], dt) for k, dt in MEM_INSTR_FIELDS.items()
                          if cfg.get(k) is not None}
        n_blocks = len(arrays["block_start"]) - 1
        if n_blocks < 1:
            raise TraceError("trace field 'block_start' must have n_blocks + 1 >= 2 entries")
        self.n_blocks = n_blocks
        self.path_dtype = path_dtype(n_blocks)
        labels = [str(s) for s in cfg["label"]]
        texts = [str(s) for s in cfg["text"]]
        # The content digest is computed while streaming and stored at close (sweeps read it
        # without touching the paths).
        self._hash = _ContentHash(self.kernel, self.grid, self.block, str(source_sha256 or ""))
        for k in (*CFG_FIELDS, *INSTR_FIELDS):
            self._hash.array(k, arrays[k])
        for k, v in self.mem_instr.items():
            self._hash.array(k, v)
        self._hash.strings("label", labels)
        self._hash.strings("text", texts)
        self._hash.array("path_ptr", np.zeros(1, np.int64))
        if with_mem:
            self._hash.array("mem_ptr", np.zeros(1, np.int64))

        self.n_threads = 0
        self.n_steps = 0
        self.n_mem = 0
        # /mem's encoding (docs/trace.md, *Addresses on disk*): rows of 32 threads when they are
        # compact, else the addresses; decided on the first flush (a million entries, or the whole
        # trace), until then both are staged. Rows need whole groups: the last threads of a batch
        # that do not fill one wait for the next batch (`mem_rows.RowEncoder`).
        self.mem_encoding = ""  # "" undecided, MEM_ROWS or MEM_ADDRESSES
        self._rows = mem_rows.RowEncoder()
        self._undecided: dict = {"mem_addr": [], "rows": [], "full": []}
        self._n_rows = 0
        self._n_full = 0
        self._row_hash = {"rows": hashlib.sha256(), "full": hashlib.sha256()}
        self._closed = False
        self._staged: dict = {}
        self._staged_items = 0
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # The temporary sits next to the target so that os.replace is an atomic rename.
        self._tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
        self._fd = None
        try:
            _storage.check_free(self.path.parent, FLUSH_RESERVE)
            self._h5 = h5py.File(self._tmp, "w", track_order=True)
            self._fd = os.open(self._tmp, os.O_RDWR)  # for reserving disk space before each flush
            root = self._h5.attrs
            root["schema"] = SCHEMA
            root["kernel"] = self.kernel
            root["grid"] = np.asarray(self.grid, np.int64)
            root["block"] = np.asarray(self.block, np.int64)
            root["source_sha256"] = str(source_sha256 or "")
            root["simt_fast_version"] = _version()
            root["created"] = _utc_now()
            for key, value in (attrs or {}).items():
                if key in HEADER_ATTRS:
                    raise TraceError(f"trace attribute '{key}' is reserved for the file header")
                root[key] = _attr_value(value)
            strings = h5py.string_dtype("utf-8")
            g = self._h5.create_group("cfg")
            for k in CFG_FIELDS:
                g.create_dataset(k, data=arrays[k])
            g.create_dataset("label", data=np.array(labels, dtype=object), dtype=strings)
            g = self._h5.create_group("instr")
            for k in INSTR_FIELDS:
                g.create_dataset(k, data=arrays[k])
            for k, v in self.mem_instr.items():
                g.create_dataset(k, data=v)
            g.create_dataset("text", data=np.array(texts, dtype=object), dtype=strings)
            g = self._h5.create_group("threads")
            self._ptr = g.create_dataset(
                "path_ptr", data=np.zeros(1, np.int64), maxshape=(None,), chunks=(PTR_CHUNK,), **self._compression
            )
            self._path = g.create_dataset(
                "path", shape=(0,), dtype=self.path_dtype, maxshape=(None,), chunks=(PATH_CHUNK,), **self._compression
            )
            if self.with_mem:
                g = self._h5.create_group("mem")
                if self.mem_format:
                    g.attrs["format"] = self.mem_format  # "": the older layout (kept as read)
                self._mem_ptr = g.create_dataset(
                    "mem_ptr", data=np.zeros(1, np.int64), maxshape=(None,), chunks=(PTR_CHUNK,), **self._compression
                )
                self._mem_group = g
        except BaseException as e:
            self._fail(e)
            raise

    # -- batches -------------------------------------------------------------------------
    @staticmethod
    def _local_csr(what: str, ptr, values) -> np.ndarray:
        ptr = np.asarray(ptr, dtype=np.int64)
        if ptr.ndim != 1 or len(ptr) < 1 or ptr[0] != 0:
            raise TraceError(f"TraceWriter.append: {what}_ptr must be a 1-D CSR offset array starting at 0")
        if len(ptr) > 1 and (np.any(np.diff(ptr) < 0) or ptr[-1] != len(values)):
            raise TraceError(
                f"TraceWriter.append: {what}_ptr must be non-decreasing and end at len({what}) = {len(values)}"
            )
        return ptr

    def append(self, path_ptr, path, mem_ptr=None, mem_addr=None) -> None:
        """Append a batch of consecutive threads (CTA-major order): local CSR ``path_ptr`` (starts at 0)."""
        if self._closed:
            raise TraceError(f"TraceWriter for {self.path} is already closed")
        path = np.asarray(path)
        ptr = self._local_csr("path", path_ptr, path)
        k = len(ptr) - 1
        if path.size and (path.min() < 0 or path.max() >= self.n_blocks):
            raise TraceError(
                f"TraceWriter.append: block ids must lie in 0..{self.n_blocks - 1} (got {path.min()}..{path.max()})"
            )
        # Check the whole batch before touching any state, so a refused batch changes nothing.
        if self.with_mem:
            if mem_ptr is None or mem_addr is None:
                raise TraceError("TraceWriter.append: this writer records /mem, so mem_ptr and mem_addr are required")
            mem_addr = np.asarray(mem_addr, dtype=np.uint64)
            mptr = self._local_csr("mem", mem_ptr, mem_addr)
            if len(mptr) - 1 != k:
                raise TraceError(f"TraceWriter.append: mem_ptr covers {len(mptr) - 1} threads but path_ptr covers {k}")
        elif mem_ptr is not None or mem_addr is not None:
            raise TraceError("TraceWriter.append: got memory addresses but the writer was opened with with_mem=False")
        global_ptr = ptr[1:] + self.n_steps
        self._stage(self._ptr, global_ptr)
        self._stage(self._path, path.astype(self.path_dtype))  # a copy: callers may reuse their buffers
        self._hash.array("path_ptr", global_ptr)
        self._hash.array("path", path)
        self.n_steps += len(path)
        if self.with_mem:
            global_mptr = mptr[1:] + self.n_mem
            self._stage(self._mem_ptr, global_mptr)
            self._hash.array("mem_ptr", global_mptr)
            self.n_mem += len(mem_addr)
            if self.mem_encoding != MEM_ADDRESSES:
                # the digest's sha256 of the addresses (hashlib) and their rows (numba) each release
                # the GIL: one core each (on the replicated-CTA import, 0.35 s and 0.27 s)
                _concurrently(lambda: self._hash.array("mem_addr", mem_addr),
                              lambda: self._encode_rows(np.diff(mptr), mem_rows.as_int64(mem_addr), final=False))
            else:
                self._hash.array("mem_addr", mem_addr)
            if self.mem_encoding != MEM_ROWS:
                self._stage_mem("mem_addr", mem_addr.copy())
        self.n_threads += k
        if self._staged_items >= FLUSH_ITEMS:
            self.flush()

    def _encode_rows(self, counts: np.ndarray, addr: np.ndarray, final: bool) -> None:
        """Stage the rows of the groups these threads complete (all of them if ``final``)."""
        rows, full = self._rows.finish() if final else self._rows.add(counts, addr)
        self._n_rows += len(rows) // 2
        self._n_full += len(full)
        self._row_hash["rows"].update(rows)
        self._row_hash["full"].update(full)
        self._stage_mem("rows", rows)
        self._stage_mem("full", full)

    def _stage_mem(self, name: str, values: np.ndarray) -> None:
        if not self.mem_encoding:
            self._undecided[name].append(values)
            if name == "mem_addr":
                self._staged_items += len(values)
        elif len(values):
            self._stage(self._mem_datasets[name], values)

    def _decide_mem_encoding(self) -> None:
        """Rows if, in what was staged so far, they take at most half the words of the addresses
        (rows that are not affine compress no better than addresses and cost the import more)."""
        words = sum(len(v) for v in self._undecided["rows"]) + sum(len(v) for v in self._undecided["full"])
        self.mem_encoding = MEM_ROWS if 2 * words <= self.n_mem else MEM_ADDRESSES
        g = self._mem_group
        g.attrs["encoding"] = self.mem_encoding
        names = ("rows", "full") if self.mem_encoding == MEM_ROWS else ("mem_addr",)
        self._mem_datasets = {}
        for name in names:
            self._mem_datasets[name] = g.create_dataset(
                name, shape=(0,), dtype=np.uint64 if name == "mem_addr" else np.int64, maxshape=(None,),
                chunks=(PATH_CHUNK,), **self._compression)
        undecided, self._undecided = self._undecided, {}
        self._staged_items -= sum(len(v) for v in undecided["mem_addr"])
        for name in names:
            for values in undecided[name]:
                self._stage_mem(name, values)

    def _stage(self, ds, values: np.ndarray) -> None:
        # Small CTA batches are collected and written together: each HDF5 resize+write has a fixed cost.
        if len(values):
            self._staged.setdefault(ds.name, (ds, []))[1].append(values)
            self._staged_items += len(values)

    def flush(self) -> None:
        """Write the staged batches to the file (at most FLUSH_ITEMS values are ever held back)."""
        if self.with_mem and not self.mem_encoding:
            self._decide_mem_encoding()
        try:
            staged = sum(v.nbytes for _, parts in self._staged.values() for v in parts)
            _storage.reserve(self._fd, staged + staged // 8 + FLUSH_RESERVE)
            for ds, parts in self._staged.values():
                self._grow(ds, parts[0] if len(parts) == 1 else np.concatenate(parts))
        except BaseException as e:
            self._fail(e)
            raise
        self._staged.clear()
        self._staged_items = 0

    def _fail(self, err: BaseException) -> None:
        """Drop the temporary after ``err``; a full disk becomes one sentence (a TraceError)."""
        self.abort()
        if isinstance(err, Exception) and _storage.is_disk_full(err):
            why = err.strerror if isinstance(err, _storage.NoSpace) else os.strerror(errno.ENOSPC)
            raise TraceError(
                f"{self.path}: disk full after {self.n_threads} of {self.expected_threads} thread paths "
                f"({why[:1].lower() + why[1:]}); the partial trace was removed and any earlier {self.path.name} "
                f"is unchanged; free space and re-run"
            ) from None

    @staticmethod
    def _grow(ds, values: np.ndarray) -> None:
        if len(values) == 0:
            return
        n = ds.shape[0]
        ds.resize((n + len(values),))
        ds[n:] = values

    # -- finishing -----------------------------------------------------------------------
    def close(self) -> Path:
        """Finish the file and move it into place; refuses a launch that did not write every thread."""
        if self._closed:
            return self.path
        if self.n_threads != self.expected_threads:
            self.abort()
            raise TraceError(
                f"{self.path}: wrote {self.n_threads} thread paths but grid {self.grid} x block {self.block} "
                f"has {self.expected_threads} threads; the trace was not saved"
            )
        try:
            if self.with_mem and self.mem_encoding != MEM_ADDRESSES:
                self._encode_rows(np.zeros(0, np.int64), np.zeros(0, np.int64), final=True)
            self.flush()
            if self.mem_encoding == MEM_ROWS:
                a = self._mem_group.attrs
                a["mem_addr_sha256"] = self._hash.part("mem_addr")
                a["n_entries"] = self.n_mem
                a["rows_sha256"] = self._row_hash["rows"].hexdigest()
                a["full_sha256"] = self._row_hash["full"].hexdigest()
            self.digest = self._hash.hexdigest()
            self._h5.attrs["digest"] = self.digest
            self._h5.close()
            os.close(self._fd)
            self._fd = None
            os.replace(self._tmp, self.path)
        except BaseException as e:
            self._fail(e)
            raise
        self._closed = True
        return self.path

    def abort(self) -> None:
        """Drop the temporary file; the target path is left untouched."""
        self._closed = True
        h5, self._h5 = getattr(self, "_h5", None), None  # abort may run twice (the emulator aborts too)
        if h5 is not None:
            # The file is deleted: HDF5 must not write (or retry a failed write) while closing.
            _storage.silence(h5)
            try:
                h5.close()
            except Exception:  # half-open: the file is being deleted anyway
                pass
        if getattr(self, "_fd", None) is not None:
            os.close(self._fd)
            self._fd = None
        try:
            os.unlink(self._tmp)
        except FileNotFoundError:
            pass

    def __del__(self):
        # A writer dropped without close() (e.g. the emulator raised outside a `with`) must not
        # leave its temporary file behind.
        if not getattr(self, "_closed", True):
            try:
                self.abort()
            except Exception:
                pass

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            self.close()
        else:
            self.abort()
        return False


def _concurrently(background, foreground) -> None:
    """Run both; ``background`` in a thread. Returns once both are done; either's error is raised."""
    failed: list = []

    def run():
        try:
            background()
        except BaseException as e:  # (re-raised in the caller's thread below)
            failed.append(e)

    thread = threading.Thread(target=run, name="simt-fast-digest")
    thread.start()
    try:
        foreground()
    finally:
        thread.join()
    if failed:
        raise failed[0]


def save(trace, path) -> Path:
    """Write ``trace`` to ``path`` (one batch through :class:`TraceWriter`)."""
    cfg = {k: getattr(trace, k) for k in (*CFG_FIELDS, *INSTR_FIELDS, *STRING_FIELDS, *MEM_INSTR_FIELDS)}
    with_mem = trace.mem_ptr is not None or trace.mem_addr is not None
    with TraceWriter(
        path,
        kernel=trace.kernel,
        grid=trace.grid,
        block=trace.block,
        cfg=cfg,
        source_sha256=trace.source_sha256,
        attrs=trace.attrs,
        with_mem=with_mem,
        mem_format=trace.mem_format,
    ) as w:
        if with_mem:
            w.append(trace.path_ptr, trace.path, trace.mem_ptr, trace.mem_addr)
        else:
            w.append(trace.path_ptr, trace.path)
    return Path(path)


# ---------------------------------------------------------------------------------------------
# Reading
# ---------------------------------------------------------------------------------------------


def parse_schema(name: str, schema) -> int:
    """The major version of a ``simt-fast/trace/<major>`` schema string; refuse anything else."""
    schema = _from_attr(schema)
    prefix = SCHEMA.rsplit("/", 1)[0] + "/"
    if not isinstance(schema, str) or not schema.startswith(prefix):
        raise TraceError(f"{name} has schema {schema!r}, which is not a simt-fast trace schema (expected {SCHEMA!r})")
    major = schema[len(prefix):].split(".", 1)[0]
    if not major.isdigit():
        raise TraceError(f"{name} has malformed schema {schema!r} (expected {SCHEMA!r})")
    if int(major) != SCHEMA_MAJOR:
        raise TraceError(
            f"{name} uses trace schema version {major} ({schema!r}) but this simt-fast reads only version "
            f"{SCHEMA_MAJOR} ({SCHEMA!r}); upgrade simt-fast or re-generate the trace"
        )
    return int(major)


def _open_error(name: str, err: Exception) -> TraceError:
    msg = str(err)
    low = msg.lower()
    if "file signature" in low:
        return TraceError(f"{name} is not an HDF5 file, so it cannot be a simt-fast trace")
    if "truncated" in low or "eof" in low:
        return TraceError(f"{name} is truncated (the HDF5 file ends early); re-generate the trace")
    # h5py wraps the HDF5 reason in "Can't synchronously read data (<reason>)": keep the reason.
    inner = re.search(r"\((.*)\)\s*$", msg)
    reason = (inner.group(1) if inner else msg).strip().rstrip(".")
    return TraceError(f"{name} is corrupt (HDF5 reports: {reason}); re-generate the trace")


def open_checked(path) -> h5py.File:
    """Open a trace file read-only and check its schema attribute; every failure is one sentence."""
    name = str(path)
    if not Path(path).exists():
        raise TraceError(f"{name} does not exist")
    if Path(path).is_dir():
        raise TraceError(f"{name} is a directory, not a trace file")
    try:
        f = h5py.File(path, "r")
    except (OSError, ValueError) as e:
        raise _open_error(name, e) from None
    try:
        if "schema" not in f.attrs:
            raise TraceError(f"{name} is not a simt-fast trace (no schema attribute)")
        parse_schema(name, f.attrs["schema"])
    except BaseException:
        f.close()
        raise
    return f


def _dataset(f: h5py.File, name: str, key: str):
    if key not in f:
        raise TraceError(f"{name} is missing dataset /{key}")
    ds = f[key]
    if not isinstance(ds, h5py.Dataset):
        raise TraceError(f"{name}: /{key} is a group, not a dataset")
    return ds


def _read_int(f, name, key, dtype, ndim=1) -> np.ndarray:
    ds = _dataset(f, name, key)
    if ds.dtype.kind not in ("iub"):
        raise TraceError(f"{name}: /{key} must hold integers (found dtype {ds.dtype})")
    if len(ds.shape) != ndim:
        raise TraceError(f"{name}: /{key} must be {ndim}-D (found shape {ds.shape})")
    arr = ds[()]
    if dtype is np.bool_:
        return arr.astype(np.bool_)
    if arr.size:
        info = np.iinfo(dtype)
        if arr.min() < info.min or arr.max() > info.max:
            raise TraceError(f"{name}: /{key} has values outside the range of {np.dtype(dtype).name}")
    return np.ascontiguousarray(arr, dtype=dtype)


def _read_strings(f, name, key) -> list:
    ds = _dataset(f, name, key)
    if ds.dtype.kind not in ("O", "S", "U") or len(ds.shape) != 1:
        raise TraceError(f"{name}: /{key} must be a 1-D array of strings (found {ds.dtype}, shape {ds.shape})")
    return [s.decode() if isinstance(s, bytes) else str(s) for s in ds[()]]


def digest_mismatch(name: str, stored: str, actual: str) -> str:
    """The one sentence for a file whose content is not what its writer stored the digest of."""
    return (f"{name}: the stored digest {stored[:12]} does not match the content's {actual[:12]}, so the file was "
            f"modified after it was written; re-generate it, or allow it explicitly (--allow-digest-mismatch)")


def read_fields(path, *, allow_digest_mismatch: bool = False) -> dict:
    """Read a trace file into the keyword arguments of :class:`simt_fast.trace.model.Trace` (what
    ``Trace.load`` builds); structural errors (schema, missing data, corruption) raise TraceError.

    A file whose stored ``digest`` does not match its content was changed after it was written
    (an edit, or damage HDF5's checksums did not catch) and is refused unless
    ``allow_digest_mismatch``. Invariants across fields (path steps are CFG edges, …) are
    :func:`simt_fast.trace.validate`'s job.
    """
    name = str(path)
    fields, stored = _read(path, name)
    if stored and not allow_digest_mismatch:
        actual = digest(SimpleNamespace(**fields))
        if actual != stored:
            raise TraceError(digest_mismatch(name, stored, actual))
    return fields


def _read(path, name: str) -> tuple:
    """(Trace fields, stored digest or "") of a trace file."""
    f = open_checked(path)
    try:
        with f:
            a = f.attrs
            for key in ("kernel", "grid", "block"):
                if key not in a:
                    raise TraceError(f"{name} is missing the root attribute '{key}'")
            cfg = {k: _read_int(f, name, f"cfg/{k}", dt) for k, dt in CFG_FIELDS.items()}
            instr = {k: _read_int(f, name, f"instr/{k}", dt, ndim=2 if k == "src_reg" else 1)
                     for k, dt in INSTR_FIELDS.items()}
            path_ds = _dataset(f, name, "threads/path")
            if path_ds.dtype.kind not in "iu" or len(path_ds.shape) != 1:
                raise TraceError(f"{name}: /threads/path must be 1-D block ids (found {path_ds.dtype}, {path_ds.shape})")
            blocks = path_ds[()]
            if blocks.dtype.kind == "i" or blocks.dtype.itemsize > 4:
                if blocks.size and (blocks.min() < 0 or blocks.max() > 0xFFFFFFFF):
                    raise TraceError(f"{name}: /threads/path has block ids outside 0..2**32-1")
                blocks = blocks.astype(np.uint32)
            mem_instr = {k: _read_int(f, name, f"instr/{k}", dt) for k, dt in MEM_INSTR_FIELDS.items()
                         if f"instr/{k}" in f}
            mem_ptr = mem_addr = None
            mem_format = ""
            if "mem" in f:
                mem_ptr = _read_int(f, name, "mem/mem_ptr", np.int64)
                mem_addr = _read_mem_addr(f, name, mem_ptr)
                mem_format = str(_from_attr(f["mem"].attrs.get("format", "")))
            extra = {k: _from_attr(v) for k, v in a.items() if k not in HEADER_ATTRS}
            stored = str(_from_attr(a.get("digest", "")) or "")
            return dict(
                kernel=str(_from_attr(a["kernel"])),
                grid=_triple("grid", a["grid"]),
                block=_triple("block", a["block"]),
                source_sha256=str(_from_attr(a.get("source_sha256", ""))),
                label=_read_strings(f, name, "cfg/label"),
                text=_read_strings(f, name, "instr/text"),
                path_ptr=_read_int(f, name, "threads/path_ptr", np.int64),
                path=blocks,
                mem_ptr=mem_ptr,
                mem_addr=mem_addr,
                mem_format=mem_format,
                attrs=extra,
                **mem_instr,
                **cfg,
                **instr,
            ), stored
    except TraceError:
        raise
    except (OSError, KeyError, ValueError, RuntimeError) as e:
        # h5py reports damaged chunks and B-trees lazily, while reading datasets.
        raise _open_error(name, e) from None


def _read_mem_addr(f, name: str, mem_ptr: np.ndarray):
    """/mem's addresses: the array, or for a file that stores rows (MEM_ROWS) the rows, which
    ``Trace.mem_addr`` decodes when read (`mem_rows.StoredRows`); the rows are checked here."""
    a = f["mem"].attrs
    encoding = str(_from_attr(a.get("encoding", MEM_ADDRESSES)))
    if encoding == MEM_ADDRESSES:
        return _read_int(f, name, "mem/mem_addr", np.uint64)
    if encoding != MEM_ROWS:
        raise TraceError(f"{name}: '/mem' has encoding {encoding!r}; this simt-fast reads {MEM_ROWS!r} and "
                         f"{MEM_ADDRESSES!r}")
    parts = {}
    for key in ("rows", "full"):
        parts[key] = _read_int(f, name, f"mem/{key}", np.int64)
        stored = str(_from_attr(a.get(f"{key}_sha256", "")))
        if hashlib.sha256(parts[key]).hexdigest() != stored:
            raise TraceError(f"{name}: /mem/{key} differs from what was written (modified or damaged)")
    n_entries = int(a.get("n_entries", -1))
    row0 = mem_rows.group_rows(mem_ptr, mem_rows.GROUP_SHIFT) if len(mem_ptr) else np.zeros(1, np.int64)
    if len(mem_ptr) == 0 or int(mem_ptr[-1]) != n_entries or 2 * int(row0[-1]) != len(parts["rows"]):
        raise TraceError(f"{name}: /mem/rows does not match mem_ptr's {int(mem_ptr[-1]) if len(mem_ptr) else 0} "
                         f"entries (the file was modified or damaged)")
    if len(parts["full"]) % (1 << mem_rows.GROUP_SHIFT):
        raise TraceError(f"{name}: /mem/full is not whole rows (the file was modified or damaged)")
    pairs = parts["rows"].reshape(-1, 2)
    lanes = pairs[pairs[:, 1] == mem_rows.NOT_AFFINE, 0]
    if lanes.size and (lanes.min() < 0 or lanes.max() + (1 << mem_rows.GROUP_SHIFT) > len(parts["full"])):
        raise TraceError(f"{name}: /mem/rows points outside /mem/full (the file was modified or damaged)")
    full = parts["full"] if len(parts["full"]) else np.zeros(1, np.int64)
    return mem_rows.StoredRows(mem_ptr, parts["rows"], full, n_entries, str(_from_attr(a.get("mem_addr_sha256", ""))), name)


def read_header(path) -> dict:
    """Root attributes and sizes without reading the paths (for `simt-fast trace-info`)."""
    name = str(path)
    f = open_checked(path)
    try:
        with f:
            info = {k: _from_attr(v) for k, v in f.attrs.items()}
            info["n_blocks"] = int(_dataset(f, name, "cfg/block_start").shape[0]) - 1
            info["n_instrs"] = int(_dataset(f, name, "instr/op_class").shape[0])
            info["n_threads"] = int(_dataset(f, name, "threads/path_ptr").shape[0]) - 1
            info["n_steps"] = int(_dataset(f, name, "threads/path").shape[0])
            info["path_dtype"] = str(f["threads/path"].dtype)
            info["has_mem"] = "mem" in f
            info["mem_format"] = str(_from_attr(f["mem"].attrs.get("format", ""))) if "mem" in f else ""
            return info
    except TraceError:
        raise
    except (OSError, KeyError, ValueError, RuntimeError) as e:
        raise _open_error(name, e) from None


# ---------------------------------------------------------------------------------------------
# Digest
# ---------------------------------------------------------------------------------------------


class _ContentHash:
    """The trace digest, computable in one go or while streaming (one sha256 per part).

    digest = sha256(schema, kernel, grid, block, source_sha256, then ``name=sha256(part)`` for
    every part in PARTS order). Arrays are hashed in canonical little-endian dtypes (the path as
    uint32, so a uint16 file and its in-memory uint32 copy agree); strings length-prefixed UTF-8.
    """

    CANONICAL = {**{k: np.dtype(v).newbyteorder("<")
                    for k, v in {**CFG_FIELDS, **INSTR_FIELDS, **MEM_INSTR_FIELDS}.items()},
                 "path_ptr": np.dtype("<i8"), "path": np.dtype("<u4"),
                 "mem_ptr": np.dtype("<i8"), "mem_addr": np.dtype("<u8")}
    PARTS = (*CFG_FIELDS, *INSTR_FIELDS, *MEM_INSTR_FIELDS, "label", "text", "path_ptr", "path", "mem_ptr",
             "mem_addr")

    def __init__(self, kernel: str, grid, block, source_sha256: str):
        self.header = (f"{SCHEMA};kernel={kernel};grid={tuple(int(v) for v in grid)};"
                       f"block={tuple(int(v) for v in block)};source={source_sha256};")
        self.parts: dict = {}

    def array(self, name: str, values) -> None:
        arr = np.ascontiguousarray(np.asarray(values).astype(self.CANONICAL[name], copy=False))
        self.parts.setdefault(name, hashlib.sha256()).update(arr)  # the array's bytes, without a copy

    def strings(self, name: str, items) -> None:
        h = self.parts.setdefault(name, hashlib.sha256())
        for item in items:
            b = str(item).encode()
            h.update(len(b).to_bytes(8, "little"))
            h.update(b)

    def part(self, name: str) -> str:
        """One part's sha256 (what the digest takes of it)."""
        return self.parts[name].hexdigest()

    def known(self, name: str, part_sha256: str) -> None:
        """A part whose sha256 is known without its bytes (the addresses of a trace still in rows)."""
        self.parts[name] = SimpleNamespace(hexdigest=lambda: part_sha256)

    def hexdigest(self) -> str:
        top = hashlib.sha256(self.header.encode())
        for name in self.PARTS:
            if name in self.parts:
                top.update(f"{name}={self.parts[name].hexdigest()};".encode())
        return top.hexdigest()


def digest(trace) -> str:
    """Stable sha256 of what a simulation sees: header identity + every array in canonical form.

    Independent of the file it came from, its creation time, compression, the simt-fast version
    and the free-form attrs. Files written by :class:`TraceWriter` store it as the root attribute
    ``digest`` (see :func:`file_digest`).
    """
    h = _ContentHash(trace.kernel, trace.grid, trace.block, trace.source_sha256)
    for k in (*CFG_FIELDS, *INSTR_FIELDS):
        h.array(k, getattr(trace, k))
    for k in MEM_INSTR_FIELDS:
        if getattr(trace, k, None) is not None:
            h.array(k, getattr(trace, k))
    h.strings("label", trace.label)
    h.strings("text", trace.text)
    h.array("path_ptr", trace.path_ptr)
    h.array("path", trace.path)
    if trace.mem_ptr is not None:
        h.array("mem_ptr", trace.mem_ptr)
        stored = _stored_rows(trace)
        if stored is not None and stored.addr_sha256 is not None:
            h.known("mem_addr", stored.addr_sha256)  # checked when the rows are decoded
        else:
            h.array("mem_addr", trace.mem_addr)
    return h.hexdigest()


def _stored_rows(trace):
    """The trace's /mem rows while its addresses were not read (a Trace, or read_fields' namespace)."""
    if hasattr(trace, "stored_rows"):
        return trace.stored_rows()
    value = getattr(trace, "mem_addr", None)
    return value if isinstance(value, mem_rows.StoredRows) else None


def file_digest(path) -> str:
    """A trace file's digest without reading its paths when the writer stored it (else computed)."""
    header = read_header(path)
    stored = header.get("digest")
    return str(stored) if stored else digest(SimpleNamespace(**read_fields(path)))
