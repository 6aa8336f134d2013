"""`simt-fast warm`: compile every kernel ahead, with a progress bar."""

from __future__ import annotations

import time

import typer


def register(app: typer.Typer) -> None:
    @app.command("warm")
    def warm_cmd():
        """Compile every numba kernel now (a few minutes once per install), so that the first `run`,
        `trace` or sweep starts in seconds."""
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        from .. import warm

        t0 = time.perf_counter()
        with Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                      console=Console(stderr=True)) as bar:
            task = bar.add_task("compiling the kernels", total=len(warm.STEPS))

            def on_done(what: str) -> None:
                bar.advance(task)
                bar.update(task, description=f"compiled the {what}")

            warm.warm(on_done)
            bar.update(task, description="compiled every kernel")
        typer.echo(f"every kernel is compiled ({time.perf_counter() - t0:.0f} s); machine code in {warm.cache_dir()}")
