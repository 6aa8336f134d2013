"""`simt-fast cfg FILE.ptx [--kernel NAME] [--json | --dot]`: basic blocks, successors, IPDOMs, loops."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

from ._errors import fail, user_errors
from ._files import check_output, write_text

# `cfg -o FILE` without --json/--dot picks the format from the file name
_FORMAT_OF_SUFFIX = {".json": "json", ".dot": "dot", ".gv": "dot"}


def cfg_summary(func, cfg) -> dict:
    """The JSON-able description of one kernel's CFG (the `--json` schema)."""
    headers = cfg.loop_headers
    blocks = []
    for b in cfg.blocks:
        ip = int(cfg.ipdom[b.id])
        blocks.append(
            {
                "id": b.id,
                "label": b.label,
                "n_instrs": b.n_instrs,
                "succs": list(b.succs),
                "ipdom": None if ip < 0 else ip,
                "loop_header": b.id in headers,
            }
        )
    return {"name": func.name, "blocks": blocks, "entry": cfg.entry, "exit": cfg.exit}


def _dot_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\t", " ")


def cfg_dot(func, cfg, instructions: bool = False) -> str:
    """Graphviz text: solid CFG edges (back edges red), dashed IPDOM edges, loop headers framed
    twice; with ``instructions`` every node lists its PTX, left-aligned."""
    name = func.name.replace('"', r"\"")
    lines = [f'digraph "{name}" {{', "  node [shape=box, fontname=monospace];"]
    headers = cfg.loop_headers
    back = set(cfg.back_edges)
    for b in cfg.blocks:
        text = b.label or f"bb{b.id}"
        if b.id == cfg.exit:
            text = "<exit>"
        shape = ", peripheries=2" if b.id in headers else ""
        body = f"{b.n_instrs} instrs"
        if instructions and b.n_instrs:
            body = "\\l".join(_dot_escape(i.text) for i in cfg.instructions(b.id)) + "\\l"
        lines.append(f'  b{b.id} [label="{b.id}: {_dot_escape(text)}\\n{body}"{shape}];')
    for b in cfg.blocks:
        for s in b.succs:
            style = ' [color="red"]' if (b.id, s) in back else ""
            lines.append(f"  b{b.id} -> b{s}{style};")
    for b in cfg.blocks:
        ip = int(cfg.ipdom[b.id])
        if ip >= 0:
            lines.append(f'  b{b.id} -> b{ip} [style=dashed, color="gray", constraint=false];')
    lines.append("}")
    return "\n".join(lines) + "\n"


def register(app: typer.Typer) -> None:
    @app.command("cfg")
    def cfg_command(
        ptx_file: Path = typer.Argument(..., help="PTX file (e.g. from `nvcc -ptx`)."),
        kernel: Optional[str] = typer.Option(None, "--kernel", "-k", help="Kernel name or unique substring (default: every kernel)."),
        as_json: bool = typer.Option(False, "--json", help="Print JSON instead of a table."),
        as_dot: bool = typer.Option(False, "--dot", help="Print Graphviz DOT instead of a table."),
        output: Optional[Path] = typer.Option(None, "--output", "-o", help="Write JSON/DOT to this file instead of stdout (a .json/.dot/.gv name picks the format)."),
        all_functions: bool = typer.Option(False, "--all", help="Also show device functions (.func), not only kernels."),
        instructions: bool = typer.Option(False, "--instructions", help="With --dot: list each block's PTX in its node."),
        inline: bool = typer.Option(False, "--inline", help="Inline direct calls first: the CFG a trace of the kernel uses."),
    ):
        """Basic blocks of each kernel with successors, immediate post-dominators and loop headers."""
        from ..ir import build_cfg, parse_ptx

        if as_json and as_dot:
            fail("choose one of --json and --dot")
        if output is not None:
            check_output(output)
            if not (as_json or as_dot):
                fmt = _FORMAT_OF_SUFFIX.get(output.suffix.lower())
                if fmt is None:
                    fail(f"-o {output}: the table is for the terminal; add --json or --dot (or name a .json or .dot "
                         f"file) to write the CFG to a file")
                as_json, as_dot = fmt == "json", fmt == "dot"
        with user_errors():
            if not ptx_file.is_file():
                raise FileNotFoundError(f"PTX file not found: {ptx_file}")
            module = parse_ptx(ptx_file)
            if kernel is not None:
                funcs = [module.find_kernel(kernel)]
            elif all_functions:
                funcs = list(module.functions.values())
            else:
                funcs = module.kernels
            if not funcs:
                fail(f"{ptx_file}: the module has no kernels (.entry); --all shows device functions")
            if inline:
                from ..ir.inline import inline_calls

                funcs = [inline_calls(module, f) for f in funcs]
            cfgs = [(f, build_cfg(f)) for f in funcs]
            if as_json:
                text = json.dumps({"kernels": [cfg_summary(f, c) for f, c in cfgs]}, indent=2) + "\n"
            elif as_dot:
                text = "".join(cfg_dot(f, c, instructions) for f, c in cfgs)
            else:
                text = None
        if text is not None:
            if output is not None:
                write_text(output, text)
            else:
                typer.echo(text, nl=False)
            return
        from rich.console import Console
        from rich.table import Table

        console = Console()
        for f, c in cfgs:
            kind = "kernel" if f.is_entry else "function"
            table = Table(
                title=f"{kind} {f.name}: {c.n_blocks} blocks, {len(f.instructions)} instructions, "
                f"{len(c.loops)} loops, entry {c.entry}, exit {c.exit}"
            )
            for col in ("id", "label", "instrs", "succs", "ipdom", "loop"):
                table.add_column(col, justify="right" if col in ("id", "instrs", "ipdom") else "left")
            headers = c.loop_headers
            for b in c.blocks:
                ip = int(c.ipdom[b.id])
                table.add_row(
                    str(b.id),
                    b.label,
                    str(b.n_instrs),
                    ", ".join(map(str, b.succs)),
                    "-" if ip < 0 else str(ip),
                    "header" if b.id in headers else "",
                )
            console.print(table)
