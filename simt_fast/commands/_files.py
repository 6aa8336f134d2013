"""What the commands share about files: output paths checked before any work, and the option
that accepts a trace file edited after it was written."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Optional

import typer

from ._errors import fail

ALLOW_DIGEST_MISMATCH = typer.Option(
    False, "--allow-digest-mismatch",
    help="Use trace files whose content no longer matches the digest stored when they were written "
         "(edited or damaged since); refused by default.")

_HDF5_SIGNATURE = b"\x89HDF\r\n\x1a\n"


def check_output(path: Path, what: str = "output file", *, writes: Optional[str] = None,
                 force: bool = False) -> Path:
    """Refuse, in one sentence and before any work, an output path the command could not write.

    ``what`` names the output in the message. ``writes`` is the simt-fast file family the command
    writes (``"trace"`` or ``"results"``): an existing simt-fast file of the other family is
    never replaced unknowingly — a trace output refuses to overwrite anything but a trace file
    unless ``force``, a results output (which is appended to) refuses anything but a results file.
    """
    path = Path(path)
    if path.is_dir():
        fail(f"{what} {path} is a directory; name a file")
    parent = path.parent
    if not parent.is_dir():
        fail(f"cannot write {what} {path}: directory {parent} does not exist")
    if not os.access(parent, os.W_OK | os.X_OK) or (path.exists() and not os.access(path, os.W_OK)):
        fail(f"cannot write {what} {path}: permission denied")
    if writes is not None and path.is_file():
        kind = file_kind(path)
        if writes == "trace" and kind != "trace" and not force:
            fail(f"{what} {path} exists and is {_describe(kind)}, not a trace; choose another name, or pass "
                 f"--force to replace it")
        if writes == "results" and kind in ("trace", "other"):  # other HDF5 problems: the writer names them
            fail(f"{what} {path} exists and is {_describe(kind)}, not a results file; choose another name")
    return path


def check_output_dir(path: Path, what: str = "output directory") -> Path:
    """Like :func:`check_output` for a directory the command creates (with its parents) or fills."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        fail(f"{what} {path} exists and is not a directory; name a directory")
    existing = next((p for p in (path, *path.parents) if p.exists()), None)
    if existing is not None and not existing.is_dir():
        fail(f"cannot create {what} {path}: {existing} is not a directory")
    if existing is not None and not os.access(existing, os.W_OK | os.X_OK):
        fail(f"cannot write {what} {path}: permission denied in {existing}")
    return path


def file_kind(path: Path) -> str:
    """``"empty"``, ``"trace"``, ``"results"``, ``"hdf5"`` (another HDF5 file) or ``"other"``."""
    import h5py

    try:
        with open(path, "rb") as fh:
            head = fh.read(len(_HDF5_SIGNATURE))
    except OSError:
        return "other"
    if not head:
        return "empty"
    if head != _HDF5_SIGNATURE:
        return "other"
    try:
        try:
            f = h5py.File(path, "r", locking=False)
        except OSError as e:  # a results file a sweep is writing (or a killed sweep left flagged)
            if "already open for write" not in str(e):
                raise
            f = h5py.File(path, "r", swmr=True, locking=False)
        with f:
            schema = f.attrs.get("schema", b"")
    except (OSError, ValueError):
        return "hdf5"
    schema = schema.decode(errors="replace") if isinstance(schema, bytes) else str(schema)
    for family in ("trace", "results"):
        if schema.startswith(f"simt-fast/{family}/"):
            return family
    return "hdf5"


def _describe(kind: str) -> str:
    return {"results": "a simt-fast results file", "trace": "a simt-fast trace file", "hdf5": "an HDF5 file",
            "empty": "an empty file"}.get(kind, "a file")


def write_text(path: Path, text: str, what: str = "output file") -> None:
    """Write a command's text output; a failure (disk full, permissions) is one sentence, exit 2."""
    try:
        Path(path).write_text(text)
    except OSError as e:
        fail(f"cannot write {what} {path}: {(e.strerror or str(e)).lower()}")
