"""`simt-fast run`: replay a trace under one or several mechanisms and compare them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import List, Optional

import typer
from typer.core import TyperCommand

from ._errors import fail, user_errors
from ._files import ALLOW_DIGEST_MISMATCH


# What `run`'s columns mean: the less obvious ones under the table, all of them in `run --help`.
LEGEND = ("idle = SM-cycles with warps but no SIMD unit busy; splits = most splits of one warp at once; "
          "expanded = instructions re-run on blocks their warp ran before reconverging; sectors/req = 32-byte "
          "sectors per global/local memory request (- without the memory model)")
LEGEND_MORE = ("cycles = until the last thread exits; IPC = thread instructions per cycle, whole machine; "
               "SIMD util = active threads per issued warp instruction / warp size; warp insts = issued warp "
               "(or split) instructions")
# Counters only some mechanisms count (sim/mechanisms.py `counters`): column title, legend entry.
COUNTER_COLUMNS = {
    "early_reconvergences": ("early reconv", "early reconv = splits merged before their reconvergence point"),
    "merges": ("merges", "merges = thread groups merged into a forming warp"),
    "lane_conflicts": ("lane conflicts", "lane conflicts = merges refused (dwf) or threads moved to another quarter "
                                         "(en-dwf) because their lanes were taken"),
}
RUN_HELP = (
    "Simulate TRACE_FILE under each mechanism; print a table of cycles, IPC, SIMD utilisation and speedup, "
    "then the machine and how the kernel fills it.\n\n"
    "Without --config the machine is the single-sm preset (SimConfig's defaults: one SM; `simt-fast config "
    "list` shows every preset). Columns: " + LEGEND_MORE + "; " + LEGEND + "; and where a mechanism counts them: "
    + "; ".join(legend for _, legend in COUNTER_COLUMNS.values()) + " (mp-oer: early reconv; dwf, en-dwf: merges, "
    "lane conflicts)."
)


def parse_sets(items: List[str]) -> dict:
    """``--set key=value`` pairs -> dict (values coerced later by the config, which names the field)."""
    out = {}
    for item in items:
        if "=" not in item:
            fail(f"--set takes KEY=VALUE as one word (got '{item}'), e.g. --set simd_width=8")
        key, value = item.split("=", 1)
        out[key.strip()] = value.strip()
    return out


class SetHintCommand(TyperCommand):
    """A command whose ``--set KEY VALUE`` (two words) is answered with the ``KEY=VALUE`` it needs,
    not with the parser's "unexpected extra argument"."""

    def parse_args(self, ctx, args):
        for i, word in enumerate(args[:-1]):
            key = args[i + 1]
            if word == "--set" and "=" not in key and not key.startswith("-"):
                value = args[i + 2] if i + 2 < len(args) and not args[i + 2].startswith("-") else "VALUE"
                fail(f"--set takes KEY=VALUE as one word: --set {key}={value}")
        return super().parse_args(ctx, args)


def mechanism_names(options: List[str]) -> List[str]:
    """``-m`` values (repeated, or comma lists like ``sps,dwf``) -> names, each checked in one sentence."""
    from .._text import did_you_mean
    from ..sim.mechanisms import NAMES

    names = [m.strip() for option in options for m in option.split(",") if m.strip()]
    for m in names:
        if m not in NAMES:
            fail(f"-m: no mechanism named '{m}'{did_you_mean(m, NAMES)} (mechanisms: {', '.join(NAMES)})")
    return names


def machine_name(config: Optional[str], sets: List[str]) -> str:
    """The machine a run uses, as the user named it: ``gt200``, ``my.toml``, ``single-sm`` (the
    default), with any ``--set`` after it."""
    from ..sim.config import DEFAULT_PRESET

    name = config or f"{DEFAULT_PRESET} (the default)"
    return name + (f" with --set {' '.join(sets)}" if sets else "")


