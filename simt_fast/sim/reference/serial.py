"""Reference `serial`: every split issues on its own and never merges."""

from .mp import schedulable  # noqa: F401
