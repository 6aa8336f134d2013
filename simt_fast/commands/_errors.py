"""Shared error handling for CLI commands: library errors become one line and exit code 2."""

from __future__ import annotations

import contextlib

import typer

from ..ir.model import PTXError
from ..sim.config import ConfigError
from ..trace.model import TraceError

USER_ERRORS: tuple = (PTXError, TraceError, ConfigError, FileNotFoundError)


def fail(message: str, code: int = 2):
    """Print one clear sentence to stderr and exit (no traceback)."""
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


@contextlib.contextmanager
def user_errors(*extra: type):
    """Turn the library's user-facing errors into `error: <sentence>` and exit status 2."""
    try:
        yield
    except USER_ERRORS + tuple(extra) as e:
        fail(str(e))
