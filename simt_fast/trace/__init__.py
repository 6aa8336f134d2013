"""Trace data model and files (docs/DESIGN.md §3, docs/trace.md).

* :class:`Trace` — CFG + per-thread block paths; ``Trace.load(path)``, ``trace.save(path)``,
  ``trace.digest()``;
* :class:`TraceWriter` — streaming writer (CTA batches, atomic rename on close);
* :func:`validate` — every invariant, one-sentence :class:`TraceError` on the first broken one;
* :func:`synthetic` — random valid traces; :func:`synthetic_traces`, a hypothesis strategy of them
  (module :mod:`.synth`).
"""

from .io import TraceWriter
from .model import SCHEMA, Trace, TraceError
from .synth import synthetic, traces as synthetic_traces
from .validate import validate

__all__ = ["SCHEMA", "Trace", "TraceError", "TraceWriter", "validate", "synthetic", "synthetic_traces"]
