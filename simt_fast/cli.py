"""The `simt-fast` command line: thin — parses options, calls the library, prints results.

Each sub-command lives in the library module it drives and is registered here. Errors from the
library (PTXError, TraceError, ConfigError, ...) are printed as one line and exit with status 2.
"""

from __future__ import annotations

import sys

import typer

app = typer.Typer(add_completion=False, no_args_is_help=True, help="Fast trace-driven simulator of GPU SIMT control-flow divergence.")


def fail(message: str, code: int = 2) -> None:
    """Print one clear sentence to stderr and exit (no traceback)."""
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


@app.command()
def version():
    """Print the simt-fast version."""
    from . import __version__

    typer.echo(__version__)


def main():  # console-script entry point
    app()


if __name__ == "__main__":
    sys.exit(main())
