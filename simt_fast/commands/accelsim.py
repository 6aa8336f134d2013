"""`simt-fast import-accelsim`: every kernel of an Accel-Sim trace directory into trace files;
`simt-fast export-accelsim`: a trace file out as an Accel-Sim trace directory."""

from __future__ import annotations

from pathlib import Path

import typer

from ._errors import user_errors
from ._files import ALLOW_DIGEST_MISMATCH, check_output_dir


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


def _describe_export(s) -> list:
    """The export report: what was written, and the counts Accel-Sim's gpu_sim_insn must match."""
    from ..trace.ptx_to_sass import BINARY_VERSIONS

    dims = "x".join(str(v) for v in s.grid), "x".join(str(v) for v in s.block)
    lines = [
        f"{s.source}: {s.kernel} -> {s.out} (binary version {s.binary_version}"
        f"{', ' + BINARY_VERSIONS[s.binary_version] if s.binary_version in BINARY_VERSIONS else ''})",
        f"  grid {dims[0]}, block {dims[1]}; {s.warp_lines} warp instructions (single-path IPDOM order); "
        f"{s.registers} registers, {s.shmem_bytes} bytes of shared memory",
        f"  mask popcounts {s.mask_thread_insts} (Accel-Sim's gpu_sim_insn) = thread_insts {s.ipdom_thread_insts} - "
        f"{s.guard_false} with a false guard (NO_ACCESS entries, threads falling through a branch)",
    ]
    if s.unknown_ops:
        lines.append(f"  note: PTX operations outside the opcode table, exported as their class's default: "
                     f"{', '.join(s.unknown_ops)}")
    if s.registers_folded:
        lines.append(f"  note: the kernel keeps {s.registers_needed} registers live at once, more than R0..R254: "
                     f"their numbers fold modulo 255, so some instructions gain dependencies")
    return lines


def register(app: typer.Typer) -> None:
    @app.command("export-accelsim")
    def export_accelsim_cmd(
        trace_file: Path = typer.Argument(..., help="Trace file (HDF5) with memory addresses (/mem)."),
        out: Path = typer.Option(..., "--out", "-o", help="Directory for kernelslist.g and kernel-1.traceg."),
        binary_version: int = typer.Option(None, "--binary-version",
                                           help="SASS opcode table: 60, 61, 70 (V100, the default), 75, 80, 86; "
                                                "an imported Accel-Sim trace keeps its own."),
        xz: bool = typer.Option(False, "--xz", help="Write kernel-1.traceg.xz (xz-compressed)."),
        allow_digest_mismatch: bool = ALLOW_DIGEST_MISMATCH,
    ):
        """Write a trace as an Accel-Sim trace directory: per CTA and warp the warp instructions a single-path
        IPDOM warp issues, with masks, SASS opcodes, registers and addresses (docs/trace.md)."""
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        from ..trace import Trace, accelsim

        check_output_dir(out)
        # the bar appears with the first CTA written, so that a refusal is one line without a bar before it
        bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TextColumn("CTAs"),
                       TimeElapsedColumn(), transient=True, console=Console(stderr=True))
        task = None

        def progress(done: int, total: int) -> None:
            nonlocal task
            if task is None:
                bar.start()
                task = bar.add_task(f"writing {out}", total=total)
            bar.update(task, completed=done)

        try:
            with user_errors():
                trace = Trace.load(trace_file, allow_digest_mismatch=allow_digest_mismatch)
                summary = accelsim.export(trace, out, binary_version=binary_version, compress=xz, progress=progress,
                                          name=str(trace_file))
        finally:
            if task is not None:
                bar.stop()
        typer.echo("\n".join(_describe_export(summary)))

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
