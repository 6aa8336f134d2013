"""The results store (docs/DESIGN.md §6, docs/sweeps.md): one HDF5 file per sweep, one row per point.

Layout (``schema = "simt-fast/results/1"``)::

    /                attrs: schema, simt_fast_version, numba/numpy/h5py/hdf5 versions, host, created,
                     baseline (JSON), sweep (the sweep file's text), history (JSON list of writer sessions),
                     studies (JSON list: each sweep run into the file, with its point ids; optional),
                     analyses (JSON: per-trace analysis numbers keyed by trace id; optional)
    /runs            a resizable 1-D compound dataset, one field per column: point_id, trace_id,
                     trace, every SimConfig field, every scalar stat (Stats.SCALAR_STATS), then
                     provenance (sim_seconds, finished, host)
    /hist/<name>     int64[n_rows, HIST_WIDTH] per histogram stat, row r belongs to /runs row r;
                     unused tail entries are -1 (a histogram of warp size w has w+1 real entries)

Why a compound row table: HDF5's single-writer/multiple-reader mode (SWMR) cannot add objects
once it starts, but it can grow datasets; a row is one resize + one write (about 1 ms with the
flush, against ~30 ms for one dataset per column). The writer appends the histogram rows
first, then the /runs row, then flushes; the row's ``point_id`` is empty until it is written,
so a reader (``load`` while a sweep runs) or a killed writer never exposes half a row.

A writer killed with ``kill -9`` leaves the file flagged "open for write"; HDF5 refuses to reopen
it for writing but SWMR readers still see every flushed row. :class:`ResultsWriter` therefore
recovers such a file by copying its rows into a fresh file (under its own lock file, so a sweep
that is still alive is never clobbered).

Schema versions follow signac: files carry ``schema``; a newer major version is refused with one
sentence; :data:`MIGRATIONS` maps each older major version to the function that upgrades its
in-memory columns (empty while version 1 is the only one).
"""

from __future__ import annotations

import datetime as _dt
import errno
import fcntl
import json
import os
import socket
import time
from dataclasses import fields
from pathlib import Path
from typing import Callable, Iterable, Mapping, Optional

import h5py
import numpy as np

from . import __version__, _storage
from .sim.config import ConfigError, SimConfig, check_config
from .sim.stats import HIST_STATS, SCALAR_STATS, Stats

SCHEMA = "simt-fast/results/1"
SCHEMA_PREFIX = "simt-fast/results/"
SCHEMA_MAJOR = 1

# Older major version -> function(columns: dict, hists: dict, attrs: dict) upgrading it in memory
# to the next version. signac keeps the same kind of table; version 1 is the first, so it is empty.
MIGRATIONS: dict[int, Callable[[dict, dict, dict], None]] = {}

HIST_WIDTH = 65  # warp_size <= 64 (SimConfig), so warp_size + 1 entries always fit
HIST_PAD = -1
ROW_CHUNK = 512
_HIST_CHUNK_ROWS = 64

ID_COLUMNS = ("point_id", "trace_id", "trace")
CONFIG_COLUMNS = tuple(f.name for f in fields(SimConfig))
STAT_COLUMNS = tuple(SCALAR_STATS)
# Columns that legitimately differ between two runs of the same point (excluded from comparisons).
PROVENANCE_COLUMNS = ("sim_seconds", "finished", "host")
COLUMNS = ID_COLUMNS + CONFIG_COLUMNS + STAT_COLUMNS + PROVENANCE_COLUMNS

# Fixed-length ASCII strings: SWMR readers handle them without variable-length heap reads.
_STRING_WIDTH = {"point_id": 32, "trace_id": 64, "trace": 128, "finished": 32, "host": 64}


class ResultsError(ValueError):
    """A results file that cannot be read or written as asked; ``str(err)`` is one sentence."""


class DiskFullError(ResultsError):
    """The disk (or ``ulimit -f``) cannot take the next row; every row stored before is kept."""


# ---------------------------------------------------------------------------------------------
# Column types
# ---------------------------------------------------------------------------------------------


def _column_dtypes() -> dict:
    defaults_cfg = SimConfig()
    defaults_stats = Stats()
    out = {}
    for name in COLUMNS:
        if name in _STRING_WIDTH:
            out[name] = np.dtype(f"S{_STRING_WIDTH[name]}")
        elif name == "sim_seconds":
            out[name] = np.dtype(np.float64)
        else:
            value = getattr(defaults_cfg if name in CONFIG_COLUMNS else defaults_stats, name)
            if isinstance(value, bool):
                out[name] = np.dtype(np.bool_)
            elif isinstance(value, int):
                out[name] = np.dtype(np.int64)
            elif isinstance(value, float):
                out[name] = np.dtype(np.float64)
            else:
                out[name] = np.dtype("S32")
    return out


COLUMN_DTYPES = _column_dtypes()


ROW_DTYPE = np.dtype([(name, dtype) for name, dtype in COLUMN_DTYPES.items()])


def schema_signature(row_dtype: np.dtype, hists: Mapping[str, tuple]) -> tuple:
    """What two files must share to be merged or appended to: column names/types and hist shapes."""
    row_dtype = np.dtype(row_dtype)
    cols = tuple((k, row_dtype.fields[k][0].str) for k in (row_dtype.names or ()))
    return cols, tuple(sorted((k, tuple(v)) for k, v in hists.items()))


