"""Sweeps (docs/DESIGN.md §6, docs/sweeps.md): a TOML grid of configs over traces/workloads, run on a
local process pool, Dask or job-array shards, streamed into one HDF5 results file.

* :func:`load_sweep` — parse and validate a sweep file (:class:`SweepError` names file, line, key);
* :func:`plan` — resolve traces (tracing workloads on demand, cached) and expand the points;
* :func:`run_points` / :func:`run_sweep` — simulate what is not stored yet, one writer;
* results are read with :func:`simt_fast.results.load`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

from .points import Point, expand, parse_shard, point_id, select_shard
from .runner import SweepOutcome, default_jobs, run_points
from .spec import SweepError, SweepSpec, TraceSource, load_sweep, parse_sweep
from .traces import default_cache_dir, resolve_traces

__all__ = ["Point", "SweepError", "SweepOutcome", "SweepSpec", "TraceSource", "default_cache_dir", "default_jobs",
           "expand", "load_sweep", "parse_shard", "parse_sweep", "plan", "point_id", "resolve_traces",
           "run_points", "run_sweep", "select_shard"]


def plan(spec: SweepSpec, cache_dir=None, shard: Optional[tuple] = None, on_trace=None,
         preflight: bool = True, allow_digest_mismatch: bool = False) -> list:
    """The sweep's points (this shard's, if any), with every trace resolved to a file and digest.

    Every trace is validated first (a file edited after it was written only with
    ``allow_digest_mismatch``). ``preflight`` asks the timing core to accept every distinct
    config (on the first trace) before any point runs, so e.g. a switch the core does not
    support yet is one error now, not hundreds of failed points later.
    """
    resolved = resolve_traces(spec.traces, cache_dir, on_trace=on_trace, allow_digest_mismatch=allow_digest_mismatch)
    points = expand(spec, resolved)
    if preflight and points:
        check_configs(spec, points, allow_digest_mismatch)
    return select_shard(points, shard)


def check_configs(spec: SweepSpec, points: list, allow_digest_mismatch: bool = False) -> None:
    """Run the timing core's own config/trace checks (``simt_fast.sim.prepare``) once per config."""
    from .. import sim
    from ..sim.config import ConfigError
    from ..trace.model import Trace
    from .spec import _line_of

    prepare = getattr(sim, "prepare", None)
    if prepare is None:
        return
    first = {}
    for p in points:
        first.setdefault(p.config, p)
    traces = {}
    for config, p in first.items():
        trace = traces.get(p.trace_path)
        if trace is None:
            trace = traces[p.trace_path] = Trace.load(p.trace_path, allow_digest_mismatch=allow_digest_mismatch)
        try:
            prepare(trace, config)
        except ConfigError as e:
            shown = ", ".join(f"{k}={getattr(config, k)!r}" for k in spec.grid) or "the base config"
            line = _line_of(spec.text, "grid", next(iter(spec.grid), None)) if spec.grid else None
            where = f"{spec.path}:{line}" if line else spec.path
            raise SweepError(f"{where}: grid point ({shown}) cannot be simulated on trace '{p.trace}': {e}; "
                             f"remove the value or add an [[exclude]] rule") from None


def run_sweep(sweep_file, out, *, jobs: Optional[int] = None, dask: Optional[str] = None, shard=None,
              cache_dir=None, progress: bool = False, simulate: Optional[str] = None, dask_processes: bool = True,
              command: str = "", allow_digest_mismatch: bool = False) -> SweepOutcome:
    """Validate ``sweep_file``, then run every point not yet in ``out`` (the library form of the CLI)."""
    spec = load_sweep(sweep_file)
    if isinstance(shard, str):
        shard = parse_shard(shard)
    points = plan(spec, cache_dir, shard, allow_digest_mismatch=allow_digest_mismatch)
    kw = {} if simulate is None else {"simulate": simulate}
    return run_points(points, out, jobs=jobs, dask=dask, dask_processes=dask_processes, progress=progress,
                      baseline=spec.baseline, sweep_text=spec.text, command=command,
                      allow_digest_mismatch=allow_digest_mismatch, **kw)
