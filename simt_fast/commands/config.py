"""`simt-fast config list` and `simt-fast config show`: the machine presets and where their numbers come from."""

from __future__ import annotations

import re
from pathlib import Path
from typing import List, Optional

import typer

from ._errors import user_errors
from .run import SetHintCommand, parse_sets


def _shown(path: Path) -> str:
    """A preset's file as the user would type it: relative to the working directory when inside it."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def first_sentence(text: str) -> str:
    """The first sentence of a citation (a period followed by a capital letter ends it; `et al. 2014` does not)."""
    return re.split(r"(?<=\.)\s+(?=[A-Z])", text.strip(), maxsplit=1)[0]


def summary(config) -> str:
    """One line of what a machine is: SMs, warp and SIMD width, memory."""
    sms = f"{config.n_sms} SM{'s' * (config.n_sms != 1)}"
    if config.perfect_memory:
        memory = "perfect memory"
    else:
        caches = [f"{name} {size // 1024} KiB" for name, size in (("L1", config.l1_bytes), ("L2", config.l2_bytes)) if size]
        memory = "memory model (" + (", ".join(caches) or "no caches") + ")"
    return f"{sms}, warp {config.warp_size}, SIMD {config.simd_width}, {memory}"


def register(app: typer.Typer) -> None:
    config_app = typer.Typer(no_args_is_help=True, help="The machine presets (data/configs/*.toml): list them, or "
                                                        "print one with the source of its numbers.")
    app.add_typer(config_app, name="config")

    @config_app.command("list")
    def list_cmd():
        """Every preset: its machine in one line, its file, and the first sentence of its source."""
        import textwrap

        from ..sim.config import DEFAULT_PRESET, config_fields, from_dict, presets, read_config_file

        rows = []
        with user_errors():
            found = presets()
            for name in sorted(found, key=lambda n: n != DEFAULT_PRESET):  # the default first
                path = found[name]
                _, data = read_config_file(str(path))
                rows.append((name, path, from_dict(config_fields(data), source=str(path)), str(data.get("source", ""))))
        width = max(len(name) for name, *_ in rows) + 2
        for name, path, config, source in rows:
            default = "  (the default: SimConfig(), `run` without -c)" if name == DEFAULT_PRESET else ""
            typer.echo(f"{name:<{width}}{summary(config)}  [{_shown(path)}]{default}")
            if source:
                typer.echo(textwrap.fill(first_sentence(source), 100, initial_indent=" " * width,
                                         subsequent_indent=" " * width))
        typer.echo("`simt-fast config show NAME` prints a preset's every field and its full source.")

    @config_app.command("show", cls=SetHintCommand)
    def show_cmd(
        name: Optional[str] = typer.Argument(None, help="Preset name or TOML file (default: single-sm, the defaults)."),
        set_: List[str] = typer.Option([], "--set", help="Override a config field: KEY=VALUE (repeatable)."),
    ):
        """Print a preset as a config file: its source, then every field, each field the file leaves
        out marked as the default. Valid TOML: `simt-fast config show gt200 --set simd_width=16 > my.toml`
        then `simt-fast run T.h5 -c my.toml`."""
        import json

        from ..sim.config import DEFAULT_PRESET, config_fields, load_config, read_config_file

        name = name or DEFAULT_PRESET
        overrides = parse_sets(set_)
        with user_errors():
            path, data = read_config_file(name)
            config = load_config(name, overrides, overrides_source="--set")
        written = config_fields(data)
        typer.echo(f"# {name}: {_shown(path)}")
        if "source" in data:
            typer.echo(f"source = {json.dumps(str(data['source']), ensure_ascii=False)}")
        for line in config.to_toml().splitlines():
            key = line.split(" = ", 1)[0]
            if key in overrides:
                note = "  # --set"
            elif key not in written:
                note = f"  # not in the file: the default ({DEFAULT_PRESET})"
            else:
                note = ""
            typer.echo(line + note)