EXPECTED_SIGNATURE = schema_signature(ROW_DTYPE, {h: (HIST_WIDTH,) for h in HIST_STATS})


def _utc_now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def _versions() -> dict:
    import numba

    return {
        "simt_fast_version": __version__,
        "numba_version": numba.__version__,
        "numpy_version": np.__version__,
        "h5py_version": h5py.version.version,
        "hdf5_version": h5py.version.hdf5_version,
    }


def _encode(name: str, value) -> object:
    if name in _STRING_WIDTH or COLUMN_DTYPES[name].kind == "S":
        raw = str(value).encode("ascii", "replace")
        width = COLUMN_DTYPES[name].itemsize
        if len(raw) > width:
            if name == "trace":  # a display name; keep its end, which tells files apart
                raw = b"..." + raw[-(width - 3):]
            else:
                raise ResultsError(f"value {value!r} of column '{name}' is longer than {width} characters")
        return raw
    return value


# ---------------------------------------------------------------------------------------------
# Opening and checking files
# ---------------------------------------------------------------------------------------------


LOCK_WAIT_SECONDS = 10.0


def _h5_open(path, mode: str, **kw) -> h5py.File:
    """h5py.File, waiting while another process holds HDF5's lock on the file.

    HDF5 takes a non-blocking lock when it opens a file (shared to read, exclusive to write), so a
    sweep resuming into a results file fails at once while a reader (``simt-fast report``, a test
    polling for rows) has it open for a moment, and a reader fails while a writer is opening it.
    Such a clash lasts milliseconds: retry for up to LOCK_WAIT_SECONDS before giving up.
    """
    deadline = time.monotonic() + LOCK_WAIT_SECONDS
    delay = 0.005
    while True:
        try:
            return h5py.File(path, mode, **kw)
        except OSError as e:
            if not _lock_clash(e) or time.monotonic() >= deadline:
                raise
        time.sleep(delay)
        delay = min(delay * 2, 0.2)


def _lock_clash(err: Exception) -> bool:
    """Did HDF5 refuse to open the file because another process holds its lock?"""
    return "unable to lock file" in str(err).lower()


def _describe_open_error(name: str, err: Exception) -> ResultsError:
    low = str(err).lower()
    if _lock_clash(err):
        return ResultsError(f"{name} stayed locked by another process for {LOCK_WAIT_SECONDS:.0f} s (a sweep "
                            f"writing it, or a program reading it); try again when it has finished")
    if "signature" in low:
        return ResultsError(f"{name} is not an HDF5 file, so it cannot be a simt-fast results file")
    if "truncated" in low or "eof" in low:
        return ResultsError(f"{name} is truncated (the HDF5 file ends early); re-run the sweep into a new file")
    return ResultsError(f"{name} could not be read as an HDF5 results file ({str(err).strip().rstrip('.')}); "
                        f"it may be corrupt")


def _schema_major(name: str, attrs) -> int:
    schema = attrs.get("schema")
    if isinstance(schema, bytes):
        schema = schema.decode(errors="replace")
    if schema is None:
        raise ResultsError(f"{name} is an HDF5 file but not a simt-fast results file (it has no schema attribute)")
    schema = str(schema)
    if schema.startswith("simt-fast/trace/"):
        raise ResultsError(f"{name} is a simt-fast trace file, not a results file; name it in a sweep file's "
                           f"'traces' list to simulate it")
    if not schema.startswith(SCHEMA_PREFIX):
        raise ResultsError(f"{name} has schema {schema!r}, which is not a simt-fast results schema "
                           f"(expected {SCHEMA!r})")
    major = schema[len(SCHEMA_PREFIX):].split(".", 1)[0]
    if not major.isdigit():
        raise ResultsError(f"{name} has malformed schema {schema!r} (expected {SCHEMA!r})")
    major = int(major)
    if major > SCHEMA_MAJOR:
        raise ResultsError(f"{name} uses results schema version {major} but this simt-fast {__version__} reads "
                           f"versions up to {SCHEMA_MAJOR}; upgrade simt-fast to read it")
    if major < SCHEMA_MAJOR and any(v not in MIGRATIONS for v in range(major, SCHEMA_MAJOR)):
        raise ResultsError(f"{name} uses results schema version {major}, which this simt-fast cannot migrate")
    return major


def _open_read(path) -> h5py.File:
    """Open for reading, SWMR-aware (works while a sweep appends, and after a writer was killed)."""
    name = str(path)
    p = Path(path)
    if not p.exists():
        raise ResultsError(f"{name} does not exist")
    if p.is_dir():
        raise ResultsError(f"{name} is a directory, not a results file")
    try:
        f = _h5_open(path, "r")
    except (OSError, ValueError) as err:
        # Flagged open-for-write: a sweep is appending to it now, or was killed. SWMR readers may
        # read it (only then: SWMR reads retry failed checksums for a long time on corrupt files).
        if "already open for write" not in str(err):
            raise _describe_open_error(name, err) from None
        try:
            f = _h5_open(path, "r", swmr=True)
        except (OSError, ValueError) as swmr_err:
            raise _describe_open_error(name, swmr_err) from None
    try:
        _schema_major(name, f.attrs)
    except BaseException:
        f.close()
        raise
    return f


