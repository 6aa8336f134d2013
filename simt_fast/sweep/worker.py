"""What a worker process runs for one point: load the trace (once per process), simulate, return stats.

Runs in local pool workers, in Dask workers and in the coordinator itself (``--jobs 1``). The
trace cache is per process (a few most recently used traces, points arrive grouped by trace),
so a worker pays for reading a trace file once, not once per point. Only plain data crosses
process boundaries: a path and a config dict in, a stats dict out.
"""

from __future__ import annotations

import importlib
import os
import signal
import socket
import threading
import time
from collections import OrderedDict

from ..sim.config import from_dict
from ..trace.model import Trace

MAX_CACHED_TRACES = 4
_cache: "OrderedDict[tuple, Trace]" = OrderedDict()  # (path, allow_digest_mismatch) -> Trace
_lock = threading.Lock()  # Dask runs several tasks per process on threads
trace_loads = 0  # how many times this process read a trace file (tests check the cache works)
_simulators: dict = {}
DEFAULT_SIMULATE = "simt_fast.sim:simulate"


def load_trace(path: str, allow_digest_mismatch: bool = False) -> Trace:
    global trace_loads
    key = (path, bool(allow_digest_mismatch))
    with _lock:
        trace = _cache.get(key)
        if trace is not None:
            _cache.move_to_end(key)
            return trace
        trace = Trace.load(path, allow_digest_mismatch=allow_digest_mismatch)
        trace_loads += 1
        _cache[key] = trace
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


def run_point(trace_path: str, config: dict, simulate: str = DEFAULT_SIMULATE,
              allow_digest_mismatch: bool = False) -> tuple:
    """Simulate one point; returns ``(stats dict, simulation seconds, host name)``."""
    trace = load_trace(trace_path, allow_digest_mismatch)
    cfg = from_dict(config, source="point")
    fn = resolve(simulate)
    t0 = time.perf_counter()
    stats = fn(trace, cfg)
    seconds = time.perf_counter() - t0
    return stats.to_dict() if hasattr(stats, "to_dict") else dict(stats), seconds, socket.gethostname()


WATCH_SECONDS = 0.5  # how often a pool worker checks that its coordinator is still alive


def init_pool_worker(coordinator_pid: int | None = None):
    """Pool workers leave Ctrl-C to the coordinator, which stops them and keeps the file consistent,
    and exit by themselves when the coordinator dies (see :func:`watch_coordinator`)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if coordinator_pid is not None:
        watch_coordinator(coordinator_pid)


def watch_coordinator(pid: int) -> threading.Thread:
    """Exit this process as soon as the coordinator ``pid`` (or this process's parent) is gone.

    A pool worker waits for work on a queue whose write end it holds itself, so a coordinator
    killed with ``kill -9`` never wakes it: the pool (fork server, workers, resource tracker)
    would live on. The fork server exits when the coordinator dies, which changes this worker's
    parent; the coordinator's pid is checked too, for pools started without a fork server.
    The check runs on a thread, so it also stops a worker in the middle of a (nogil) simulation.
    """
    parent = os.getppid()

    def alive(p: int) -> bool:
        try:
            os.kill(p, 0)
        except ProcessLookupError:
            return False
        except PermissionError:  # exists, owned by someone else (pid reused): treat as gone
            return False
        return True

    def watch():
        while True:
            time.sleep(WATCH_SECONDS)
            if os.getppid() != parent or not alive(pid):
                os._exit(1)

    thread = threading.Thread(target=watch, name="simt-fast-coordinator-watch", daemon=True)
    thread.start()
    return thread
