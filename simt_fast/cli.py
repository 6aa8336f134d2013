"""The `simt-fast` command line: thin — parses options, calls the library, prints results.

Sub-commands live in `simt_fast.commands.<area>` modules, each exposing ``register(app)``;
this file only assembles them. Errors from the library (PTXError, TraceError, ConfigError, ...)
are printed as one line by the commands and exit with status 2.
"""

from __future__ import annotations

import atexit
import importlib
import os
import sys
import threading

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


def main():
    """The console script: the command, then an exit without the interpreter's teardown.

    After a simulation, tearing the interpreter down (freeing numba's and LLVM's objects one by one)
    takes about 0.3 s (bench/bench_startup.py), as long as a small run. So once the command is done
    the exit handlers run, the output is flushed and the process ends at once; the usual exit is
    kept when another thread still runs (it would be cut short)."""
    status = 0
    try:
        app()
    except SystemExit as exc:
        if threading.active_count() > 1:
            raise
        status = exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 1
        if not isinstance(exc.code, (int, type(None))):
            print(exc.code, file=sys.stderr)
    if threading.active_count() > 1:
        sys.exit(status)
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe (`| head`), a closed stream: nothing left to say
            pass
    os._exit(status)


if __name__ == "__main__":
    sys.exit(main())