def _read_file(path) -> tuple[dict, dict, dict]:
    """(columns, hists, attrs) of the complete rows; columns are numpy arrays (strings as bytes)."""
    name = str(path)
    f = _open_read(path)
    try:
        with f:
            attrs = {k: (v.decode() if isinstance(v, bytes) else v) for k, v in f.attrs.items()}
            major = _schema_major(name, f.attrs)
            if "runs" not in f or not isinstance(f["runs"], h5py.Dataset) or f["runs"].dtype.names is None:
                raise ResultsError(f"{name} is missing the /runs table of a results file")
            runs = f["runs"]
            if f.swmr_mode:  # see rows appended since a concurrent writer's last flush
                runs.refresh()
            if runs.ndim != 1 or "point_id" not in runs.dtype.names:
                raise ResultsError(f"{name}: /runs must be a 1-D table with a point_id column")
            table = runs[()]
            n = len(table)
            hists = {}
            if "hist" in f:
                for key, ds in f["hist"].items():
                    if f.swmr_mode:
                        ds.refresh()
                    if not isinstance(ds, h5py.Dataset) or ds.ndim != 2 or ds.shape[0] < n:
                        raise ResultsError(f"{name}: /hist/{key} must be a 2-D array with a row per /runs row")
                    hists[key] = ds[:n]
    except ResultsError:
        raise
    except (OSError, KeyError, ValueError, RuntimeError) as e:
        raise _describe_open_error(name, e) from None
    # A row whose id is still empty was being written when the writer stopped: not a result.
    keep = table["point_id"] != b""
    table = table[keep]
    hists = {k: v[keep] for k, v in hists.items()}
    columns = {k: np.ascontiguousarray(table[k]) for k in table.dtype.names}
    for version in range(major, SCHEMA_MAJOR):
        MIGRATIONS[version](columns, hists, attrs)
    return columns, hists, attrs


def _signature_of(columns: dict, hists: dict) -> tuple:
    return schema_signature(np.dtype([(k, v.dtype) for k, v in columns.items()]),
                            {k: tuple(v.shape[1:]) for k, v in hists.items()})


# ---------------------------------------------------------------------------------------------
# Reading: the one way users read results
# ---------------------------------------------------------------------------------------------


def _decode_columns(columns: dict):
    import pandas as pd

    data = {}
    for key, arr in columns.items():
        data[key] = np.char.decode(arr, "ascii") if arr.dtype.kind == "S" else arr
    order = [c for c in COLUMNS if c in data] + [c for c in data if c not in COLUMNS]
    return pd.DataFrame({c: data[c] for c in order})


def _trim(row: np.ndarray) -> np.ndarray:
    real = np.flatnonzero(row != HIST_PAD)
    return row[: real[-1] + 1].copy() if real.size else row[:0].copy()


def _points(columns: dict, hists: dict, hist: bool):
    """One row per point (decoded columns, histograms as arrays with ``hist``), sorted by point id."""
    df = _decode_columns(columns)
    if hist:
        for key, arr in hists.items():
            df[key] = [_trim(r) for r in arr]
    return df.sort_values("point_id", kind="stable").reset_index(drop=True)


def load(path, hist: bool = False, baseline: Optional[Mapping] = None, study: Optional[str] = None):
    """The results of ``path`` as a pandas DataFrame, with a ``speedup`` column.

    A file of studies (a suite such as the main job's) holds each study's points: ``load`` returns a
    row per point *and study* it belongs to, with a ``study`` column, so every row carries the
    speedup over its own study's baseline -- a point that several studies share (the same
    simulation, e.g. PDOM on the Fermi machine) appears once per study. ``study="thesis"`` returns
    that study's rows only. A file without study records is one row per point, ``study`` empty.
    Rows are in the order the studies were first run, then by point id.

    Columns: ``study``, ``point_id``, ``trace_id``, ``trace``, every SimConfig field, every scalar
    stat, ``sim_seconds``/``finished``/``host`` (provenance), and ``speedup``: the cycles of the
    row's baseline point (same study, same trace, same config except the baseline's fields, e.g.
    ``mechanism``) divided by the row's cycles -- NaN only where that baseline point is not in the
    file. The baseline is the study's (``studies(path)``), else the file's; ``baseline`` (e.g.
    ``{"mechanism": "sps"}``) overrides it for every study. ``hist=True`` adds one column per
    histogram stat holding each row's 1-D int64 array. ``df.attrs["baselines"]`` maps each study
    to the baseline its speedups use.
    """
    import pandas as pd

    columns, hists, attrs = _read_file(path)
    points = _points(columns, hists, hist)
    records = _json_attr(attrs, "studies", [])
    if study is not None:
        records = [s for s in records if s.get("name") == study]
        if not records:
            names = ", ".join(s.get("name", "?") for s in _json_attr(attrs, "studies", []))
            raise ResultsError(f"{path} has no study '{study}'" + (f" (its studies: {names})" if names else
                                                                     " (it records no studies)"))
    file_baseline = dict(baseline) if baseline is not None else json.loads(attrs.get("baseline", "{}") or "{}")
    groups, in_studies = [], set()
    for s in records:
        ids = set(s.get("points", []))
        in_studies |= ids
        fields = dict(baseline) if baseline is not None else dict(s.get("baseline") or {})
        groups.append((s.get("name", ""), points[points["point_id"].isin(ids)], fields))
    if study is None and (not records or len(in_studies) < len(points)):
        groups.append(("", points[~points["point_id"].isin(in_studies)], file_baseline))  # rows of no study
    parts = []
    for name, rows, fields in groups:
        rows = rows.copy()
        rows.insert(0, "study", name)
        rows["speedup"] = speedup(rows, fields)
        parts.append(rows)
    df = pd.concat(parts, ignore_index=True) if parts else points.assign(study="", speedup=np.nan)
    baselines = {name: fields for name, _, fields in groups}
    df.attrs.update({"baseline": groups[0][2] if len(groups) == 1 else file_baseline, "baselines": baselines,
                     "path": str(path),
                     **{k: attrs[k] for k in ("schema", "simt_fast_version", "host", "created") if k in attrs}})
    return df


