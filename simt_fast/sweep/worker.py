"""What a worker process runs for one point: load the trace (once per process), simulate, return stats.

Runs in local pool workers, in Dask workers and in the coordinator itself (``--jobs 1``). The
trace cache is per process (a few most recently used traces, points arrive grouped by trace),
so a worker pays for reading a trace file once, not once per point. Only plain data crosses
process boundaries: a path and a config dict in, a stats dict out.
"""

from __future__ import annotations

import importlib
import signal
import socket
import threading
import time
from collections import OrderedDict

from ..sim.config import from_dict
from ..trace.model import Trace

MAX_CACHED_TRACES = 4
_cache: "OrderedDict[str, Trace]" = OrderedDict()
_lock = threading.Lock()  # Dask runs several tasks per process on threads
trace_loads = 0  # how many times this process read a trace file (tests check the cache works)
_simulators: dict = {}
DEFAULT_SIMULATE = "simt_fast.sim:simulate"


def load_trace(path: str) -> Trace:
    global trace_loads
    with _lock:
        trace = _cache.get(path)
        if trace is not None:
            _cache.move_to_end(path)
            return trace
        trace = Trace.load(path)
        trace_loads += 1
        _cache[path] = trace
        while len(_cache) > MAX_CACHED_TRACES:
            _cache.popitem(last=False)
        return trace


def resolve(ref: str):
    """``"module:function"`` -> the function (a reference, so it pickles to any worker)."""
    fn = _simulators.get(ref)
    if fn is None:
        module, _, attr = ref.partition(":")
        fn = getattr(importlib.import_module(module), attr)
        _simulators[ref] = fn
    return fn


def run_point(trace_path: str, config: dict, simulate: str = DEFAULT_SIMULATE) -> tuple:
    """Simulate one point; returns ``(stats dict, simulation seconds, host name)``."""
    trace = load_trace(trace_path)
    cfg = from_dict(config, source="point")
    fn = resolve(simulate)
    t0 = time.perf_counter()
    stats = fn(trace, cfg)
    seconds = time.perf_counter() - t0
    return stats.to_dict() if hasattr(stats, "to_dict") else dict(stats), seconds, socket.gethostname()


def init_pool_worker():
    """Pool workers leave Ctrl-C to the coordinator, which stops them and keeps the file consistent."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
