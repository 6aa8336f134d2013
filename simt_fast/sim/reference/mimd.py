"""Reference `mimd`: one unit per thread, all of them issue whenever ready."""

from .mp import schedulable  # noqa: F401
