"""Sweeps (docs/DESIGN.md §6, docs/sweeps.md): a TOML grid of configs over traces/workloads, run on a
local process pool, Dask or job-array shards, streamed into one HDF5 results file.

* :func:`load_sweep` — parse and validate a sweep file (:class:`SweepError` names file, line, key);
  :func:`load_sweeps` — the studies of a sweep or suite file;
* :func:`plan` — resolve traces (tracing workloads on demand, cached) and expand the points;
  :func:`plan_studies` — the same for several studies, with the records the results file keeps;
* :func:`run_points` / :func:`run_sweep` — simulate what is not stored yet, one writer;
* results are read with :func:`simt_fast.results.load`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional

from .. import results, sim
from ..sim.config import ConfigError
from ..trace.model import Trace
from .analyses import run_analyses as analyse
from .points import Point, expand, parse_shard, point_id, select_shard
from .runner import SweepOutcome, default_jobs, run_points
from .spec import (SweepError, SweepSpec, TraceSource, _line_of, load_sweep, load_sweeps, parse_sweep,
                   read_sweep_text)
from .traces import default_cache_dir, resolve_traces

__all__ = ["Point", "StudyPlan", "SweepError", "SweepOutcome", "SweepSpec", "TraceSource", "default_cache_dir",
           "default_jobs", "expand", "load_sweep", "load_sweeps", "parse_shard", "parse_sweep", "plan",
           "plan_studies", "point_id", "read_sweep_text", "resolve_traces", "run_analyses", "run_points", "run_sweep",
           "select_shard"]


def plan(spec: SweepSpec, cache_dir=None, shard: Optional[tuple] = None, on_trace=None,
         preflight: bool = True, allow_digest_mismatch: bool = False, emu_limits: Optional[dict] = None) -> list:
    """The sweep's points (this shard's, if any), with every trace resolved to a file and digest.

    Every trace is validated first (a file edited after it was written only with
    ``allow_digest_mismatch``). ``preflight`` asks the timing core to accept every distinct
    config (on the first trace) before any point runs, so e.g. a switch the core does not
    support yet is one error now, not hundreds of failed points later. ``emu_limits`` overrides the
    emulator's budgets for workloads traced now (:func:`simt_fast.sweep.traces.trace_workload`).
    """
    resolved = resolve_traces(spec.traces, cache_dir, on_trace=on_trace, allow_digest_mismatch=allow_digest_mismatch,
                              emu_limits=emu_limits)
    points = expand(spec, resolved)
    if preflight and points:
        check_configs(spec, points, allow_digest_mismatch)
    return select_shard(points, shard)


@dataclass
class StudyPlan:
    """What one ``simt-fast sweep`` of one or several studies will do."""

    specs: list  # [SweepSpec]
    points: list  # this shard's points of every study, each point once
    studies: list  # the study records the results file keeps (simt_fast.results.studies)
    analyses: list = field(default_factory=list)  # [(trace_id, TraceSource, path, [analysis names])]

    @property
    def baseline(self) -> Optional[dict]:
        """The studies' common baseline (None when they differ: each study keeps its own)."""
        baselines = {tuple(sorted(s.baseline.items())) for s in self.specs}
        return dict(baselines.pop()) if len(baselines) == 1 else None


def plan_studies(specs: list, cache_dir=None, shard: Optional[tuple] = None, on_trace=None,
                 preflight: bool = True, allow_digest_mismatch: bool = False,
                 emu_limits: Optional[dict] = None) -> StudyPlan:
    """Plan several studies into one results file: their points (de-duplicated: two studies asking
    for the same simulation share the point), one record per study, and the analyses to run."""
    points, seen, records, jobs = [], set(), [], {}
    for spec in specs:
        resolved = resolve_traces(spec.traces, cache_dir, on_trace=on_trace,
                                  allow_digest_mismatch=allow_digest_mismatch, emu_limits=emu_limits)
        mine = expand(spec, resolved)
        if preflight and mine:
            check_configs(spec, mine, allow_digest_mismatch)
        records.append({"name": spec.name, "description": spec.description, "file": str(spec.path),
                        "baseline": dict(spec.baseline), "analyses": list(spec.analyses),
                        "points": sorted(p.point_id for p in mine),
                        "traces": {t.name: resolved[t.name][1] for t in spec.traces}})
        for p in select_shard(mine, shard):
            if p.point_id not in seen:
                seen.add(p.point_id)
                points.append(p)
        for t in spec.traces:
            if spec.analyses:
                path, digest = resolved[t.name]
                _, _, _, names = jobs.setdefault(digest, (digest, t, path, []))
                names += [a for a in spec.analyses if a not in names]
    return StudyPlan(list(specs), points, records, list(jobs.values()))


def run_analyses(plan: StudyPlan, out, on_analysis: Optional[Callable[[str], None]] = None) -> dict:
    """Run the planned per-trace analyses that ``out`` does not hold yet; returns them keyed by trace id."""
    stored = results.analyses(out) if Path(out).exists() else {}
    new = {}
    for digest, source, path, names in plan.analyses:
        have = stored.get(digest, {}).get("results", {})
        todo = [n for n in names if n not in have]
        if not todo:
            continue
        if on_analysis:
            on_analysis(source.name)
        new[digest] = {"trace": source.name, "workload": source.workload or "", "size": source.size,
                       "seed": source.seed, "results": {**have, **analyse(todo, path, source.workload)}}
    return new


def check_configs(spec: SweepSpec, points: list, allow_digest_mismatch: bool = False) -> None:
    """Run the timing core's own config/trace checks (``simt_fast.sim.prepare``) once per config."""
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
              command: str = "", allow_digest_mismatch: bool = False,
              emu_limits: Optional[dict] = None) -> SweepOutcome:
    """Validate ``sweep_file`` (a sweep or a suite of studies), run its analyses, then every point not
    yet in ``out`` (the library form of the CLI); ``emu_limits`` overrides the emulator's budgets
    for workloads traced into the cache."""
    specs = load_sweeps(sweep_file)
    if isinstance(shard, str):
        shard = parse_shard(shard)
    planned = plan_studies(specs, cache_dir, shard, allow_digest_mismatch=allow_digest_mismatch,
                           emu_limits=emu_limits)
    kw = {} if simulate is None else {"simulate": simulate}
    return run_points(planned.points, out, jobs=jobs, dask=dask, dask_processes=dask_processes, progress=progress,
                      baseline=planned.baseline, sweep_text=read_sweep_text(sweep_file), command=command,
                      studies=planned.studies, analyses=run_analyses(planned, out),
                      allow_digest_mismatch=allow_digest_mismatch, **kw)