def fill_lines(config, trace, results) -> List[str]:
    """How the kernel's CTAs fill the machine (round robin over the SMs, up to the per-SM limit),
    and a note when most SMs sit idle: most run no CTA, or those that do had no SIMD unit busy
    in most of their cycles under some mechanism (``idle_cycles``: latency, not SIMD width, sets
    the cycles then)."""
    from ..sim.config import cta_limit

    n_ctas, n_sms = trace.n_ctas, config.n_sms
    warps_per_cta = -(-trace.threads_per_cta // config.warp_size)
    limit = cta_limit(config, trace.threads_per_cta)
    resident = min(limit, -(-n_ctas // n_sms))
    lines = [f"{n_ctas} CTA{'s' * (n_ctas != 1)} of {trace.threads_per_cta} threads on {n_sms} SM{'s' * (n_sms != 1)}: "
             f"at most {resident} CTA{'s' * (resident != 1)} / {resident * warps_per_cta} warps resident per SM "
             f"(an SM holds up to {limit} such CTA{'s' * (limit != 1)}, {config.max_warps_per_sm} warps)"]
    used = min(n_ctas, n_sms)
    idle = {c.mechanism: s.idle_cycles / (s.cycles * used) for c, s in results if s.cycles}
    mostly_idle = {m: share for m, share in idle.items() if share > 0.5}
    why = []
    if used < n_sms / 2:
        why.append(f"{n_sms - used} of {n_sms} SMs run no CTA")
    if mostly_idle:
        shares = ", ".join(f"{m} {share:.0%}" for m, share in mostly_idle.items())
        why.append(f"the SMs that run CTAs had no SIMD unit busy in most of their cycles ({shares})")
    if why:
        if used < n_sms or resident < limit:
            fix = f"a larger grid, or --set n_sms={used}," if used < n_sms else "a larger grid"
            state = f"the machine is under-filled ({fix} fills it), so cycles measure latency more than SIMD efficiency"
        else:
            state = "every SM is full, so the kernel is latency-bound and cycles measure latency more than SIMD efficiency"
        lines.append(f"note: {' and '.join(why)}: {state}")
    return lines


ACCELSIM_INPUTS = (".traceg", ".traceg.xz", ".g")  # trace.accelsim.TRACE_SUFFIXES, and kernelslist.g


def _read_trace(trace_file: Path, allow_digest_mismatch: bool) -> tuple:
    """(Trace, note or None): a trace file, or an Accel-Sim kernel trace imported in memory (a user's
    first answer in one process: docs/trace.md, *Accel-Sim traces*). A kernelslist.g must list one
    kernel: which of several to run is the user's choice."""
    from ..trace import Trace

    name = trace_file.name
    if not name.endswith(ACCELSIM_INPUTS):
        return Trace.load(trace_file, allow_digest_mismatch=allow_digest_mismatch), None
    from ..trace import accelsim  # (only here: `run` on a trace file starts without the importer)
    from ..trace.model import TraceError

    files = [trace_file] if name.endswith(accelsim.TRACE_SUFFIXES) else accelsim.kernel_files(trace_file)
    if len(files) > 1:
        raise TraceError(f"{trace_file} lists {len(files)} kernels ({files[0].name}, {files[1].name}, ...); run one "
                         f"of them, or import them all with `simt-fast import-accelsim {trace_file} -o DIR`")
    stderr = _stderr_console()
    with _progress_bar(stderr) as bar:
        task = bar.add_task(f"importing {files[0].name}", total=None)

        def progress(done, total, stage="reading"):  # the text's bytes, then the thread blocks
            bar.update(task, completed=done, total=total, description=f"{stage} {files[0].name}")

        trace = accelsim.load(files[0], progress)
    return trace, (f"imported in memory for this run; `simt-fast import-accelsim {trace_file} -o DIR` writes it as "
                   f"a trace file, which later runs load in a fraction of the time")


def _stderr_console():
    from rich.console import Console

    return Console(stderr=True)


class _NoBar:
    """What `run` asks of a progress bar, doing nothing (output that is not a terminal)."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def add_task(self, *args, **kwargs):
        return 0

    def update(self, *args, **kwargs):
        pass

    def advance(self, *args, **kwargs):
        pass


def _progress_bar(stderr):
    """rich's transient bar on a terminal; else nothing, and rich.progress is not imported (a
    twentieth of `run`'s start-up, bench/bench_startup.py)."""
    if not stderr.is_terminal:
        return _NoBar()
    from rich.progress import Progress

    return Progress(transient=True, console=stderr)


def register(app: typer.Typer) -> None:
    @app.command("run", cls=SetHintCommand, help=RUN_HELP)
    def run_cmd(
        trace_file: Path = typer.Argument(..., help="Trace file (.h5) written by `simt-fast trace`, `synth` or "
                                          "`import-accelsim`; or an Accel-Sim kernel trace (.traceg, .traceg.xz, a "
                                          "kernelslist.g listing one), imported in memory for this run."),
        mechanism: List[str] = typer.Option(
            [], "--mechanism", "-m", help="Mechanism(s) to compare: repeat the option or give a comma list "
                                          "(-m sps,mp-oer,dwf); default: the config's."),
        config: Optional[str] = typer.Option(None, "--config", "-c", help="Preset name (single-sm, gt200, fermi, "
                                             "modern; `simt-fast config list`) or TOML file; default single-sm."),
        set_: List[str] = typer.Option([], "--set", help="Override a config field: KEY=VALUE (repeatable; "
                                       "`simt-fast config show NAME` lists the fields)."),
        as_json: bool = typer.Option(False, "--json", help="Print JSON {trace, machine, results: [{mechanism, config, stats}]}."),
        allow_digest_mismatch: bool = ALLOW_DIGEST_MISMATCH,
    ):
        from ..sim import SimulationError, simulate
        from ..sim.config import load_config
        from ..sim.memory.program import note as memory_note
        from ..sim.mechanisms import BY_NAME
        from ..sim.registry import get
        from ..trace import Trace
        from ..trace.accelsim_text import addressless_note
        from ..trace.validate import require_valid

        mechs = mechanism_names(mechanism)
        with user_errors(SimulationError):
            base = load_config(config, parse_sets(set_), overrides_source="--set")
            configs = [base.replace(mechanism=m) for m in mechs or [base.mechanism]]
            for c in configs:
                get(c.mechanism)  # reject unknown/unimplemented names before any work
            trace, imported = _read_trace(trace_file, allow_digest_mismatch)
            require_valid(trace, name=str(trace_file))  # simulate() checks too; here messages name the file
            notes = [imported] + [memory_note(c, trace) for c in configs]
            if not all(c.perfect_memory for c in configs):
                notes.append(addressless_note(trace))
            for text in dict.fromkeys(filter(None, notes)):
                _stderr_console().print(f"note: {trace_file.name}: {text}", highlight=False)
            results = []
            # one step per mechanism; transient, on stderr and only on a terminal, so --json output stays
            # clean and piped output starts with the table
            with _progress_bar(_stderr_console()) as progress:
                task = progress.add_task("simulating", total=len(configs))
                for c in configs:
                    progress.update(task, description=f"simulating {c.mechanism}")
                    results.append((c, simulate(trace, c)))
                    progress.advance(task)

        machine = machine_name(config, set_)
        if as_json:
            typer.echo(json.dumps({"trace": str(trace_file), "machine": machine, "results": [
                {"mechanism": c.mechanism, "config": c.to_dict(), "stats": s.to_dict()} for c, s in results]}, indent=2))
            return

        from rich.console import Console
        from rich.table import Table

        counters = list(dict.fromkeys(k for c, _ in results for k in BY_NAME[c.mechanism].counters))
        first = results[0][1].cycles
        table = Table(title=f"{trace_file.name}: kernel {trace.kernel}, {trace.n_threads} threads; machine {machine}: "
                            f"warp {base.warp_size}, SIMD {base.simd_width}, {base.n_sms} SM{'s' * (base.n_sms != 1)}")
        for col in ("mechanism", "cycles", "IPC", "SIMD util", "warp insts", "idle", "splits", "expanded",
                    "sectors/req", *(COUNTER_COLUMNS[k][0] for k in counters), "speedup"):
            table.add_column(col, justify="left" if col == "mechanism" else "right")
        for c, s in results:
            # sectors per global/local request: "-" without the memory model (perfect memory, no /mem)
            spr = f"{s.mem_sectors / s.mem_requests:.2f}" if s.mem_requests else "-"
            own = BY_NAME[c.mechanism].counters
            table.add_row(c.mechanism, f"{s.cycles:,}", f"{s.ipc:.2f}", f"{s.simd_util:.1%}", f"{s.warp_insts:,}",
                          f"{s.idle_cycles:,}", str(s.max_splits), f"{s.expanded_insts:,}", spr,
                          *(f"{getattr(s, k):,}" if k in own else "-" for k in counters),
                          f"{first / s.cycles:.3f}x" if s.cycles else "-")
        legend = "; ".join([f"speedup = cycles of {results[0][0].mechanism} / cycles", LEGEND,
                            *(COUNTER_COLUMNS[k][1] for k in counters)])
        console = Console()
        if not console.is_terminal:  # piped: as wide as every column needs (rich would assume 80 columns)
            console = Console(width=max(120, Console(width=1000).measure(table).maximum))
        console.print(table)
        for line in (legend, *fill_lines(base, trace, results)):  # one line each (the terminal wraps them)
            console.print(line, highlight=False, markup=False, soft_wrap=True)
