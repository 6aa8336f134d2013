"""`simt-fast workloads` and `simt-fast trace`: list the built-in kernels, emulate one into a trace file."""

from __future__ import annotations

import signal
from pathlib import Path
from typing import List, Optional

import typer

from ._errors import fail, user_errors
from ._files import check_output, check_output_dir


ARG_HELP = ("Kernel argument of a .ptx input, one per .param in order: buf:DTYPE:N (zeros), rand:DTYPE:N[:LO:HI] "
            "(random: integers LO..HI inclusive, default 0..65535, 0..32767 for 16-bit and 0..127 for 8-bit "
            "types; floats [LO, HI), default [0, 1); seeded by --seed), sorted:DTYPE:N[:LO:HI] (the same, "
            "sorted), iota:DTYPE:N[:START[:STEP]] (START, START+STEP, ...), npy:FILE (a numpy.save file), or "
            "DTYPE:VALUE (a scalar). DTYPE: u8..u64, s8..s64, b8..b64, f16, f32, f64 (or int32, float32, ...). "
            "Buffers go to pointer parameters, scalars to the others.")


class _Stopped(Exception):
    """SIGTERM arrived during a launch (SIGINT arrives as KeyboardInterrupt)."""


def _progress_launch(description: str, out: Path, run):
    """Run ``run(progress_callback)`` under a rich progress bar (threads emulated / total).

    SIGINT and SIGTERM stop it the same way: the launch drops its temporary trace file, the target
    is left as it was, one line says so, and the exit status is 128 + the signal number."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

    def on_term(signum, frame):
        raise _Stopped()

    from rich.console import Console

    previous = signal.signal(signal.SIGTERM, on_term)
    console = Console(stderr=True)
    try:
        # on stderr, and only on a terminal: piped output starts with the result, not a blank line
        with Progress(
            TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TextColumn("threads"),
            TimeElapsedColumn(), TimeRemainingColumn(), transient=True, console=console,
            disable=not console.is_terminal,
        ) as bar:
            task = bar.add_task(description, total=None)

            def progress(done, total):
                bar.update(task, completed=done, total=total)

            return run(progress)
    except (KeyboardInterrupt, _Stopped) as e:
        signum = signal.SIGTERM if isinstance(e, _Stopped) else signal.SIGINT
        fail(f"interrupted by {signum.name}: the trace was not written ({out} is unchanged)", code=128 + signum)
    finally:
        signal.signal(signal.SIGTERM, previous)


def register(app: typer.Typer) -> None:
    @app.command("workloads")
    def workloads_cmd():
        """List the built-in workloads (name, description, features)."""
        from .. import workloads

        for name in workloads.names():
            try:
                wl = workloads.get(name)
            except Exception as e:  # a half-written workload should not hide the others
                typer.echo(f"{name:<14} (cannot load: {e})")
                continue
            feats = ", ".join(wl.features)
            ptx = "" if wl.ptx_path.exists() else "  [PTX missing: run scripts/build_ptx.py]"
            typer.echo(f"{name:<14} {wl.description}" + (f"  [{feats}]" if feats else "") + ptx)

    @app.command("trace")
    def trace_cmd(
        source: str = typer.Argument(..., help="A workload name (see `simt-fast workloads`) or a .ptx file."),
        size: str = typer.Option("default", "--size", "-s", help="Workload size: tiny or default."),
        seed: int = typer.Option(0, "--seed", help="Input seed: a workload's input generator, or every rand:/sorted: "
                                 "--arg of a .ptx input (each argument its own stream)."),
        output: Optional[Path] = typer.Option(None, "--output", "-o", help="Trace file to write (default: "
                                              "<workload>-<size>.h5; for a .ptx input <file stem>.h5, or "
                                              "<file stem>-<kernel>.h5 with --kernel)."),
        kernel: Optional[str] = typer.Option(None, "--kernel", "-k", help="Kernel name or unique substring (.ptx input)."),
        grid: Optional[str] = typer.Option(None, "--grid", help="CTAs, e.g. 64 or 8,8 (.ptx input)."),
        block: Optional[str] = typer.Option(None, "--block", help="Threads per CTA, e.g. 256 or 16,16 (.ptx input)."),
        arg: List[str] = typer.Option([], "--arg", help=ARG_HELP),
        shared: int = typer.Option(0, "--shared-bytes", help="Dynamic shared memory per CTA (.ptx input)."),
        mem: bool = typer.Option(True, "--mem/--no-mem", help="Record the address of every memory access (/mem; on by default)."),
        check: bool = typer.Option(True, "--check/--no-check", help="Compare a workload's outputs with its numpy reference."),
        save_outputs: Optional[Path] = typer.Option(None, "--save-outputs", help="Directory to write the kernel's "
                                                    "buffers to after the run, DIR/argK.npy for argument K "
                                                    "(numpy.load reads them)."),
        max_insts: Optional[int] = typer.Option(None, "--max-insts", help="Stop with an error after this many thread "
                                                "instructions (default: the most a trace within --max-trace-bytes can hold)."),
        force: bool = typer.Option(False, "--force", help="Replace an existing output file that is not a trace."),
        max_trace_bytes: Optional[int] = typer.Option(None, "--max-trace-bytes", help="Stop with an error when what the "
                                                      "emulator holds for the trace (the running batch's event logs) "
                                                      "outgrows this (default: an eighth of the memory available)."),
    ):
        """Emulate a workload (or a PTX kernel) and write its trace (HDF5) with every thread's block path.

        For a .ptx file give --grid, --block and one --arg per kernel parameter, e.g.
        `simt-fast trace divergent.ptx -k collatz --grid 16 --block 128 --arg rand:u32:2048:1:100000
        --arg buf:u32:2048 --arg buf:u32:32 --arg s32:2048 --arg s32:32`.
        """
        import time

        from .. import workloads
        from ..emu import EmuError, launch, load_kernel
        from ._kernel_args import parse_args, save_buffers

        t0 = time.perf_counter()
        if save_outputs is not None:
            check_output_dir(save_outputs, "--save-outputs directory")
        if source.endswith(".ptx"):
            if grid is None or block is None:
                fail("a .ptx input needs --grid and --block (and one --arg per kernel parameter)")
            out = check_output(output or Path(f"{Path(source).stem}{'-' + kernel if kernel else ''}.h5"),
                               "trace file", writes="trace", force=force)
            with user_errors(EmuError, ValueError):
                kern = load_kernel(Path(source), kernel)
                args = parse_args(arg, kern.func, seed)
                attrs = {"args": " ".join(arg), "seed": int(seed)}
                run = _progress_launch(
                    f"emulating {Path(source).name}", out,
                    lambda progress: launch(kern, None, _dims(grid), _dims(block), args, shared,
                                            trace_path=out, record_mem=mem, max_insts=max_insts, progress=progress,
                                            attrs=attrs, max_trace_bytes=max_trace_bytes),
                )
            label = Path(source).name
        else:
            if source not in workloads.names():
                fail(f"unknown workload '{source}' (valid: {', '.join(workloads.names())}); or pass a .ptx file")
            wl = workloads.get(source)
            out = check_output(output or Path(f"{source}-{size}.h5"), "trace file", writes="trace", force=force)
            with user_errors(EmuError, ValueError):
                spec = wl.launch_spec(size, seed=seed)
                args = spec.args
                attrs = {"workload": source, "size": size, "seed": int(seed)}
                run = _progress_launch(
                    f"emulating {source} ({size})", out,
                    lambda progress: launch(wl.ptx_path, wl.kernel, spec.grid, spec.block, spec.args, spec.shared_bytes,
                                            trace_path=out, record_mem=mem, max_insts=max_insts, progress=progress,
                                            attrs=attrs, max_trace_bytes=max_trace_bytes),
                )
            if check:
                try:
                    wl.check(spec)
                except AssertionError as e:
                    fail(f"the emulated outputs differ from the numpy reference: {e}")
            label = f"{source} ({size})"
        dt = time.perf_counter() - t0
        n_threads = 1
        for v in run.grid + run.block:
            n_threads *= v
        typer.echo(
            f"{out}: {label}, kernel {run.kernel}, {n_threads} threads, {run.thread_insts} thread instructions "
            f"in {dt:.2f} s (including parsing and loading the compiled emulator)"
        )
        if save_outputs is not None:
            with user_errors():
                written = save_buffers(save_outputs, args)
            typer.echo(f"{save_outputs}: wrote the {len(written)} buffer(s) after the run: "
                       f"{', '.join(p.name for p in written) or 'none'}")


def _dims(text: str) -> tuple:
    try:
        return tuple(int(v) for v in text.replace("x", ",").split(",") if v.strip())
    except ValueError:
        raise typer.BadParameter(f"'{text}' is not a list of integers like 64 or 8,8") from None
