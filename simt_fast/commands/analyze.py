"""`simt-fast structurize` and `simt-fast analyze`: the static analyses of Wu et al. 2012 and Lee et al. 2013.

* ``structurize FILE.ptx [-o OUT.ptx] [--json]`` -- unstructured-to-structured transformation of
  every function (Cut / Backward Copy / Forward Copy), printed as PTX, with Table 2's statistics.
* ``analyze FILE.ptx [--kernel K] [--json]`` -- per kernel: control tree and interacting edges,
  convergence / variance / affine classes, warp-sequential accesses and stackless-SIMT syncwarp
  points.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Optional

import typer

from ..ir.structurize import DEFAULT_MAX_GROWTH
from ._errors import fail, user_errors
from ._files import ALLOW_DIGEST_MISMATCH, check_output, write_text


def _load(ptx_file: Path):
    from ..ir import parse_ptx

    if not ptx_file.is_file():
        raise FileNotFoundError(f"PTX file not found: {ptx_file}")
    return parse_ptx(ptx_file)


def analyze_kernel(func, variance: bool = True, early_exit: bool = True, warp_size: int = 32) -> dict:
    """The JSON-able static analysis of one kernel (the ``analyze --json`` schema)."""
    from ..ir import build_cfg
    from ..ir.control_tree import control_tree_of_cfg
    from ..ir.convergence import analyze_convergence
    from ..ir.scalarize import scalarization_stats

    cfg = build_cfg(func)
    labels = [b.label or ("<exit>" if b.id == cfg.exit else f"B{b.id}") for b in cfg.blocks]
    tree = control_tree_of_cfg(cfg)
    conv = analyze_convergence(func, cfg, variance=variance, early_exit=early_exit)
    return {
        "kernel": func.name,
        "control_tree": tree.to_dict(labels),
        "convergence": conv.to_dict(),
        "syncwarp_blocks": [labels[b] for b in conv.syncwarp_blocks],
        "divergent_blocks": [labels[b] for b in conv.divergent_blocks if b != cfg.exit],
        "variant_branches": [labels[b] for b in conv.variant_branches],
        "scalarization": scalarization_stats(func, warp_size, conv).to_dict(),
    }


def _tree_lines(node: dict, indent: int = 1) -> list:
    if node["kind"] == "bb":
        return ["  " * indent + str(node["block"])]
    lines = ["  " * indent + node["kind"]]
    for child in node["children"]:
        lines += _tree_lines(child, indent + 1)
    return lines


def _print_analysis(report: dict, show_tree: bool = False) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console() if sys.stdout.isatty() else Console(width=140)
    tree = report["control_tree"]
    conv = report["convergence"]
    s = conv["summary"]
    console.print(f"[bold]{report['kernel']}[/bold]  "
                  f"{'structured' if tree['structured'] else '[red]unstructured[/red]'}  "
                  f"{s['convergent_blocks']}/{s['blocks']} blocks convergent  "
                  f"instructions: {s['uniform']} uniform, {s['affine']} affine, {s['variant']} variant  "
                  f"warp-sequential accesses: {s['warp_sequential']}")
    sc = report["scalarization"]
    console.print(f"  scalarization (warp {sc['warp_size']}): {sc['scalar_pct']:.1f}% scalar instructions, "
                  f"{sc['scalar_registers']} scalar + {sc['private_registers']} private registers "
                  f"({sc['scalarized_registers_per_warp']} vs {sc['registers_per_warp']} per warp)")
    for e in tree["interacting_edges"]:
        console.print(f"  interacting edge ({e['kind']}): {e['src']} -> {e['dst']}")
    if show_tree:
        console.print("  control tree:", highlight=False)
        for line in _tree_lines(tree["tree"], 2):
            console.print(line, highlight=False)
    table = Table(show_header=True, header_style="bold")
    for col in ("block", "convergent", "syncwarp", "instrs", "uniform", "affine", "variant", "warp-seq"):
        table.add_column(col, no_wrap=True)
    for b in conv["blocks"]:
        ins = b["instructions"]
        count = lambda c: str(sum(1 for i in ins if i["class"] == c))  # noqa: E731
        table.add_row(b["block"], "yes" if b["convergent"] else "[red]no[/red]", "yes" if b["syncwarp"] else "",
                      str(len(ins)), count("uniform"), count("affine"), count("variant"),
                      str(sum(1 for i in ins if i["warp_sequential"])))
    console.print(table)


def register(app: typer.Typer) -> None:
    @app.command("structurize")
    def structurize_command(
        ptx_file: Path = typer.Argument(..., help="PTX file (e.g. from `nvcc -ptx`)."),
        output: Optional[Path] = typer.Option(None, "--output", "-o", help="Write the structured PTX here (default: stdout unless --json)."),
        as_json: bool = typer.Option(False, "--json", help="Print the transformation statistics as JSON."),
        max_blocks: int = typer.Option(100_000, "--max-blocks", help="Stop if Forward Copy grows a function beyond this many blocks."),
        max_growth: float = typer.Option(DEFAULT_MAX_GROWTH, "--max-growth", help="Copies may grow a function to at most this many times its original instructions; past that, flags replace copies (linear growth)."),
        predicated_flags: bool = typer.Option(False, "--predicated-flags", help="Cut writes its flags with predicated setp in the branching block (smaller code) instead of stub blocks (fewer dynamic instructions)."),
    ):
        """Transform unstructured control flow into structured control flow (Wu et al. 2012: Cut, Backward
        Copy, Forward Copy) and report Table 2's statistics per function."""
        from ..ir.ptx_printer import print_module
        from ..ir.structurize import StructurizeError, structurize

        if output is not None:
            check_output(output)
        with user_errors(StructurizeError):
            module = _load(ptx_file)
            new, total = structurize(module, max_blocks=max_blocks, predicated_flags=predicated_flags,
                                     max_growth=max_growth)
            text = print_module(new)
        if output is not None:
            write_text(output, text)
        elif not as_json:
            sys.stdout.write(text)
        rows = {name: s.to_dict() for name, s in total.per_function.items()}
        if as_json:
            typer.echo(json.dumps({"file": str(ptx_file), "functions": rows, "total": total.to_dict()}, indent=2))
            return
        out = sys.stderr if output is None else sys.stdout
        for name, r in rows.items():
            print(f"{name}: branches={r['branch_instructions']} cuts={r['cuts']} forward_copies={r['forward_copies']} "
                  f"backward_copies={r['backward_copies']} guards={r['guards']} entry_dispatches={r['entry_dispatches']} "
                  f"code {r['old_code_size']} -> {r['new_code_size']} ({r['static_expansion_pct']:+.2f}%, growth "
                  f"x{r['growth']:.2f}; copies limited to x{r['max_growth']:g}) in {r['transform_ms']:.2f} ms", file=out)

    @app.command("analyze")
    def analyze_command(
        ptx_file: Path = typer.Argument(..., help="PTX file (e.g. from `nvcc -ptx`), or a trace (.h5): dynamic scalarization statistics (Lee et al. 2013 Fig. 6, `simt-fast scalarize`)."),
        kernel: Optional[str] = typer.Option(None, "--kernel", "-k", help="Kernel name or unique substring (default: every kernel)."),
        as_json: bool = typer.Option(False, "--json", help="Print JSON instead of tables."),
        trace_ptx: Optional[Path] = typer.Option(None, "--ptx", help="Trace input: the PTX it was recorded from (default: its workload's)."),
        variance: bool = typer.Option(True, "--variance/--no-variance", help="Use variance analysis (off: every branch counts as divergent, structure-only convergence)."),
        early_exit: bool = typer.Option(True, "--early-exit/--no-early-exit", help="Apply Lee et al. 2013 §3.4 (threads that exit early do not break convergence)."),
        output: Optional[Path] = typer.Option(None, "--output", "-o", help="Write the JSON to this file."),
        warp_size: int = typer.Option(32, "--warp-size", min=1, help="Warp size for the per-warp register counts."),
        show_tree: bool = typer.Option(False, "--tree", help="Also print the control tree (table mode)."),
        inline: bool = typer.Option(False, "--inline", help="Analyse each kernel with its calls inlined (the CFG the emulator traces; Wu et al. 2012 Fig. 4)."),
        allow_digest_mismatch: bool = ALLOW_DIGEST_MISMATCH,
    ):
        """Static analyses per kernel: control tree and interacting edges (Wu et al. 2012), convergence,
        variance and affine classes, warp-sequential accesses and syncwarp points (Lee et al. 2013)."""
        if output is not None:
            check_output(output)
        if ptx_file.suffix in (".h5", ".hdf5"):
            from .dynamic import scalarize_report

            scalarize_report(ptx_file, trace_ptx, kernel, "4,8,16,32", as_json, output, allow_digest_mismatch)
            return
        with user_errors():
            module = _load(ptx_file)
            funcs = [module.find_kernel(kernel)] if kernel is not None else module.kernels
            if not funcs:
                fail(f"{ptx_file}: the module has no kernels (.entry)")
            if inline:
                from ..ir.inline import inline_calls

                funcs = [inline_calls(module, f) for f in funcs]
            reports = [analyze_kernel(f, variance, early_exit, warp_size) for f in funcs]
        if as_json or output is not None:
            text = json.dumps({"file": str(ptx_file), "kernels": reports}, indent=2) + "\n"
            if output is not None:
                write_text(output, text)
            else:
                sys.stdout.write(text)
            return
        for r in reports:
            _print_analysis(r, show_tree)
