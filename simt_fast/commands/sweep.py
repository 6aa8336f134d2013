"""`simt-fast sweep`, `simt-fast merge`, `simt-fast report`: the results workflow from the shell."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import List, Optional

import typer

from ._errors import fail, user_errors
from ._files import ALLOW_DIGEST_MISMATCH, check_output, check_output_dir


def _errors():
    from ..results import ResultsError
    from ..sweep.spec import SweepError

    return user_errors(ResultsError, SweepError)


def register(app: typer.Typer) -> None:
    @app.command("sweep")
    def sweep_cmd(
        sweep_file: Path = typer.Argument(..., help="Sweep file (TOML): traces/workloads and a \\[grid] table of config values; or a suite file listing studies."),
        out: Path = typer.Option(..., "-o", "--out", help="Results file (HDF5); points already in it are skipped."),
        jobs: Optional[int] = typer.Option(None, "-j", "--jobs", help="Local worker processes (default: all cores)."),
        dask: Optional[str] = typer.Option(None, "--dask",
                                           help="Dask scheduler address (tcp://host:8786), or local:N for a local cluster."),
        shard: Optional[str] = typer.Option(None, "--shard", help="Run only shard I of N (I/N, I from 0), for job arrays."),
        cache_dir: Optional[Path] = typer.Option(None, "--cache-dir",
                                                 help="Where workload traces are cached (default ~/.cache/simt-fast)."),
        dry_run: bool = typer.Option(False, "--dry-run", help="Validate and list the points, run nothing."),
        quiet: bool = typer.Option(False, "-q", "--quiet", help="No progress bar."),
        allow_digest_mismatch: bool = ALLOW_DIGEST_MISMATCH,
        max_insts: Optional[int] = typer.Option(None, "--max-insts", help="Emulator budget for workloads traced "
                                                "into the cache: thread instructions (default: see docs/emu.md)."),
        max_trace_bytes: Optional[int] = typer.Option(None, "--max-trace-bytes", help="Emulator budget for workloads "
                                                      "traced into the cache: bytes held for a trace (default: an "
                                                      "eighth of the memory available)."),
    ):
        """Run every point of a sweep (or of every study of a suite file) not yet in the results file,
        streaming each result to it; per-trace analyses the sweep asks for are stored with them."""
        from ..sweep import (SweepError, load_sweeps, parse_shard, plan_studies, read_sweep_text, run_analyses,
                             run_points)

        if not dry_run:  # a dry run writes nothing (`-o /dev/null --dry-run` traces and validates)
            check_output(out, "results file", writes="results")
        with _errors():
            if jobs is not None and jobs < 1:
                raise SweepError("--jobs must be at least 1")
            if dask and jobs is not None:
                raise SweepError("--dask and --jobs are exclusive (Dask decides the workers)")
            shard_t = parse_shard(shard) if shard else None
            specs = load_sweeps(sweep_file)

            def on_trace(name, event):
                if event == "tracing" and not quiet:
                    typer.echo(f"tracing workload {name} with the emulator (cached for later runs)...", err=True)

            emu_limits = {k: v for k, v in (("max_insts", max_insts), ("max_trace_bytes", max_trace_bytes))
                          if v is not None}
            planned = plan_studies(specs, cache_dir, shard_t, on_trace=on_trace,
                                   allow_digest_mismatch=allow_digest_mismatch, emu_limits=emu_limits)
        where = f" (shard {shard})" if shard else ""
        if dry_run:
            for spec, record in zip(specs, planned.studies):
                typer.echo(f"{spec.path}: study '{spec.name}', {len(record['points'])} points over "
                           f"{len(spec.traces)} traces x {len(spec.configs)} configs"
                           + (f", analyses: {', '.join(spec.analyses)}" if spec.analyses else ""))
            typer.echo(f"{len(planned.points)} distinct points{where}")
            keys = list(dict.fromkeys(k for spec in specs for k in spec.grid))
            for p in planned.points:
                varying = ", ".join(f"{k}={getattr(p.config, k)}" for k in keys)
                typer.echo(f"  {p.point_id}  {p.trace:<20} {varying}")
            return
        with _errors():
            def on_analysis(name):
                if not quiet:
                    typer.echo(f"analysing {name}...", err=True)

            analyses = run_analyses(planned, out, on_analysis)
            outcome = run_points(planned.points, out, jobs=jobs, dask=dask, progress=not quiet and sys.stderr.isatty(),
                                 baseline=planned.baseline, sweep_text=read_sweep_text(sweep_file),
                                 command=" ".join(sys.argv), studies=planned.studies, analyses=analyses,
                                 allow_digest_mismatch=allow_digest_mismatch)
        if outcome.recovered:
            typer.echo(f"{out}: recovered the rows of an interrupted sweep", err=True)
        typer.echo(f"{out}: {outcome.ran} points run, {outcome.skipped} already stored, "
                   f"{len(outcome.failed)} failed, {outcome.total} in the sweep{where} "
                   f"({outcome.seconds:.1f} s)")
        for p, message in outcome.failed[:20]:
            typer.echo(f"  failed {p.point_id} {p.trace} mechanism={p.config.mechanism}: {message}", err=True)
        if len(outcome.failed) > 20:
            typer.echo(f"  ... and {len(outcome.failed) - 20} more failures", err=True)
        if outcome.interrupted:
            typer.echo(f"interrupted: {outcome.not_run} points not run; re-run the same command to finish", err=True)
            raise typer.Exit(130)
        if outcome.failed:
            raise typer.Exit(1)

    @app.command("merge")
    def merge_cmd(
        out: Path = typer.Argument(..., help="Output results file (created, or extended if it exists)."),
        inputs: List[Path] = typer.Argument(..., help="Results files to merge (e.g. one per shard)."),
    ):
        """Merge results files (shards) into one, de-duplicating points by id."""
        from ..results import merge

        check_output(out, "results file", writes="results")
        with _errors():
            counts = merge(out, inputs, command=" ".join(sys.argv))
        typer.echo(f"{out}: {counts['added']} points added from {counts['inputs']} files "
                   f"({counts['duplicates']} duplicates skipped), {counts['total']} points in total")

    @app.command("report")
    def report_cmd(
        results: Path = typer.Argument(..., help="Results file (HDF5) written by `simt-fast sweep`."),
        out_dir: Path = typer.Option(..., "-o", "--out", help="Directory for the figures and summary."),
        baseline: Optional[str] = typer.Option(None, "--baseline",
                                               help="Mechanism speedups are computed against (default: the sweep's)."),
        published: Optional[Path] = typer.Option(None, "--published",
                                                 help="Claim file or directory for 'Published vs simt-fast' "
                                                      "(default: data/published)."),
    ):
        """Write figures (PNG) and a Markdown + HTML summary of a results file, with the papers'
        published numbers next to the measured ones."""
        from ..report import write_report
        from ..report.published import PublishedError

        check_output_dir(out_dir, "report directory")
        with user_errors(PublishedError), _errors():
            written = write_report(results, out_dir, baseline=baseline, published=published)
        if not written:
            fail(f"{results} has no points to report on")
        typer.echo(f"report: {out_dir / 'index.html'} (and {out_dir / 'summary.md'}; {len(written) - 2} figures)")
