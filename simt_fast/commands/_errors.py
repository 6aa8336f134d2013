"""Shared error handling for CLI commands: library errors become one line and exit code 2."""

from __future__ import annotations

import contextlib
import sys

import typer

from .._text import printable


# The library's user-facing errors, by the module that defines each. Only the loaded ones are looked
# up (an error can only come from a module that ran), so no command loads the simulator to catch them.
_USER_ERRORS = (("simt_fast.ir.model", "PTXError"), ("simt_fast.trace.schema", "TraceError"),
                ("simt_fast.sim.config", "ConfigError"))


def _user_errors() -> tuple:
    loaded = (sys.modules.get(module) for module, _ in _USER_ERRORS)
    return (FileNotFoundError,) + tuple(getattr(m, name) for m, (_, name) in zip(loaded, _USER_ERRORS) if m)


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
    except _user_errors() + tuple(extra) as e:
        fail(str(e))
    except MemoryError as e:  # e.g. numpy: "Unable to allocate 4.00 GiB for an array with shape ..."
        fail(f"not enough memory: {str(e) or 'an allocation failed'}")
    except OSError as e:
        if e.filename is not None and e.strerror:
            fail(f"{e.filename}: {e.strerror[:1].lower()}{e.strerror[1:]}")
        fail(str(e))