def _json_attr(attrs: Mapping, key: str, empty):
    try:
        value = json.loads(attrs.get(key) or json.dumps(empty))
    except ValueError:
        raise ResultsError(f"attribute '{key}' of the results file is not valid JSON") from None
    return value if isinstance(value, type(empty)) else empty


def studies(path) -> list:
    """The studies (sweeps) run into ``path``, in the order first run: dicts with ``name``,
    ``description``, ``file``, ``baseline``, ``analyses`` (names), ``points`` (point ids) and
    ``traces`` (display name -> trace id). Empty for a file written before studies were recorded."""
    _, _, attrs = _read_file(path)
    return _json_attr(attrs, "studies", [])


def analyses(path) -> dict:
    """Per-trace analysis numbers stored by sweeps: ``{trace_id: {"trace", "workload", "size", "seed",
    "results": {analysis: {name: number}}}}`` (simt_fast.sweep.analyses)."""
    _, _, attrs = _read_file(path)
    return _json_attr(attrs, "analyses", {})


def merge_studies(old: list, new: list) -> list:
    """Study records of both lists; a study in both keeps the newer description and the union of points."""
    out = {s["name"]: dict(s) for s in old}
    for s in new:
        prev = out.get(s["name"])
        if prev is not None:
            s = {**s, "points": sorted(set(prev.get("points", [])) | set(s.get("points", []))),
                 "traces": {**prev.get("traces", {}), **s.get("traces", {})}}
        out[s["name"]] = s
    return list(out.values())


def load_hist(path, name: str):
    """Histogram stat ``name`` (e.g. ``occupancy_hist``) as a Series of 1-D arrays indexed by point id."""
    import pandas as pd

    columns, hists, _ = _read_file(path)
    if name not in hists:
        known = ", ".join(sorted(hists)) or "none"
        raise ResultsError(f"{path} has no histogram '{name}' (it has: {known})")
    ids = np.char.decode(columns["point_id"], "ascii")
    series = pd.Series([_trim(r) for r in hists[name]], index=pd.Index(ids, name="point_id"), name=name)
    return series.sort_index()


def implied_baseline(baseline: Mapping) -> dict:
    """The baseline's fields plus the switches they leave one value: a switch whose other value the
    timing core refuses with the baseline's fields whatever the other switches are (``check_config``:
    ``hws_squeeze = false`` and ``hws_sync_sms = true`` need ``hws = true``) takes its default. So for
    a baseline of PDOM without HWS, the baseline point of PDOM&HWS without the squeeze is PDOM
    without HWS (no point with ``hws = false, hws_squeeze = false`` can exist); for a baseline of
    ``{mechanism = "sps"}`` alone nothing is implied (``hws`` may be true)."""

    def runs(changes: dict) -> bool:
        try:
            check_config(defaults.replace(**base, **changes))
        except ConfigError:
            return False
        return True

    base = dict(baseline)
    defaults = SimConfig()
    try:
        if not runs({}):
            return base  # not a config the core runs on its own: nothing to infer
    except (KeyError, TypeError, ValueError):
        return base
    switches = {f.name: getattr(defaults, f.name) for f in fields(SimConfig)
                if isinstance(getattr(defaults, f.name), bool) and f.name not in base}
    implied = {}
    for name, value in switches.items():
        others = [{}] + [{g: not v} for g, v in switches.items() if g != name]
        if not any(runs({name: not value, **other}) for other in others):
            implied[name] = value
    return {**base, **implied}


