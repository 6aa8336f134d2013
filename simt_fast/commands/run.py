"""`simt-fast run`: replay a trace under one or several mechanisms and compare them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import List, Optional

import typer

from ._errors import fail, user_errors
from ._files import ALLOW_DIGEST_MISMATCH


def parse_sets(items: List[str]) -> dict:
    """``--set key=value`` pairs -> dict (values coerced later by the config, which names the field)."""
    out = {}
    for item in items:
        if "=" not in item:
            fail(f"--set expects key=value (got '{item}')")
        key, value = item.split("=", 1)
        out[key.strip()] = value.strip()
    return out


def _stderr_console():
    from rich.console import Console

    return Console(stderr=True)


def register(app: typer.Typer) -> None:
    @app.command("run")
    def run_cmd(
        trace_file: Path = typer.Argument(..., help="Trace file (.h5) written by `simt-fast trace` or `synth`."),
        mechanism: List[str] = typer.Option(
            [], "--mechanism", "-m", help="Mechanism(s) to compare; repeat the option (default: the config's)."),
        config: Optional[str] = typer.Option(None, "--config", "-c", help="Preset name (gt200, fermi, modern) or TOML file."),
        set_: List[str] = typer.Option([], "--set", help="Override a config field: key=value (repeatable)."),
        as_json: bool = typer.Option(False, "--json", help="Print JSON {results: [{mechanism, config, stats}]}."),
        allow_digest_mismatch: bool = ALLOW_DIGEST_MISMATCH,
    ):
        """Simulate TRACE_FILE under each mechanism; print cycles, IPC, SIMD utilisation and speedup."""
        from ..sim import SimulationError, simulate
        from ..sim.config import load_config
        from ..sim.memory_program import note as memory_note
        from ..sim.registry import get
        from ..trace import Trace
        from ..trace.accelsim_text import addressless_note
        from ..trace.validate import require_valid

        with user_errors(SimulationError):
            base = load_config(config, parse_sets(set_))
            mechs = list(mechanism) or [base.mechanism]
            configs = [base.replace(mechanism=m) for m in mechs]
            for c in configs:
                get(c.mechanism)  # reject unknown/unimplemented names before any work
            trace = Trace.load(trace_file, allow_digest_mismatch=allow_digest_mismatch)
            require_valid(trace, name=str(trace_file))  # simulate() checks too; here messages name the file
            notes = [memory_note(c, trace) for c in configs]
            if not all(c.perfect_memory for c in configs):
                notes.append(addressless_note(trace))
            for text in dict.fromkeys(filter(None, notes)):
                _stderr_console().print(f"note: {trace_file.name}: {text}", highlight=False)
            results = []
            from rich.progress import Progress

            # one step per mechanism; transient, on stderr, so --json output stays clean
            with Progress(transient=True, console=_stderr_console()) as progress:
                task = progress.add_task("simulating", total=len(configs))
                for c in configs:
                    progress.update(task, description=f"simulating {c.mechanism}")
                    results.append((c, simulate(trace, c)))
                    progress.advance(task)

        if as_json:
            typer.echo(json.dumps({"trace": str(trace_file), "results": [
                {"mechanism": c.mechanism, "config": c.to_dict(), "stats": s.to_dict()} for c, s in results]}, indent=2))
            return

        from rich.console import Console
        from rich.table import Table

        first = results[0][1].cycles
        table = Table(title=f"{trace_file.name}: kernel {trace.kernel}, {trace.n_threads} threads, "
                            f"warp {base.warp_size}, SIMD {base.simd_width}, {base.n_sms} SM")
        table.caption = f"speedup = cycles of {results[0][0].mechanism} / cycles"
        for col in ("mechanism", "cycles", "IPC", "SIMD util", "warp insts", "idle", "splits", "expanded",
                    "sectors/req", "speedup"):
            table.add_column(col, justify="left" if col == "mechanism" else "right")
        for c, s in results:
            # sectors per global/local request: "-" without the memory model (perfect memory, no /mem)
            spr = f"{s.mem_sectors / s.mem_requests:.2f}" if s.mem_requests else "-"
            table.add_row(c.mechanism, f"{s.cycles:,}", f"{s.ipc:.2f}", f"{s.simd_util:.1%}", f"{s.warp_insts:,}",
                          f"{s.idle_cycles:,}", str(s.max_splits), f"{s.expanded_insts:,}", spr,
                          f"{first / s.cycles:.3f}x" if s.cycles else "-")
        import shutil

        # wide enough for every column even when piped (rich falls back to 80 columns)
        Console(width=max(shutil.get_terminal_size((120, 24)).columns, 120)).print(table)
