"""Trace data model and files (docs/DESIGN.md §3)."""

from .model import SCHEMA, Trace, TraceError

__all__ = ["SCHEMA", "Trace", "TraceError"]
