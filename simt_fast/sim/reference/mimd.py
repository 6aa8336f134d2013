"""Reference `mimd`: one unit per thread, all of them issue whenever ready (a lower bound on every
mechanism's cycles with fixed latencies only: docs/core.md)."""

from .mp import schedulable  # noqa: F401
