"""Streaming k-median gain evaluation with Rodinia streamcluster's pgain kernel and loop (Che et al. 2009).

Points with integer coordinates 0..15 around a few random centres and integer weights 1..4, so
every distance, cost and saving is an integer that float32 holds exactly (kernel and numpy agree
bit for bit).  The initial solution opens K_INITIAL random points and assigns every point to its
nearest.  The host program evaluates CANDIDATES candidate facilities in turn, one
``streamcluster_gain`` launch each (work rows and switch flags cleared before it), and applies
the local-search decision on the host (close every centre whose closing saves more than the
opening cost Z, open the candidate if the total gain is positive); the trace is the first launch.
"""

from __future__ import annotations

import numpy as np

from simt_fast.workloads import LaunchSpec, Workload

BLOCK = 512
SIZES = {"tiny": (1024, 8), "default": (32768, 16)}  # points, dimensions
K_INITIAL = 8
CANDIDATES = 6
Z = np.float32(400.0)  # facility opening cost
NAMES = ("num", "dim", "x", "coord", "weight", "cost", "assign", "centre_slot", "k", "stride", "work",
         "switch_membership")


class State:
    """The local search's solution: open centres (point ids), each point's centre and cost."""

    def __init__(self, points, weight, centres):
        self.points, self.weight = points, weight
        self.centres = list(centres)
        d = ((points[:, None, :] - points[centres][None, :, :]) ** 2).sum(axis=2)
        self.assign = np.asarray(centres, np.int32)[d.argmin(axis=1)]
        self.cost = (d.min(axis=1) * weight).astype(np.float32)

    def slots(self) -> np.ndarray:
        table = np.full(len(self.points), -1, np.int32)
        table[self.centres] = np.arange(len(self.centres), dtype=np.int32)
        return table


def inputs(size: str, rng: np.random.Generator):
    n, dim = SIZES[size]
    centres = rng.uniform(2, 13, (6, dim))
    pts = np.clip(np.rint(centres[rng.integers(0, 6, n)] + rng.normal(0, 2, (n, dim))), 0, 15).astype(np.float32)
    weight = rng.integers(1, 5, n).astype(np.float32)
    first = rng.choice(n, K_INITIAL, replace=False)
    candidates = rng.choice(n, CANDIDATES, replace=False)
    return pts, weight, first, candidates


def gain_outputs(state: State, x: int):
    """What one kernel launch computes: (work rows [num][k+1], switch flags)."""
    p = state.points
    x_cost = ((p - p[x]) ** 2).sum(axis=1, dtype=np.float32) * state.weight
    k = len(state.centres)
    work = np.zeros((len(p), k + 1), np.float32)
    switch = (x_cost < state.cost).astype(np.int32)
    rows = np.arange(len(p))
    work[rows[switch == 1], k] = (x_cost - state.cost)[switch == 1]
    stay = switch == 0
    work[rows[stay], state.slots()[state.assign[stay]]] = (state.cost - x_cost)[stay]
    return work, switch


def decide(state: State, x: int, work: np.ndarray, switch: np.ndarray) -> None:
    """The host's local-search step: close the centres whose closing pays, open x if it pays."""
    lower = work.sum(axis=0, dtype=np.float64)
    k = len(state.centres)
    closing = [c for c in range(k) if Z - lower[c] > 0]
    gain = -float(Z) - lower[k] + sum(float(Z) - lower[c] for c in closing)
    if gain <= 0 or x in state.centres:
        return
    closed = {state.centres[c] for c in closing}
    p = state.points
    x_cost = ((p - p[x]) ** 2).sum(axis=1, dtype=np.float32) * state.weight
    moves = (switch == 1) | np.isin(state.assign, list(closed))
    state.assign[moves] = x
    state.cost[moves] = x_cost[moves]
    state.centres = [c for c in state.centres if c not in closed] + [x]


def launch_args(state: State, x: int, work: np.ndarray, switch: np.ndarray) -> list:
    n, dim = state.points.shape
    k = len(state.centres)
    return [np.int32(n), np.int32(dim), np.int32(x), np.ascontiguousarray(state.points.T).ravel(), state.weight,
            state.cost, state.assign, state.slots(), np.int32(k), np.int32(k + 1), work.ravel(), switch]


def make(size: str, rng: np.random.Generator) -> LaunchSpec:
    pts, weight, first, candidates = inputs(size, rng)
    state = State(pts, weight, first)
    k = len(state.centres)
    args = launch_args(state, int(candidates[0]), np.zeros((len(pts), k + 1), np.float32), np.zeros(len(pts), np.int32))
    return LaunchSpec(-(-len(pts) // BLOCK), BLOCK, args, outputs=(10, 11), arg_names=NAMES, meta={"launch": 0})


def reference(spec: LaunchSpec) -> dict:
    n, dim, k = int(spec.arg("num")), int(spec.arg("dim")), int(spec.arg("k"))
    state = State.__new__(State)
    state.points = spec.arg("coord").reshape(dim, n).T
    state.weight, state.cost, state.assign = spec.arg("weight"), spec.arg("cost"), spec.arg("assign")
    slot = spec.arg("centre_slot")
    ids = np.flatnonzero(slot >= 0)
    state.centres = [0] * len(ids)
    for i in ids:
        state.centres[slot[i]] = int(i)
    work, switch = gain_outputs(state, int(spec.arg("x")))
    return {"work": work.ravel(), "switch_membership": switch}


def program(size: str, rng: np.random.Generator, launch) -> None:
    pts, weight, first, candidates = inputs(size, rng)
    gpu, host = State(pts, weight, first), State(pts, weight, first)
    for x in candidates:
        x = int(x)
        work = np.zeros((len(pts), len(gpu.centres) + 1), np.float32)
        switch = np.zeros(len(pts), np.int32)
        launch("streamcluster_gain", -(-len(pts) // BLOCK), BLOCK, launch_args(gpu, x, work, switch))
        want_work, want_switch = gain_outputs(host, x)
        np.testing.assert_array_equal(switch, want_switch, err_msg="streamcluster: switch flags")
        np.testing.assert_array_equal(work, want_work, err_msg="streamcluster: work rows")
        decide(gpu, x, work, switch)
        decide(host, x, want_work, want_switch)
    np.testing.assert_array_equal(gpu.assign, host.assign, err_msg="streamcluster: final assignment")
    assert len(host.centres) != K_INITIAL or not np.array_equal(host.assign, State(pts, weight, first).assign), \
        "streamcluster: the candidates changed nothing (the test would not see a wrong decision)"


WORKLOAD = Workload(
    name="streamcluster",
    description="Streaming k-median gain of a candidate facility, per-point work rows, shared-memory candidate (Rodinia streamcluster, Che et al. 2009)",
    kernel="streamcluster_gain",
    make=make,
    sizes=tuple(SIZES),
    reference=reference,
    program=program,
    features=("shared memory + __syncthreads", "data-dependent if/else", "kernel + host local search"),
)
