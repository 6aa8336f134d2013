"""The `simt-fast` command line: thin — parses options, calls the library, prints results.

Sub-commands live in `simt_fast.commands.<area>` modules, each exposing ``register(app)``;
this file only assembles them. Errors from the library (PTXError, TraceError, ConfigError, ...)
are printed as one line by the commands and exit with status 2.
"""

from __future__ import annotations

import importlib
import sys

import typer

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="Fast trace-driven simulator of GPU SIMT control-flow divergence.",
)

# One entry per command module (add yours here: a one-line change).
COMMAND_MODULES = [
    "ir",
    "tracefile",
    "emu",
    "sweep",
    "analyze",
    "run",
    "dynamic",
    "accelsim",
    "warm",
    "config",
]


@app.callback()
def _root():
    """Fast trace-driven simulator of GPU SIMT control-flow divergence."""


@app.command()
def version():
    """Print the simt-fast version."""
    from . import __version__

    typer.echo(__version__)


for _name in COMMAND_MODULES:
    importlib.import_module(f"simt_fast.commands.{_name}").register(app)


def main():  # console-script entry point
    app()


if __name__ == "__main__":
    sys.exit(main())
