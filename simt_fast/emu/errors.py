"""The emulator's one user-facing error type."""

from __future__ import annotations


class EmuError(RuntimeError):
    """A launch that cannot run or that faulted; ``str(err)`` is one sentence naming the cause."""
