"""BFS level expansion on a random graph with irregular degrees (Jin 2012 §5.3, BFS).

The generator builds a directed random graph in CSR form (degrees drawn from a heavy-tailed
distribution, so neighbour loops have very different trip counts), runs the whole BFS from
node 0 in numpy, and hands the kernel the state at the start of a *middle* level: ``level[v]``
is the BFS depth of every node reached so far and -1 for the rest.  That launch has frontier and
non-frontier threads, variable-degree loops and a mix of visited/unvisited neighbours.
"""

from __future__ import annotations

import numpy as np

from simt_fast.workloads import LaunchSpec, Workload

SIZES = {"tiny": 512, "default": 4096, "thesis": 4096}
BLOCK = 256


def random_graph(n_nodes: int, rng: np.random.Generator):
    """CSR (row_ptr, col_idx) with degrees 1..64 from a geometric-like heavy tail."""
    degree = np.minimum(1 + rng.geometric(0.18, n_nodes), 64).astype(np.int32)
    row_ptr = np.zeros(n_nodes + 1, np.int32)
    np.cumsum(degree, out=row_ptr[1:])
    col_idx = rng.integers(0, n_nodes, int(row_ptr[-1]), dtype=np.int32)
    return row_ptr, col_idx


def bfs_depths(row_ptr, col_idx, source: int = 0) -> np.ndarray:
    """Full BFS depth of every node (-1 = unreachable), level-synchronous in numpy."""
    n = len(row_ptr) - 1
    depth = np.full(n, -1, np.int32)
    depth[source] = 0
    frontier = np.array([source])
    d = 0
    while frontier.size:
        starts, ends = row_ptr[frontier], row_ptr[frontier + 1]
        nbrs = np.concatenate([col_idx[s:e] for s, e in zip(starts, ends)])
        new = np.unique(nbrs[depth[nbrs] < 0])
        d += 1
        depth[new] = d
        frontier = new
    return depth


def make(size: str, rng: np.random.Generator) -> LaunchSpec:
    n = SIZES[size]
    row_ptr, col_idx = random_graph(n, rng)
    depth = bfs_depths(row_ptr, col_idx)
    # The middle level that discovers the most nodes: a large frontier whose neighbours are a
    # mix of visited and unvisited nodes (the first and last levels are degenerate launches).
    per_level = np.bincount(depth[depth >= 0])
    cur_level = int(np.argmax(per_level[1:]))
    level = np.where((depth >= 0) & (depth <= cur_level), depth, -1).astype(np.int32)
    grid = (n + BLOCK - 1) // BLOCK
    args = [row_ptr, col_idx, level, np.int32(n), np.int32(cur_level),
            np.zeros(n, np.int32), np.zeros(3, np.int32)]
    names = ("row_ptr", "col_idx", "level", "n_nodes", "cur_level", "next_frontier", "counters")
    return LaunchSpec(grid, BLOCK, args, outputs=(5, 6), arg_names=names)


def reference(spec: LaunchSpec) -> dict:
    row_ptr, col_idx, level = spec.arg("row_ptr"), spec.arg("col_idx"), spec.arg("level")
    cur = int(spec.arg("cur_level"))
    src = np.repeat(np.arange(len(level)), np.diff(row_ptr))  # edge -> its source node
    from_frontier = level[src] == cur
    to_unvisited = from_frontier & (level[col_idx] < 0)
    next_frontier = np.zeros(len(level), np.int32)
    next_frontier[col_idx[to_unvisited]] = 1
    counters = np.array([(level == cur).sum(), from_frontier.sum(), to_unvisited.sum()], np.int32)
    return {"next_frontier": next_frontier, "counters": counters}


WORKLOAD = Workload(
    name="bfs",
    description="BFS level expansion on a random irregular-degree graph (Jin 2012 §5.3 BFS)",
    kernel="bfs_expand",
    make=make,
    sizes=tuple(SIZES),
    reference=reference,
    features=("atomics", "warp vote", "irregular loops"),
)