def speedup(df, baseline: Mapping) -> np.ndarray:
    """Baseline cycles / cycles for every row (NaN where the baseline point is absent).

    A row's baseline point has the same trace and the same value of every config field, except
    the fields named in ``baseline`` which take the baseline's values (ElTantawy et al. 2014 reports speedups
    of each mechanism over PDOM on the same machine this way), and the switches those fields leave
    one value (:func:`implied_baseline`).
    """
    out = np.full(len(df), np.nan)
    if not baseline or len(df) == 0:
        return out
    config_cols = [c for c in CONFIG_COLUMNS if c in df.columns]
    unknown = [k for k in baseline if k not in config_cols]
    if unknown:
        raise ResultsError(f"baseline field '{unknown[0]}' is not a config column of the results")
    baseline = {k: v for k, v in implied_baseline(baseline).items() if k in config_cols}
    base_rows = np.ones(len(df), bool)
    for k, v in baseline.items():
        base_rows &= (df[k] == v).to_numpy()
    key_cols = ["trace_id"] + [c for c in config_cols if c not in baseline]
    base = df.loc[base_rows, key_cols + ["cycles"]].drop_duplicates(key_cols)
    merged = df[key_cols].merge(base, on=key_cols, how="left")
    cycles = df["cycles"].to_numpy(dtype=np.float64)
    base_cycles = merged["cycles"].to_numpy(dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(cycles > 0, base_cycles / cycles, np.nan)
    return out


def point_ids(path) -> set:
    """Point ids already stored in ``path`` (empty if the file does not exist)."""
    if not Path(path).exists():
        return set()
    columns, _, _ = _read_file(path)
    return set(np.char.decode(columns["point_id"], "ascii").tolist())


def contents(path):
    """Every non-provenance column plus histograms, one row per point sorted by point id: what 'the same
    results' means (speedups are derived from these, so they are left out)."""
    columns, hists, _ = _read_file(path)
    df = _points(columns, hists, hist=True)
    return df.drop(columns=[c for c in PROVENANCE_COLUMNS if c in df.columns])


# ---------------------------------------------------------------------------------------------
# Writing: the one writer
# ---------------------------------------------------------------------------------------------


class _FileLock:
    """An exclusive advisory lock on ``<results>.lock`` held for a writer's lifetime (signac-style).

    The lock file also records the ids of the rows being written (an intent record, written before
    the rows and cleared after their flush): a writer killed, or stopped by an HDF5 write error, in
    the middle of writing leaves them there, and the next writer drops those rows, which the file
    may hold incompletely (a row without its histograms), so they are simulated again.
    """

    NOTE_BYTES = 4096  # one disk block: rewriting it never needs new space
    MAX_NOTED = 64  # rows in flight at most (an append without flush counts until the next flush)

    def __init__(self, path: Path):
        self.path = path.with_name(path.name + ".lock")
        self.fd = None
        self.unfinished: set = set()
        self.noted: list = []  # what the lock file records now

    def acquire(self):
        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as e:
            os.close(self.fd)
            self.fd = None
            if e.errno in (errno.EAGAIN, errno.EACCES):
                raise ResultsError(f"another simt-fast process is writing {self.path.with_suffix('')}; "
                                   f"wait for it or write to another file") from None
            raise
        data = os.pread(self.fd, self.NOTE_BYTES, 0).split(b"\0", 1)[0]
        self.unfinished = {x for x in data.decode("ascii", "replace").split(",") if x}
        self.noted = sorted(self.unfinished)

    def note(self, ids) -> None:
        """Record the ids about to be written (empty: everything written is flushed)."""
        os.pwrite(self.fd, ",".join(ids).encode("ascii") + b"\0", 0)
        self.noted = list(ids)

    def release(self, keep_note: bool = False):
        """Unlock; with ``keep_note`` the lock file stays if it names rows in flight (for the next writer)."""
        if self.fd is not None:
            fcntl.flock(self.fd, fcntl.LOCK_UN)
            os.close(self.fd)
            self.fd = None
            if not (keep_note and self.noted):
                try:
                    self.path.unlink()
                except FileNotFoundError:
                    pass


def _discard(f: h5py.File) -> None:
    """Close a file HDF5 failed to write without letting it write again (simt_fast._storage.silence)."""
    _storage.silence(f)
    try:
        f.close()
    except Exception:  # HDF5 complains about the writes it can no longer do; the file is being deleted
        pass


def _create(path: Path, attrs: Mapping) -> h5py.File:
    """A new results file with the schema (empty tables) and ``attrs``; on failure nothing stays open."""
    f = h5py.File(path, "w", libver="latest")
    try:
        _write_schema(f, attrs)
    except BaseException:
        _discard(f)
        raise
    return f


def _attrs_bytes(attrs: Mapping) -> int:
    return sum(len(v) if isinstance(v, (str, bytes)) else 64 for v in attrs.values())


def _write_schema(f: h5py.File, attrs: Mapping) -> None:
    f.create_dataset("runs", shape=(0,), maxshape=(None,), dtype=ROW_DTYPE, chunks=(ROW_CHUNK,))
    hist = f.create_group("hist")
    for name in HIST_STATS:
        hist.create_dataset(name, shape=(0, HIST_WIDTH), maxshape=(None, HIST_WIDTH), dtype=np.int64,
                            chunks=(_HIST_CHUNK_ROWS, HIST_WIDTH), fillvalue=HIST_PAD)
    f.attrs["schema"] = SCHEMA
    for k, v in _versions().items():
        f.attrs[k] = v
    f.attrs["host"] = socket.gethostname()
    f.attrs["created"] = _utc_now()
    f.attrs["history"] = "[]"
    f.attrs["baseline"] = "{}"
    f.attrs["sweep"] = ""
    for k, v in attrs.items():
        f.attrs[k] = v


def _write_rows(f: h5py.File, columns: Mapping[str, np.ndarray], hists: Mapping[str, np.ndarray]):
    n = len(columns["point_id"])
    for name, arr in hists.items():
        f["hist"][name].resize((n, HIST_WIDTH))
        if n:
            f["hist"][name][:] = arr
    table = np.zeros(n, ROW_DTYPE)
    for name in ROW_DTYPE.names:
        table[name] = columns[name]
    f["runs"].resize((n,))
    if n:
        f["runs"][:] = table


def _reserve_bytes(n_rows: int) -> int:
    """Disk bytes that appending ``n_rows`` rows (and closing the file) may take at most.

    Rows fill chunks of ROW_CHUNK /runs rows and 64 histogram rows, so ``n`` rows touch at most
    ``n // chunk + 2`` chunks of each dataset; 1 MiB covers the chunk index and the superblock
    (measured: one append grows the file by at most one chunk of each dataset).
    """
    runs_chunk = ROW_CHUNK * ROW_DTYPE.itemsize
    hist_chunk = _HIST_CHUNK_ROWS * HIST_WIDTH * 8
    return ((n_rows // ROW_CHUNK + 2) * runs_chunk + (n_rows // _HIST_CHUNK_ROWS + 2) * hist_chunk * len(HIST_STATS)
            + (1 << 20))


def write_rows(path, columns: Mapping[str, np.ndarray], hists: Mapping[str, np.ndarray], attrs: Mapping):
    """Write a complete results file atomically (temporary file + rename); used by merge/recovery.

    Raises :class:`_storage.NoSpace` (leaving ``path`` untouched) when the disk cannot take it.
    """
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    n = len(columns["point_id"])
    _storage.check_free(path.parent, _reserve_bytes(n) + _attrs_bytes(attrs))
    f = None
    try:
        f = _create(tmp, attrs)
        _write_rows(f, columns, hists)
        f.flush()  # a write that fails here leaves the file open, so it can be discarded cleanly
        closing, f = f, None  # a file whose close failed must not be touched again (h5py crashes)
        closing.close()
        os.replace(tmp, path)
    except Exception as e:
        if f is not None:
            _discard(f)  # the temporary is deleted: HDF5 must not retry its failed writes
        if _storage.is_disk_full(e):
            raise _storage.NoSpace(errno.ENOSPC, _storage.describe(e)) from None
        raise
    finally:
        if tmp.exists():
            tmp.unlink()


def _check_signature(name: str, columns: dict, hists: dict):
    if _signature_of(columns, hists) != EXPECTED_SIGNATURE:
        have = set(columns)
        want = set(COLUMN_DTYPES)
        diff = sorted(have ^ want)
        detail = f"columns differ: {', '.join(diff[:5])}" if diff else "column types or histogram shapes differ"
        raise ResultsError(f"{name} was written by a simt-fast with a different results layout ({detail}); "
                           f"write to a new file")


class ResultsWriter:
    """Append points to a results file; the single writer of a sweep (use as a context manager).

    Rows are flushed after every :meth:`append`, so a killed sweep loses only the points that
    were still running. Opening an existing file keeps its rows (``ids`` tells which points are
    done); a file left "open for write" by a killed writer is recovered first.

    A full disk never reaches HDF5 (``simt_fast._storage``): before each row the writer reserves
    the blocks the row may take, and when it cannot, :meth:`append` raises :class:`DiskFullError`
    with every earlier row flushed, and closing the file leaves it complete. A new file is written
    whole (schema and attributes) under a temporary name and renamed into place, and a file that
    holds no row when the disk fills (at its creation, its schema, or its first row's chunks) is
    removed: nothing in it is a result, and a file HDF5 failed to write may no longer open, which
    would refuse the re-run the message promises.
    """

    def __init__(self, path, *, baseline: Optional[Mapping] = None, sweep_text: Optional[str] = None,
                 command: str = "", studies: Optional[list] = None, analyses: Optional[Mapping] = None):
        self.path = Path(path)
        self.name = str(path)
        self.f = None
        self._fd = None
        self._in_flight: list = []  # ids appended since the last flush (the lock file's intent record)
        if not self.path.parent.is_dir():
            raise ResultsError(f"cannot write results file {path}: directory {self.path.parent} does not exist")
        if self.path.is_dir():
            raise ResultsError(f"{path} is a directory, not a results file")
        self._lock = _FileLock(self.path)
        try:
            self._lock.acquire()
        except PermissionError:
            raise ResultsError(f"cannot write results file {path}: permission denied in {self.path.parent}") from None
        self.ids: set = set()
        self.n_rows = 0
        try:
            self.recovered = False
            self.f = self._open(baseline, sweep_text, command, studies or [], analyses or {})
            ids = self.f["runs"].fields("point_id")[()]
            self.n_rows = len(ids)
            self.ids = set(np.char.decode(ids[ids != b""], "ascii").tolist())
            self.f.swmr_mode = True
            self._runs = self.f["runs"]
            self._hists = {name: self.f["hist"][name] for name in HIST_STATS}
        except DiskFullError:
            self._release(silently=True)  # said and released already, unless recovery failed (file unchanged)
            raise
        except BaseException as e:
            if _storage.is_disk_full(e):  # HDF5 met the full disk writing the attributes or the SWMR flag
                raise self._disk_full(e, hdf5_failed=True) from None
            self._release()
            raise

    def _disk_full(self, err: Exception, hdf5_failed: bool = False) -> DiskFullError:
        """Stop on a full disk: close the file (without letting HDF5 write again if it met the failure)
        and say what is kept. A file that holds no row is removed (see the class docstring)."""
        why = _storage.describe(err)
        n_rows = len(self.ids)
        if n_rows == 0:
            self._release(silently=hdf5_failed, keep_note=False)
            self.path.unlink(missing_ok=True)
            return DiskFullError(f"{self.name}: disk full before the first row was stored ({why}); the file was "
                                 f"removed; free space and re-run")
        self._release(silently=hdf5_failed, keep_note=True)
        if hdf5_failed:
            # The reservation was overtaken (another process took the space): HDF5 met the full disk
            # mid-write, so the file must not be touched again (see simt_fast._storage); the lock file
            # keeps the ids in flight, whose rows the next writer drops.
            return DiskFullError(f"{self.name}: disk full after {n_rows} rows, while HDF5 was writing (another "
                                 f"program took the reserved space); re-run to resume, which keeps the rows "
                                 f"flushed before")
        return DiskFullError(f"{self.name}: disk full after {n_rows} rows ({why}); they are kept; "
                             f"free space and re-run to resume")

    def _open(self, baseline, sweep_text, command, studies: list, analyses: Mapping) -> h5py.File:
        session = {"started": _utc_now(), "host": socket.gethostname(), "pid": os.getpid(),
                   "simt_fast_version": __version__, "command": command}
        created = not self.path.exists()
        if created:
            attrs = {}
            if baseline is not None:
                attrs["baseline"] = json.dumps(dict(baseline), sort_keys=True)
            if sweep_text is not None:
                attrs["sweep"] = sweep_text
            attrs["history"] = json.dumps([session])
            if studies:
                attrs["studies"] = json.dumps(merge_studies([], studies))
            if analyses:
                attrs["analyses"] = json.dumps(dict(analyses), sort_keys=True)
            empty = {name: np.zeros(0, dtype) for name, dtype in COLUMN_DTYPES.items()}
            try:  # schema and attributes under a temporary name, renamed into place: never half a file
                write_rows(self.path, empty, {h: np.zeros((0, HIST_WIDTH), np.int64) for h in HIST_STATS}, attrs)
            except _storage.NoSpace as e:
                raise self._disk_full(e) from None
        columns, hists, attrs = _read_file(self.path)  # checks schema, readable even after a crash
        _check_signature(self.name, columns, hists)
        # rows the last writer was writing when it stopped may be incomplete: they are run again
        unfinished = np.isin(np.char.decode(columns["point_id"], "ascii"), list(self._lock.unfinished))
        if unfinished.any():
            columns = {k: v[~unfinished] for k, v in columns.items()}
            hists = {k: v[~unfinished] for k, v in hists.items()}
        n_rows = len(columns["point_id"])
        # Nothing may be written (not even the session history below) unless the disk can take it.
        self._fd = os.open(self.path, os.O_RDWR)
        self.ids = set(np.char.decode(columns["point_id"], "ascii").tolist())
        try:
            _storage.reserve(self._fd, _reserve_bytes(1))
        except _storage.NoSpace as e:
            raise self._disk_full(e) from None
        f = None
        try:
            if not unfinished.any():
                f = _h5_open(self.path, "r+", libver="latest")
        except OSError as e:
            if "already open for write" not in str(e):
                raise _describe_open_error(self.name, e) from None
        if f is None:
            # We hold the lock, so no live writer: a killed sweep left the consistency flag set, or
            # rows unfinished. Copy the complete rows into a fresh file (SWMR readers saw them all).
            keep = {k: v for k, v in attrs.items() if k not in ("schema",)}
            try:
                write_rows(self.path, columns, hists, keep)
            except _storage.NoSpace as full:
                raise DiskFullError(f"{self.name}: disk full while recovering its {n_rows} rows from an interrupted "
                                    f"sweep into a fresh file ({full.strerror}); the file is unchanged; free space "
                                    f"and re-run to resume") from None
            self.recovered = True
            os.close(self._fd)
            self._fd = os.open(self.path, os.O_RDWR)
            f = _h5_open(self.path, "r+", libver="latest")
        self._lock.note([])
        if created:  # its attributes were written with it
            return f
        self.f = f  # a full disk while the attributes are written closes it (see __init__)
        history = json.loads(f.attrs.get("history", "[]") or "[]")
        history.append(session)
        f.attrs["history"] = json.dumps(history)
        if baseline is not None:
            f.attrs["baseline"] = json.dumps(dict(baseline), sort_keys=True)
        if sweep_text is not None:
            f.attrs["sweep"] = sweep_text
        # Attributes cannot change once SWMR writing starts, so what a sweep adds about its studies
        # and traces is written here, before the first point.
        if studies:
            f.attrs["studies"] = json.dumps(merge_studies(_json_attr(f.attrs, "studies", []), studies))
        if analyses:
            f.attrs["analyses"] = json.dumps({**_json_attr(f.attrs, "analyses", {}), **analyses}, sort_keys=True)
        return f

    def append(self, point_id: str, trace_id: str, trace: str, config: Mapping, stats, sim_seconds: float = 0.0,
               host: str = "", finished: Optional[str] = None, flush: bool = True) -> bool:
        """Store one finished point (stats: a Stats or its dict) and flush it to disk.

        Returns False (and stores nothing) if the point is already in the file. Raises
        :class:`DiskFullError` (storing nothing, every earlier row intact) when the disk is full.
        """
        if point_id in self.ids:
            return False
        st = stats.to_dict() if isinstance(stats, Stats) else dict(stats)
        values = {"point_id": point_id, "trace_id": trace_id, "trace": trace, **dict(config),
                  "sim_seconds": float(sim_seconds), "finished": finished or _utc_now(), "host": host or socket.gethostname()}
        for name in STAT_COLUMNS:
            values[name] = st.get(name, 0)
        r = self.n_rows
        row = np.zeros((), ROW_DTYPE)
        for name in COLUMNS:
            row[name] = _encode(name, values[name])
        hist_rows = {}
        for name in HIST_STATS:
            h = np.asarray(st.get(name, []), dtype=np.int64)
            if h.size > HIST_WIDTH:
                raise ResultsError(f"histogram '{name}' of point {point_id} has {h.size} entries (> {HIST_WIDTH})")
            hist_rows[name] = np.full(HIST_WIDTH, HIST_PAD, np.int64)
            hist_rows[name][: h.size] = h
        try:
            _storage.reserve(self._fd, _reserve_bytes(len(self._in_flight) + 1))
        except _storage.NoSpace as e:
            raise self._disk_full(e) from None
        if len(self._in_flight) >= self._lock.MAX_NOTED:
            self.flush()
        try:
            self._lock.note(self._in_flight + [point_id])
            # Histogram rows first, the /runs row (carrying the id) last: readers count a row by its id.
            for name in HIST_STATS:
                ds = self._hists[name]
                ds.resize((r + 1, HIST_WIDTH))
                ds[r] = hist_rows[name]
            self._runs.resize((r + 1,))
            self._runs[r] = row
            self._in_flight.append(point_id)
            if flush:
                self.flush()
        except (OSError, RuntimeError) as e:
            if not _storage.is_disk_full(e):
                raise
            raise self._disk_full(e, hdf5_failed=True) from None
        self.n_rows += 1
        self.ids.add(point_id)
        return True

    def flush(self):
        self.f.flush()
        self._in_flight = []
        self._lock.note([])

    def _release(self, silently: bool = False, keep_note: Optional[bool] = None):
        """Close the file and give up the lock; ``silently``: let HDF5 write nothing more (after it
        failed to write, see simt_fast._storage), else flush and close normally. The lock file stays
        when it names rows in flight and ``keep_note`` (default: ``silently``)."""
        try:
            if self.f is not None:
                if silently:
                    _storage.silence(self.f)
                try:
                    self.f.close()
                except Exception:
                    if not silently:
                        raise
                finally:
                    self.f = None
        finally:
            if self._fd is not None:
                if not silently:
                    # give back the blocks reserved past the end (a same-size truncate frees them)
                    try:
                        os.ftruncate(self._fd, os.fstat(self._fd).st_size)
                    except OSError:
                        pass
                os.close(self._fd)
                self._fd = None
            self._lock.release(keep_note=silently if keep_note is None else keep_note)

    def close(self):
        if self.f is not None or self._fd is not None:
            self._release()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


# ---------------------------------------------------------------------------------------------
# Merge (shards of a job array)
# ---------------------------------------------------------------------------------------------


def merge(out, inputs: Iterable, command: str = "") -> dict:
    """Merge results files into ``out`` (kept if it exists), de-duplicated by point id.

    Every file must have this simt-fast's results layout (refused with one sentence otherwise).
    Returns counts: ``{"inputs": n, "rows_read": n, "added": n, "duplicates": n, "total": n}``.
    """
    out = Path(out)
    inputs = [Path(p) for p in inputs]
    if not inputs:
        raise ResultsError("merge needs at least one input results file")
    for p in inputs:
        if p.resolve() == out.resolve():
            raise ResultsError(f"{p} is both the output and an input of the merge; name a new output file")
    read = []
    for p in inputs:
        columns, hists, attrs = _read_file(p)
        _check_signature(str(p), columns, hists)
        read.append((p, columns, hists, attrs))
    baselines = {r[3].get("baseline", "{}") for r in read} - {"{}"}
    baseline = json.loads(baselines.pop()) if len(baselines) == 1 else None
    merged_studies, merged_analyses = [], {}
    for p, _, _, attrs in read:
        merged_studies = merge_studies(merged_studies, _json_attr(attrs, "studies", []))
        merged_analyses.update(_json_attr(attrs, "analyses", {}))
    counts = {"inputs": len(inputs), "rows_read": 0, "added": 0, "duplicates": 0}
    with ResultsWriter(out, baseline=baseline, sweep_text=read[0][3].get("sweep"), command=command,
                       studies=merged_studies, analyses=merged_analyses) as w:
        for p, columns, hists, _ in read:
            n = len(columns["point_id"])
            counts["rows_read"] += n
            for r in range(n):
                pid = columns["point_id"][r].decode()
                if pid in w.ids:
                    counts["duplicates"] += 1
                    continue
                config = {c: _py(columns[c][r]) for c in CONFIG_COLUMNS}
                stats = {s: _py(columns[s][r]) for s in STAT_COLUMNS}
                for h in HIST_STATS:
                    stats[h] = _trim(hists[h][r])
                w.append(pid, columns["trace_id"][r].decode(), columns["trace"][r].decode(), config, stats,
                         float(columns["sim_seconds"][r]), columns["host"][r].decode(),
                         finished=columns["finished"][r].decode(), flush=False)
                counts["added"] += 1
            w.flush()
        counts["total"] = w.n_rows
    return counts


def _py(v):
    if isinstance(v, bytes):
        return v.decode()
    if isinstance(v, np.generic):
        return v.item()
    return v
