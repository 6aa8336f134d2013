"""Run a sweep's points and stream every result through one writer (docs/DESIGN.md §6).

Engines, all feeding the same coordinator loop (the coordinator is the only process that
writes the results file; workers only return stats):

* in-process (``jobs == 1``): no pool, no pickling, easiest to debug;
* a local process pool (``jobs > 1``, default: every core), forkserver-started so workers
  never inherit the open HDF5 file or its lock; each worker watches the coordinator and exits
  when it dies, also after ``kill -9`` (``worker.watch_coordinator``);
* Dask (``dask="tcp://scheduler:8786"`` or ``"local:N"``), for clusters (dask-jobqueue) —
  trace files must be readable by the workers at the same path (shared file system);
* shards (``points.select_shard``) are a filter before any of these, for job arrays.

Already-stored points are skipped, each finished point is appended and flushed at once, and
SIGINT/SIGTERM stop the run keeping every finished point (only points in flight are lost). A full
disk stops it the same way, with :class:`~simt_fast.results.DiskFullError` (one sentence).
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import sys
import time
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional

from ..results import ResultsWriter
from . import worker
from .points import Point
from .spec import SweepError


@dataclass
class SweepOutcome:
    out: str
    total: int  # points asked for (after sharding)
    skipped: int  # already in the file
    ran: int = 0  # stored by this run
    failed: list = field(default_factory=list)  # [(Point, message)]
    interrupted: bool = False
    seconds: float = 0.0
    sim_seconds: float = 0.0  # summed simulation time reported by the workers
    recovered: bool = False  # the file had been left open by a killed writer and was recovered

    @property
    def not_run(self) -> int:
        return self.total - self.skipped - self.ran


class _Stop(Exception):
    """Raised in the coordinator by SIGINT/SIGTERM: stop, keeping every stored point."""


def default_jobs() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def _pool_context():
    ctx = multiprocessing.get_context("forkserver")
    # The fork server imports these once; every worker forked from it starts with numba's compiled
    # (cached) kernels already loaded instead of importing them again.
    ctx.set_forkserver_preload(["simt_fast.sweep.worker", "simt_fast.sweep.warm"])
    return ctx


@contextlib.contextmanager
def _main_not_reimported(simulate: str):
    """Start pool workers without re-running the user's script in each of them.

    forkserver/spawn children normally re-import ``__main__`` (so a script calling ``run_sweep``
    without an ``if __name__ == "__main__"`` guard would start a sweep in every worker). Workers
    only need importable names (``simt_fast...``, ``module:function``), so ``__main__``'s file and
    spec are hidden while processes start, unless the simulate function lives in ``__main__``.
    """
    main = sys.modules.get("__main__")
    if main is None or simulate.split(":", 1)[0] == "__main__":
        yield
        return
    saved = {k: main.__dict__[k] for k in ("__file__", "__spec__") if k in main.__dict__}
    try:
        main.__dict__.pop("__file__", None)
        if "__spec__" in saved:
            main.__spec__ = None
        yield
    finally:
        main.__dict__.update(saved)


class _Progress:
    def __init__(self, enabled: bool, total: int, done: int, description: str):
        self.bar = None
        if not enabled:
            return
        from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn,
                                   TimeRemainingColumn)

        class _Rate(TextColumn):
            def render(self, task):
                speed = task.finished_speed or task.speed
                from rich.text import Text

                return Text(f"{speed:6.2f} pts/s" if speed else "   -- pts/s", style="progress.data.speed")

        self.bar = Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                            _Rate(""), TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
                            transient=False)
        self.bar.start()
        # Skipped points count as done for the bar, but the rate/ETA only sees this run's points.
        self.task = self.bar.add_task(description, total=total - done)
        self.offset = done
        self.bar.update(self.task, description=f"{description} ({done} already stored)" if done else description)

    def advance(self):
        if self.bar is not None:
            self.bar.advance(self.task)

    def close(self):
        if self.bar is not None:
            self.bar.stop()


def run_points(points: list, out, *, jobs: Optional[int] = None, dask: Optional[str] = None,
               dask_processes: bool = True, simulate: str = worker.DEFAULT_SIMULATE, progress: bool = False,
               baseline: Optional[dict] = None, sweep_text: Optional[str] = None, command: str = "",
               on_stored: Optional[Callable[[Point], None]] = None, studies: Optional[list] = None,
               analyses: Optional[dict] = None, allow_digest_mismatch: bool = False) -> SweepOutcome:
    """Simulate every point not yet in ``out`` and append it there; returns what happened.

    ``studies`` and ``analyses`` (see :func:`simt_fast.sweep.plan_studies`) are recorded in the
    file before the first point; ``allow_digest_mismatch`` lets workers load trace files edited
    after they were written."""
    t_start = time.perf_counter()
    jobs = default_jobs() if jobs is None else int(jobs)
    if jobs < 1:
        raise SweepError("--jobs must be at least 1")
    with ResultsWriter(out, baseline=baseline, sweep_text=sweep_text, command=command, studies=studies,
                       analyses=analyses) as writer:
        todo = [p for p in points if p.point_id not in writer.ids]
        outcome = SweepOutcome(out=str(out), total=len(points), skipped=len(points) - len(todo),
                               recovered=writer.recovered)
        if not todo:
            return outcome
        bar = _Progress(progress, len(points), outcome.skipped, f"sweep -> {Path(out).name}")

        # SIGINT/SIGTERM stop the sweep, but never in the middle of appending a row: a signal
        # that arrives during an append is acted on right after it (the row is complete on disk).
        state = {"appending": False, "pending": False}

        def on_signal(signum, frame):
            if state["appending"]:
                state["pending"] = True
                return
            raise _Stop()

        def store(p: Point, result):
            stats, seconds, host = result
            state["appending"] = True
            try:
                writer.append(p.point_id, p.trace_id, p.trace, p.config_dict(), stats, seconds, host)
            finally:
                state["appending"] = False
            outcome.ran += 1
            outcome.sim_seconds += seconds
            bar.advance()
            if on_stored:
                on_stored(p)
            if state["pending"]:
                raise _Stop()

        in_main = _in_main_thread()
        previous = {}
        if in_main:
            for sig in (signal.SIGINT, signal.SIGTERM):
                if signal.getsignal(sig) is not signal.SIG_IGN:  # e.g. nohup / background jobs
                    previous[sig] = signal.signal(sig, on_signal)
        try:
            if dask:
                _run_dask(todo, dask, dask_processes, simulate, store, outcome, allow_digest_mismatch)
            elif jobs == 1:
                for p in todo:
                    try:
                        result = worker.run_point(p.trace_path, p.config_dict(), simulate, allow_digest_mismatch)
                    except (KeyboardInterrupt, _Stop):
                        raise
                    except Exception as e:  # a point that fails (e.g. a deadlock) must not stop the others
                        outcome.failed.append((p, _one_line(e)))
                        bar.advance()
                        continue
                    store(p, result)
            else:
                _run_pool(todo, min(jobs, len(todo)), simulate, store, outcome, bar, allow_digest_mismatch)
        except (KeyboardInterrupt, _Stop):
            outcome.interrupted = True
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
            bar.close()
    outcome.seconds = time.perf_counter() - t_start
    return outcome


def _in_main_thread() -> bool:
    import threading

    return threading.current_thread() is threading.main_thread()


def _one_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0] if text else ''}".rstrip(": ")


def _run_pool(todo: list, jobs: int, simulate: str, store, outcome: SweepOutcome, bar: _Progress,
              allow_digest_mismatch: bool = False):
    pool = ProcessPoolExecutor(max_workers=jobs, mp_context=_pool_context(), initializer=worker.init_pool_worker,
                               initargs=(os.getpid(),))
    # Keep a bounded window in flight (2 per worker): a kill loses at most that many points and
    # the coordinator never holds a million pending futures.
    window = 2 * jobs
    pending = {}
    queue = iter(todo)
    clean = False
    try:
        def refill():
            while len(pending) < window:
                p = next(queue, None)
                if p is None:
                    return
                with _main_not_reimported(simulate):  # submit() is where the pool starts workers
                    pending[pool.submit(worker.run_point, p.trace_path, p.config_dict(), simulate,
                                        allow_digest_mismatch)] = p

        refill()
        while pending:
            done, _ = wait(list(pending), return_when=FIRST_COMPLETED)
            for fut in done:
                p = pending.pop(fut)
                try:
                    result = fut.result()
                except BrokenProcessPool as e:
                    outcome.failed.append((p, f"a worker process died ({e}); re-run the sweep to resume"))
                    for q in pending.values():
                        outcome.failed.append((q, "not run: the process pool broke"))
                    pending.clear()
                    return
                except Exception as e:
                    outcome.failed.append((p, _one_line(e)))
                    bar.advance()
                    continue
                store(p, result)
            refill()
        clean = True
    finally:
        if clean:
            pool.shutdown(wait=True)
        else:
            # Interrupted: drop queued points and stop the workers now (their points are lost,
            # every stored point is already flushed).
            pool.shutdown(wait=False, cancel_futures=True)
            for proc in list((getattr(pool, "_processes", None) or {}).values()):
                if proc.is_alive():
                    proc.terminate()


def _dask_client(address: str, processes: bool):
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise SweepError("--dask needs the 'distributed' package: pip install 'simt-fast[dask]'") from None
    if address.startswith("local"):
        _, _, n = address.partition(":")
        try:
            n_workers = int(n) if n else default_jobs()
        except ValueError:
            raise SweepError(f"--dask local:N needs a number of workers (got {address!r})") from None
        cluster = LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=processes,
                               dashboard_address=None)
        return Client(cluster), cluster
    return Client(address), None


def _run_dask(todo: list, address: str, processes: bool, simulate: str, store, outcome: SweepOutcome,
              allow_digest_mismatch: bool = False):
    from distributed import as_completed

    client, cluster = _dask_client(address, processes)
    try:
        by_key = {}
        futures = []
        for p in todo:
            fut = client.submit(worker.run_point, p.trace_path, p.config_dict(), simulate, allow_digest_mismatch, pure=False,
                                key=f"simt-fast-point-{p.point_id}")
            by_key[fut.key] = p
            futures.append(fut)
        for fut in as_completed(futures):
            p = by_key[fut.key]
            try:
                result = fut.result()
            except Exception as e:
                outcome.failed.append((p, _one_line(e)))
                continue
            store(p, result)
            fut.release()
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
