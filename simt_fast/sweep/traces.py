"""Resolve a sweep's traces to (file, digest): trace files as given, workloads traced on demand.

Workloads are run through the functional emulator once and cached by content hash under the
cache directory (``--cache-dir``, else ``$SIMT_FAST_CACHE``, else ``$XDG_CACHE_HOME/simt-fast``
or ``~/.cache/simt-fast``): the key covers the PTX text, the kernel, the size and seed, the
workload's input generator source, the source of the trace producers (``simt_fast/emu``,
``simt_fast/ir``, ``simt_fast/trace``) and the simt-fast version, so changing any of them
re-traces and nothing stale is reused. Each traced launch is checked against the workload's numpy
reference before its trace is cached (a wrong emulation must not become a result). The emulator's
budgets (``max_insts``, ``max_trace_bytes``: docs/emu.md, *Bounds*) take their defaults unless
``emu_limits`` sets them (``simt-fast sweep --max-insts/--max-trace-bytes``); a launch stopped by
one caches nothing.

Every trace file is loaded and validated (``trace.validate.require_valid``, and its stored digest
checked) before any point runs, so a damaged trace is one sentence, not a column of failed points.
Digests (the trace part of point ids) and the fact that a file passed are cached per file by
(path, size, mtime), so a re-run of a big sweep neither re-hashes nor re-validates every trace.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import os
from pathlib import Path
from typing import Callable, Optional

from .. import __version__
from .. import emu, workloads
from ..trace.model import Trace, TraceError
from ..trace.validate import require_valid
from .spec import SweepError, TraceSource


def default_cache_dir() -> Path:
    env = os.environ.get("SIMT_FAST_CACHE")
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "simt-fast"


class _DigestCache:
    def __init__(self, cache_dir: Path):
        self.file = cache_dir / "digests.json"
        try:
            self.data = json.loads(self.file.read_text())
        except (OSError, ValueError):
            self.data = {}
        self.dirty = False

    def get(self, path: Path, allow_digest_mismatch: bool = False) -> str:
        """The content digest of a trace file that loads and passes validation (else TraceError)."""
        st = path.stat()
        key = str(path.resolve())
        hit = self.data.get(key)
        if hit and hit["size"] == st.st_size and hit["mtime_ns"] == st.st_mtime_ns and hit.get("valid"):
            return hit["digest"]
        trace = Trace.load(path, allow_digest_mismatch=allow_digest_mismatch)
        require_valid(trace, name=str(path))
        digest = trace.digest()
        # a file accepted only because mismatches were allowed is checked again next time
        self.data[key] = {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "digest": digest,
                          "valid": not allow_digest_mismatch}
        self.dirty = True
        return digest

    def save(self):
        if not self.dirty:
            return
        self.file.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.file.with_name(f".{self.file.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(self.data, indent=0, sort_keys=True))
        os.replace(tmp, self.file)


_PRODUCER_DIGEST = None


def _producer_digest() -> str:
    """Hash of the code that turns PTX into traces (an emulator fix must invalidate cached traces)."""
    global _PRODUCER_DIGEST
    if _PRODUCER_DIGEST is None:
        root = Path(__file__).resolve().parents[1]
        h = hashlib.sha256()
        for sub in ("emu", "ir", "trace"):
            for f in sorted((root / sub).glob("*.py")):
                h.update(f.name.encode())
                h.update(f.read_bytes())
        _PRODUCER_DIGEST = h.hexdigest()
    return _PRODUCER_DIGEST


def workload_cache_key(name: str, size: str, seed: int, record_mem: bool = True) -> str:
    wl = workloads.get(name)
    h = hashlib.sha256()
    h.update(f"simt-fast/trace-cache/2;{__version__};{_producer_digest()};{name};{wl.kernel};{size};{seed};".encode())
    if not record_mem:  # traces without /mem are other files
        h.update(b"no-mem;")
    h.update(Path(wl.ptx_path).read_bytes())
    try:  # the input generator decides the data, hence the paths
        h.update(inspect.getsource(inspect.getmodule(wl.make)).encode())
    except (OSError, TypeError):
        pass
    return h.hexdigest()


def trace_workload(name: str, size: str, seed: int, out: Path, record_mem: bool = True,
                   emu_limits: Optional[dict] = None) -> Path:
    """Emulate a built-in workload, check its outputs against numpy, write its trace to ``out``.

    The trace holds every memory access's address (/mem) unless ``record_mem`` is False;
    ``emu_limits`` (``{"max_insts": n, "max_trace_bytes": n}``) overrides the emulator's budgets."""

    wl = workloads.get(name)
    spec = wl.launch_spec(size, seed=seed)
    tmp = out.with_name(f".{out.name}.{os.getpid()}.tmp")
    try:
        # The same attributes as `simt-fast trace`: the timing core finds the workload's PTX through
        # them (stackless places syncwarps with the variance-aware analysis of that PTX).
        try:
            launch = emu.launch(wl.ptx_path, wl.kernel, spec.grid, spec.block, spec.args, spec.shared_bytes,
                                trace=True, trace_path=tmp, record_mem=record_mem,
                                attrs={"workload": name, "size": size, "seed": int(seed)}, **(emu_limits or {}))
        except emu.EmuError as e:
            raise SweepError(f"workload '{name}' ({size}, seed {seed}) could not be traced, so nothing was cached: "
                             f"{e}") from None
        try:
            wl.check(spec)
        except AssertionError as e:
            raise SweepError(f"workload '{name}' ({size}, seed {seed}) computed wrong outputs in the emulator, "
                             f"so its trace is not used: {e}") from None
        if not tmp.exists():
            launch.trace.save(tmp)
        os.replace(tmp, out)
    finally:
        if tmp.exists():
            tmp.unlink()
    return out


