"""Grid expansion: (trace, config) points with stable, content-addressed ids (signac-style).

A point's id is the sha256 of the trace's digest (content, not file name) and the canonical
JSON of the *full* config, so it is the same in every process, on every machine and for every
spelling of the sweep file that asks for the same simulation; a re-run or another shard can
therefore tell which points are already stored. Adding a field to SimConfig changes every id
(a new field may change the simulation), which is also when a results file's layout changes.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from ..sim.config import SimConfig
from .spec import SweepError, SweepSpec, canonical_config

ID_HEX = 32  # 128 bits: collisions are not a concern at any sweep size


@dataclass(frozen=True)
class Point:
    point_id: str
    trace: str  # display name
    trace_id: str  # trace digest
    trace_path: str  # the trace file workers load
    config: SimConfig

    def config_dict(self) -> dict:
        return self.config.to_dict()


def point_id(trace_digest: str, config: SimConfig) -> str:
    """Stable id of simulating the trace with digest ``trace_digest`` under ``config``."""
    payload = f"simt-fast/point/1\n{trace_digest}\n{canonical_config(config)}".encode()
    return hashlib.sha256(payload).hexdigest()[:ID_HEX]


def expand(spec: SweepSpec, resolved: dict) -> list:
    """Every point of the sweep, grouped by trace (so workers reuse loaded traces), in file order.

    ``resolved`` maps a trace's display name to ``(path, digest)`` (see :mod:`.traces`).
    """
    points = []
    for source in spec.traces:
        path, digest = resolved[source.name]
        for config in spec.configs_for(source.name):
            points.append(Point(point_id(digest, config), source.name, digest, str(path), config))
    seen = {}
    unique = []
    for p in points:  # two names for the same trace content simulate once
        if p.point_id not in seen:
            seen[p.point_id] = p
            unique.append(p)
    return unique


def parse_shard(text: str) -> tuple:
    """``"I/N"`` -> (I, N) with 0 <= I < N (job-array task ids start at 0: ``--array=0-(N-1)``)."""
    try:
        i, n = (int(x) for x in text.split("/"))
    except ValueError:
        raise SweepError(f"--shard must look like I/N, e.g. 0/4 (got {text!r})") from None
    if n < 1 or not 0 <= i < n:
        raise SweepError(f"--shard {text}: need N >= 1 and 0 <= I < N (shards are numbered from 0)")
    return i, n


def in_shard(pid: str, shard: tuple) -> bool:
    """Shard membership from the id alone, so every job of an array agrees without talking."""
    i, n = shard
    return int(pid[:15], 16) % n == i


def select_shard(points: list, shard) -> list:
    return points if shard is None else [p for p in points if in_shard(p.point_id, shard)]
