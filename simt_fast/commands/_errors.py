"""Shared error handling for CLI commands: library errors become one line and exit code 2."""

from __future__ import annotations

import contextlib

import typer

from .._text import printable
from ..ir.model import PTXError
from ..sim.config import ConfigError
from ..trace.model import TraceError

USER_ERRORS: tuple = (PTXError, TraceError, ConfigError, FileNotFoundError)


def fail(message: str, code: int = 2):
    """Print one clear sentence to stderr and exit (no traceback); control characters are escaped."""
    typer.echo(f"error: {printable(message)}", err=True)
    raise typer.Exit(code)


@contextlib.contextmanager
def user_errors(*extra: type):
    """Turn the library's user-facing errors into `error: <sentence>` and exit status 2.

    Errors of the machine rather than of the input (a full disk, a permission) are one sentence too.
    """
    try:
        yield
    except USER_ERRORS + tuple(extra) as e:
        fail(str(e))
    except MemoryError as e:  # e.g. numpy: "Unable to allocate 4.00 GiB for an array with shape ..."
        fail(f"not enough memory: {str(e) or 'an allocation failed'}")
    except OSError as e:
        if e.filename is not None and e.strerror:
            fail(f"{e.filename}: {e.strerror[:1].lower()}{e.strerror[1:]}")
        fail(str(e))