def resolve_traces(sources: list, cache_dir: Optional[Path] = None,
                   on_trace: Optional[Callable[[str, str], None]] = None, allow_digest_mismatch: bool = False,
                   record_mem: bool = True, emu_limits: Optional[dict] = None) -> dict:
    """Map each source's display name to ``(path, digest)``; traces workloads not yet cached.

    Every trace is validated (raises SweepError naming the file). ``on_trace(name, event)`` is
    called with ``"tracing"``/``"cached"``/``"file"`` for progress output. Workload traces record
    memory addresses (/mem) unless ``record_mem`` is False; ``emu_limits`` overrides the emulator's
    budgets for the workloads traced now (see :func:`trace_workload`).
    """
    cache_dir = Path(cache_dir) if cache_dir else default_cache_dir()
    digests = _DigestCache(cache_dir)
    out = {}
    try:
        for s in sources:
            s: TraceSource
            if s.path is not None:
                if on_trace:
                    on_trace(s.name, "file")
                try:
                    out[s.name] = (s.path, digests.get(s.path, allow_digest_mismatch))
                except TraceError as e:  # the message names the file
                    raise SweepError(str(e)) from None
                continue
            key = workload_cache_key(s.workload, s.size, s.seed, record_mem)
            path = cache_dir / "traces" / f"{s.workload}-{s.size}-s{s.seed}-{key[:16]}.h5"
            if not path.exists():
                if on_trace:
                    on_trace(s.name, "tracing")
                path.parent.mkdir(parents=True, exist_ok=True)
                trace_workload(s.workload, s.size, s.seed, path, record_mem, emu_limits)
            elif on_trace:
                on_trace(s.name, "cached")
            try:
                out[s.name] = (path, digests.get(path))
            except TraceError as e:  # a damaged cache entry: deleting it re-traces the workload
                raise SweepError(f"{e} (a cached trace of workload '{s.workload}'; delete it to trace again)") from None
    finally:
        digests.save()
    return out
