"""`simt-fast import-accelsim`: every kernel of an Accel-Sim trace directory into trace files."""

from __future__ import annotations

from pathlib import Path

import typer

from ._errors import user_errors


def _describe(s) -> list:
    """The per-kernel report: what the file held, what the trace counts, and why they differ."""
    dims = "x".join(str(v) for v in s.grid), "x".join(str(v) for v in s.block)
    lines = [
        f"{Path(s.source).name}: {s.kernel} -> {s.out}",
        f"  grid {dims[0]}, block {dims[1]} ({s.n_threads} threads); CFG {s.n_blocks} blocks, {s.n_edges} edges",
        f"  warp instructions {s.warp_lines}; mask popcounts {s.mask_thread_insts} (Accel-Sim gpu_sim_insn); "
        f"thread_insts {s.thread_insts} (= mask popcounts + {s.predicated_off} predicated off)",
    ]
    if s.addressless_mem_lines:
        lines.append(f"  note: {s.addressless_mem_lines} memory warp instructions carry no address in the trace "
                     f"(LDC, texture, surface): their /mem entries are offset 0")
    if s.empty_lines:
        lines.append(f"  note: {s.empty_lines} lines with an empty mask were executed by no thread at their PC")
    if s.unknown_opcodes:
        lines.append(f"  note: opcodes outside the SASS table, taken as ALU: {', '.join(s.unknown_opcodes)}")
    return lines


def register(app: typer.Typer) -> None:
    @app.command("import-accelsim")
    def import_accelsim_cmd(
        source: Path = typer.Argument(..., help="kernelslist.g of an Accel-Sim trace directory, or one "
                                                ".traceg / .traceg.xz kernel trace."),
        out: Path = typer.Option(..., "--out", "-o", help="Directory for the trace files (one <kernel>.h5 each)."),
    ):
        """Turn Accel-Sim (NVBit) kernel traces into simt-fast trace files: CFG from the SASS PCs, each
        thread's path from the masks, op classes, registers and memory addresses."""
        from rich.console import Console
        from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn, TimeElapsedColumn

        from ..trace import accelsim

        with Progress(TextColumn("{task.description}"), BarColumn(), TaskProgressColumn(), TimeElapsedColumn(),
                      transient=True, console=Console(stderr=True)) as bar:

            def progress_for(file: Path):
                task = bar.add_task(f"reading {file.name}", total=None)

                def update(done, total, stage="reading"):  # the text's bytes, then the thread blocks written
                    bar.update(task, completed=done, total=total, description=f"{stage} {file.name}")

                return update

            def report(summary):
                bar.remove_task(bar.task_ids[-1])
                typer.echo("\n".join(_describe(summary)))

            with user_errors():
                if source.name.endswith(accelsim.TRACE_SUFFIXES):
                    report(accelsim.convert(source, out / accelsim.output_name(source), progress_for(source)))
                else:
                    accelsim.import_directory(source, out, on_kernel=report, progress_for=progress_for)
