"""Random but valid traces: a random CFG with realistic shape plus warp-correlated thread paths.

Used by the timing core's differential tests (hypothesis) and by benchmarks that need a trace
of a given size without running the emulator. ``synthetic(...)`` is deterministic for a seed.

CFG generation (blocks laid out in code order, as nvcc emits them; the last id is the virtual
exit). Each real block ends in one terminator:

* ``FALL``      falls through to the next block (possibly ending in ``bar.sync``);
* ``COND``      ``@%p bra T`` forward (if/else, skips, jumps into the middle of a later
                region: the unstructured edges of Wu et al. 2012) + fall-through;
* ``JUMP``      ``bra.uni T`` forward (the jump over an else part);
* ``LATCH``     ``@%p bra H`` back to a loop header H + fall-through (rotated loop);
* ``JUMP_BACK`` ``bra.uni H`` back to H; the loop is left only through a ``break`` edge;
* ``SWITCH``    ``brx.idx`` to 3-4 forward targets;
* ``RET`` / ``COND_RET`` unconditional / guarded ``ret`` to the virtual exit.

Loops are natural: loop intervals ``[H, latch]`` form a laminar family and no forward edge
enters an interval except at its header, so H dominates the whole body. Edges *leaving*
loops (breaks, early returns) and forward edges crossing if/else regions are left in, so the
CFG is unstructured in the sense of Wu et al. 2012. Every block is reachable from the entry and
reaches the exit (repairs add fall-through edges where random choices broke that).
``structured=True`` instead nests structured regions only (see ``_CFGBuilder._grammar``): the
baseline that structural analysis reduces to a single node.

Thread paths: every thread walks from the entry, choosing successors with per-edge
probabilities. A warp shares one outcome per (block, visit number) — loop iterations line up —
and each thread deviates from it with a per-block probability scaled by ``divergence``, so
divergence is realistic (some branches uniform, some data-dependent), not total. Randomness
comes from a counter-based hash (splitmix64) of (seed, stream, ids), so the numba walk and its
plain-Python reference produce identical paths, and paths do not depend on thread order.
Once a thread's remaining budget (``max_path_len``) only allows a shortest route to the exit,
it takes one, so every loop terminates.
"""

from __future__ import annotations

import bisect
import itertools
from typing import Optional, Sequence

import numpy as np

from .._jit import jit
from ..ir.model import OpClass
from ..ir.graph import immediate_postdominators
from .io import path_dtype
from .model import MEM_ATOMIC, MEM_FORMAT, MEM_LOAD, MEM_NONE, MEM_STORE, NO_ACCESS, Trace

# Terminator kinds of a synthetic block.
FALL, COND, JUMP, LATCH, JUMP_BACK, SWITCH, RET, COND_RET = range(8)

# Default op-class mix of non-terminator instructions (roughly an nvcc kernel body).
DEFAULT_OP_MIX = {
    OpClass.ALU: 0.60,
    OpClass.SFU: 0.05,
    OpClass.MEM_GLOBAL: 0.12,
    OpClass.MEM_SHARED: 0.08,
    OpClass.MEM_LOCAL: 0.01,
    OpClass.MEM_CONST: 0.04,
    OpClass.OTHER: 0.10,
}

MAX_LOOP_SPAN = 12  # blocks between a loop header and its latch
MAX_FORWARD_SPAN = 24  # blocks a forward branch may skip
N_PREDICATES = 8


# ---------------------------------------------------------------------------------------------
# Counter-based random numbers shared by the numba walk and its reference
# ---------------------------------------------------------------------------------------------

_M64 = (1 << 64) - 1
_GOLDEN = 0x9E3779B97F4A7C15
_MIX1 = 0xBF58476D1CE4E5B9
_MIX2 = 0x94D049BB133111EB

STREAM_WARP, STREAM_DEVIATE, STREAM_THREAD = 1, 2, 3


def _splitmix_py(x: int) -> int:
    x = (x + _GOLDEN) & _M64
    x = ((x ^ (x >> 30)) * _MIX1) & _M64
    x = ((x ^ (x >> 27)) * _MIX2) & _M64
    return x ^ (x >> 31)


def _uniform_py(seed: int, stream: int, a: int, b: int, c: int) -> float:
    h = _splitmix_py((seed + stream) & _M64)
    h = _splitmix_py((h + a) & _M64)
    h = _splitmix_py((h + b) & _M64)
    h = _splitmix_py((h + c) & _M64)
    return (h >> 11) * (1.0 / (1 << 53))


@jit
def _splitmix(x):
    x = x + np.uint64(_GOLDEN)
    x = (x ^ (x >> np.uint64(30))) * np.uint64(_MIX1)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(_MIX2)
    return x ^ (x >> np.uint64(31))


@jit
def _uniform(seed, stream, a, b, c):
    h = _splitmix(np.uint64(seed) + np.uint64(stream))
    h = _splitmix(h + np.uint64(a))
    h = _splitmix(h + np.uint64(b))
    h = _splitmix(h + np.uint64(c))
    return np.float64(h >> np.uint64(11)) * (1.0 / 9007199254740992.0)


# ---------------------------------------------------------------------------------------------
# Thread-path walk: numba kernel + plain-Python reference (identical semantics)
# ---------------------------------------------------------------------------------------------


@jit
def _walk_one(t, succ_ptr, succ_idx, succ_cum, deviate, dist, threads_per_cta, warps_per_cta, warp_size,
              max_len, seed, visits, stamp, out, store):
    """Walk thread ``t`` from the entry to the exit; returns the path length (writes it if ``store``)."""
    n_blocks = len(dist)
    exit_block = n_blocks - 1
    cta = t // threads_per_cta
    warp = cta * warps_per_cta + (t % threads_per_cta) // warp_size
    b = 0
    if store:
        out[0] = 0
    n = 1
    while b != exit_block:
        # visits[b] counts this thread's entries into b; stamp[b] == t + 1 marks it as this
        # thread's count, so nothing is reset between threads (O(path) per thread, not O(n_blocks)).
        if stamp[b] != t + 1:
            stamp[b] = t + 1
            visits[b] = 0
        k = visits[b]
        visits[b] += 1
        lo = succ_ptr[b]
        hi = succ_ptr[b + 1]
        e = lo
        if hi - lo > 1:
            # One outcome per warp and (block, visit): the warp's threads agree unless they deviate.
            u = _uniform(seed, STREAM_WARP, warp, b, k)
            if _uniform(seed, STREAM_DEVIATE, t, b, k) < deviate[b]:
                u = _uniform(seed, STREAM_THREAD, t, b, k)
            e = hi - 1
            for j in range(lo, hi):
                if u < succ_cum[j]:
                    e = j
                    break
        c = succ_idx[e]
        # Budget: after stepping to c the shortest completion must still fit in max_len blocks.
        if n + 1 + dist[c] > max_len:
            for j in range(lo, hi):
                if dist[succ_idx[j]] == dist[b] - 1:
                    c = succ_idx[j]
                    break
        if store:
            out[n] = c
        n += 1
        b = c
    return n


@jit
def _walk_lengths(succ_ptr, succ_idx, succ_cum, deviate, dist, threads_per_cta, warps_per_cta, warp_size,
                  max_len, seed, n_threads):
    lengths = np.zeros(n_threads, np.int64)
    visits = np.zeros(len(dist), np.int64)
    stamp = np.zeros(len(dist), np.int64)
    dummy = np.zeros(1, np.uint32)
    for t in range(n_threads):
        lengths[t] = _walk_one(t, succ_ptr, succ_idx, succ_cum, deviate, dist, threads_per_cta, warps_per_cta,
                               warp_size, max_len, seed, visits, stamp, dummy, False)
    return lengths


@jit
def _walk_fill(succ_ptr, succ_idx, succ_cum, deviate, dist, threads_per_cta, warps_per_cta, warp_size,
               max_len, seed, path_ptr, path):
    visits = np.zeros(len(dist), np.int64)
    stamp = np.zeros(len(dist), np.int64)
    for t in range(len(path_ptr) - 1):
        _walk_one(t, succ_ptr, succ_idx, succ_cum, deviate, dist, threads_per_cta, warps_per_cta, warp_size,
                  max_len, seed, visits, stamp, path[path_ptr[t]:path_ptr[t + 1]], True)


def walk_paths(succ_ptr, succ_idx, succ_cum, deviate, dist, threads_per_cta, warp_size, max_len, seed, n_threads,
               dtype=np.uint16):
    """Thread paths (CSR ``path_ptr``, ``path``) of the warp-correlated random walk (numba)."""
    warps_per_cta = -(-threads_per_cta // warp_size)
    args = (np.ascontiguousarray(succ_ptr, np.int64), np.ascontiguousarray(succ_idx, np.int64),
            np.ascontiguousarray(succ_cum, np.float64), np.ascontiguousarray(deviate, np.float64),
            np.ascontiguousarray(dist, np.int64), int(threads_per_cta), int(warps_per_cta), int(warp_size),
            int(max_len), np.uint64(seed))
    # splitmix64 relies on uint64 wrap-around; under NUMBA_DISABLE_JIT numpy would warn about it.
    with np.errstate(over="ignore"):
        lengths = _walk_lengths(*args, int(n_threads))
        path_ptr = np.zeros(n_threads + 1, np.int64)
        np.cumsum(lengths, out=path_ptr[1:])
        path = np.zeros(int(path_ptr[-1]), np.uint32)
        _walk_fill(*args, path_ptr, path)
    return path_ptr, path.astype(dtype, copy=False)


def walk_paths_reference(succ_ptr, succ_idx, succ_cum, deviate, dist, threads_per_cta, warp_size, max_len, seed,
                         n_threads):
    """Plain-Python model of :func:`walk_paths` (lists of block ids per thread), for differential tests."""
    n_blocks = len(dist)
    exit_block = n_blocks - 1
    warps_per_cta = -(-threads_per_cta // warp_size)
    paths = []
    for t in range(n_threads):
        warp = (t // threads_per_cta) * warps_per_cta + (t % threads_per_cta) // warp_size
        visits = [0] * n_blocks
        path = [0]
        b = 0
        while b != exit_block:
            k = visits[b]
            visits[b] += 1
            targets = list(succ_idx[succ_ptr[b]:succ_ptr[b + 1]])
            cums = list(succ_cum[succ_ptr[b]:succ_ptr[b + 1]])
            c = targets[0]
            if len(targets) > 1:
                u = _uniform_py(int(seed), STREAM_WARP, warp, b, k)
                if _uniform_py(int(seed), STREAM_DEVIATE, t, b, k) < deviate[b]:
                    u = _uniform_py(int(seed), STREAM_THREAD, t, b, k)
                c = next((tg for tg, cum in zip(targets, cums) if u < cum), targets[-1])
            if len(path) + 1 + dist[c] > max_len:
                c = next(tg for tg in targets if dist[tg] == dist[b] - 1)
            path.append(int(c))
            b = int(c)
        paths.append(path)
    return paths


# ---------------------------------------------------------------------------------------------
# CFG generation
# ---------------------------------------------------------------------------------------------


class _Draws:
    """Scalar random draws from a numpy Generator, buffered (a scalar Generator call costs ~1-5 us)."""

    def __init__(self, rng: np.random.Generator, buffer: int = 4096):
        self.rng = rng
        self._size = buffer
        self._buf: list = []

    def random(self) -> float:
        if not self._buf:
            self._buf = self.rng.random(self._size).tolist()[::-1]
        return self._buf.pop()

    def integers(self, lo: int, hi: Optional[int] = None) -> int:
        """Uniform integer in [lo, hi) (or [0, lo))."""
        if hi is None:
            lo, hi = 0, lo
        return lo + min(int(self.random() * (hi - lo)), hi - lo - 1)

    def uniform(self, lo: float, hi: float) -> float:
        return lo + (hi - lo) * self.random()

    def weighted(self, cum) -> int:
        """Index drawn with cumulative weights ``cum`` (last entry = total)."""
        return min(bisect.bisect_right(cum, self.random() * cum[-1]), len(cum) - 1)


def _distance_to_exit(n_blocks: int, succ: list) -> np.ndarray:
    """Edges on a shortest path to the exit per block (BFS on the reversed graph); -1 if none."""
    preds = [[] for _ in range(n_blocks)]
    for b, ss in enumerate(succ):
        for s in ss:
            preds[s].append(b)
    dist = np.full(n_blocks, -1, np.int64)
    dist[n_blocks - 1] = 0
    frontier = [n_blocks - 1]
    while frontier:
        nxt = []
        for v in frontier:
            for p in preds[v]:
                if dist[p] < 0:
                    dist[p] = dist[v] + 1
                    nxt.append(p)
        frontier = nxt
    return dist


class _CFGBuilder:
    """Random code-order CFG with natural loops and unstructured forward edges (see module doc)."""

    def __init__(self, n_blocks, rng, loop_prob, exit_prob, jump_prob, switch_prob, cond_prob, structured=False):
        self.n_blocks = n_blocks
        self.n_real = n_blocks - 1
        self.exit = n_blocks - 1
        self.rng = rng
        self.kind = np.full(self.n_real, FALL, np.int64)
        self.target = [[] for _ in range(self.n_real)]  # non-fall-through successors
        self.loop_head = np.zeros(0, np.int64)
        self.loop_latch = np.zeros(0, np.int64)
        if structured:
            self._grammar(loop_prob, switch_prob, cond_prob)
            self._index_loops()
        else:
            self._draw_kinds(loop_prob, exit_prob, jump_prob, switch_prob, cond_prob)
            self._place_loops()
            self._place_forward_edges()
        self._repair_reachability()

    def _grammar(self, loop_prob, switch_prob, cond_prob):
        """Structured CFG: nested regions that structural analysis (Wu et al. 2012) reduces to one node.

        A region of ``n`` blocks starting at ``lo`` is entered at ``lo`` and leaves only to
        ``lo + n``. It is a basic block, a sequence of two regions, an if-then, an if-then-else
        (then part ending in ``bra.uni`` over the else part), a 3-arm switch, a do-while loop
        (bottom test) or a while loop (top test, ``bra.uni`` back from the last block). Only the
        final block returns. Built with an explicit work list (no recursion limit on big CFGs).
        """
        rng, R = self.rng, self.n_real
        self.kind[R - 1] = RET
        work = [(1, R - 2)] if R >= 3 else []  # block 0 stays a straight-line pre-header
        while work:
            lo, n = work.pop()
            after = lo + n
            r = rng.random()
            if r < loop_prob and n >= 2:
                if n >= 3 and rng.random() < 0.5:  # while: header tests, last block jumps back
                    self.kind[lo], self.target[lo] = COND, [after]
                    self.kind[after - 1], self.target[after - 1] = JUMP_BACK, [lo]
                    work.append((lo + 1, n - 2))
                else:  # do-while: the last block tests and branches back
                    self.kind[after - 1], self.target[after - 1] = LATCH, [lo]
                    work.append((lo, n - 1))
            elif r < loop_prob and n == 1 and rng.random() < 0.3:
                self.kind[lo], self.target[lo] = LATCH, [lo]  # single-block loop
            elif (r := r - loop_prob) < switch_prob and n >= 7:
                # switch: arms of >= 2 blocks, each but the last ending in a jump to `after`
                a1 = 2 + rng.integers(n - 6)
                a2 = 2 + rng.integers(n - 4 - a1 + 1)
                a3 = n - 1 - a1 - a2
                starts = [lo + 1, lo + 1 + a1, lo + 1 + a1 + a2]
                self.kind[lo], self.target[lo] = SWITCH, starts[1:]
                for start, size in zip(starts[:2], (a1, a2)):
                    self.kind[start + size - 1], self.target[start + size - 1] = JUMP, [after]
                    work.append((start, size - 1))
                work.append((starts[2], a3))
            elif (r := r - switch_prob) < cond_prob and n >= 2:
                if n >= 4 and rng.random() < 0.5:  # if-then-else
                    a = 2 + rng.integers(n - 3)  # then part, its jump block included
                    self.kind[lo], self.target[lo] = COND, [lo + 1 + a]
                    self.kind[lo + a], self.target[lo + a] = JUMP, [after]
                    work.append((lo + 1, a - 1))
                    work.append((lo + 1 + a, n - 1 - a))
                else:  # if-then
                    self.kind[lo], self.target[lo] = COND, [after]
                    work.append((lo + 1, n - 1))
            elif n >= 2:
                a = 1 + rng.integers(n - 1)
                work.append((lo, a))
                work.append((lo + a, n - a))

    def _index_loops(self):
        latches = np.flatnonzero((self.kind == LATCH) | (self.kind == JUMP_BACK))
        self.loop_head = np.array([self.target[b][0] for b in latches], np.int64)
        self.loop_latch = latches.astype(np.int64)

    def _draw_kinds(self, loop_prob, exit_prob, jump_prob, switch_prob, cond_prob):
        rng, R = self.rng, self.n_real
        for b in range(R - 1):
            r = rng.random()
            if r < exit_prob:
                self.kind[b] = RET if rng.random() < 0.3 else COND_RET
            elif (r := r - exit_prob) < loop_prob:
                self.kind[b] = JUMP_BACK if rng.random() < 0.25 else LATCH
            elif (r := r - loop_prob) < switch_prob:
                self.kind[b] = SWITCH
            elif (r := r - switch_prob) < jump_prob:
                self.kind[b] = JUMP
            elif r - jump_prob < cond_prob:
                self.kind[b] = COND
        self.kind[R - 1] = RET  # the kernel's final `ret`

    def _place_loops(self):
        """Back edges latch -> header with [header, latch] laminar (properly nested or disjoint)."""
        latch_blocks = np.flatnonzero((self.kind == LATCH) | (self.kind == JUMP_BACK))
        h = np.zeros(len(latch_blocks), np.int64)
        l = np.zeros(len(latch_blocks), np.int64)
        n_loops = 0
        for b in latch_blocks:
            b = int(b)
            lo = max(1, b - MAX_LOOP_SPAN)  # the entry stays a pre-header (kernels load params first)
            candidates = np.arange(lo, b + 1)
            # Only loops ending within the span can cross [t, b] (latches are visited in order).
            near = slice(np.searchsorted(l[:n_loops], lo), n_loops)
            hh, ll = h[near], l[near]
            if len(hh):
                # [t, b] crosses [hh, ll] iff exactly one endpoint of one lies strictly inside the other.
                crosses = ((hh[None, :] < candidates[:, None]) & (candidates[:, None] <= ll[None, :]) & (ll[None, :] < b))
                candidates = candidates[~crosses.any(axis=1)]
            if len(candidates) == 0:
                self.kind[b] = COND
                continue
            t = int(candidates[self.rng.integers(len(candidates))])
            h[n_loops], l[n_loops] = t, b
            n_loops += 1
            self.target[b] = [t]
        self.loop_head = h[:n_loops].copy()
        self.loop_latch = l[:n_loops].copy()
        # inner_head[v]: header of the innermost loop with header < v <= latch (-1 if none); a
        # forward edge u -> v keeps every loop natural iff u is inside that loop (u >= inner_head[v]).
        self.inner_head = np.full(self.n_blocks, -1, np.int64)
        order = np.argsort(-(self.loop_latch - self.loop_head), kind="stable")
        for i in order:
            t, l = self.loop_head[i], self.loop_latch[i]
            self.inner_head[t + 1 : l + 1] = t

    def _forward_candidates(self, b: int) -> np.ndarray:
        v = np.arange(b + 2, min(self.n_real, b + 2 + MAX_FORWARD_SPAN))
        return v[self.inner_head[v] <= b]

    def _place_forward_edges(self):
        rng = self.rng
        for b in range(self.n_real - 1):
            k = self.kind[b]
            if k not in (COND, JUMP, SWITCH):
                continue
            cand = self._forward_candidates(b)
            want = 1 if k != SWITCH else int(rng.integers(2, 4))
            if len(cand) < want:
                if k == SWITCH and len(cand) >= 1:
                    self.kind[b], want = COND, 1
                else:
                    self.kind[b] = FALL
                    continue
            # Mostly short hops (if/else, small skips), sometimes long ones across regions.
            cand = cand.tolist()
            w = [0.7 ** (v - b - 2) for v in cand]
            chosen = []
            for _ in range(want):  # weighted sampling without replacement
                i = rng.weighted(list(itertools.accumulate(w)))
                chosen.append(cand.pop(i))
                w.pop(i)
            self.target[b] = sorted(chosen)

    def successors(self) -> list:
        """Successor lists of every block, fall-through first; the virtual exit has none."""
        return [self.successors_of(b) for b in range(self.n_real)] + [[]]

    def _add_fallthrough(self, b: int):
        k = self.kind[b]
        if k == RET:
            self.kind[b] = COND_RET
        elif k == JUMP:
            self.kind[b] = COND
        elif k == JUMP_BACK:
            self.kind[b] = LATCH

    def _repair_reachability(self):
        # Entry reachability over forward edges only (a loop header reached only by its own back
        # edge would be dead). Sweeping in code order, block b is reachable when visited; if
        # nothing earlier reaches b+1, b falls through to it.
        R = self.n_real
        reached = np.zeros(self.n_blocks, np.bool_)
        reached[0] = True
        for b in range(R):
            for s in self.successors_of(b):
                if s > b:
                    reached[s] = True
            if b + 1 < R and not reached[b + 1]:
                self._add_fallthrough(b)
                reached[b + 1] = True
        # Exit reachability: a JUMP_BACK loop without a break never ends; give its latch a fall-through.
        dist = _distance_to_exit(self.n_blocks, self.successors())
        for b in np.flatnonzero(dist[: self.n_real] < 0):
            if self.kind[b] == JUMP_BACK:
                self.kind[b] = LATCH
        self.dist = _distance_to_exit(self.n_blocks, self.successors())
        assert (self.dist >= 0).all(), "synthetic CFG generator left a block that cannot reach the exit"

    def successors_of(self, b: int) -> list:
        k = self.kind[b]
        if k == RET:
            return [self.exit]
        if k == COND_RET:
            return [b + 1, self.exit]
        if k in (JUMP, JUMP_BACK):
            return list(self.target[b])
        if k == FALL:
            return [b + 1]
        return [b + 1] + list(self.target[b])


# ---------------------------------------------------------------------------------------------
# Instructions
# ---------------------------------------------------------------------------------------------

_SPACE = {OpClass.MEM_GLOBAL: "global", OpClass.MEM_SHARED: "shared", OpClass.MEM_LOCAL: "local",
          OpClass.MEM_CONST: "const"}
_SPACE_OF = {int(k): v for k, v in _SPACE.items()}
_ALU, _SFU, _BARRIER = int(OpClass.ALU), int(OpClass.SFU), int(OpClass.BARRIER)
_ALU_OPS = ("add.s32", "sub.s32", "mul.lo.s32", "and.b32", "shl.b32", "max.s32", "min.s32", "xor.b32")
_SFU_OPS = ("sin.approx.f32", "cos.approx.f32", "ex2.approx.f32", "rsqrt.approx.f32", "lg2.approx.f32")
_OTHER_OPS = ("cvt.rn.f32.s32", "cvt.u64.u32", "prmt.b32", "popc.b32")


def _label(b: int, exit_block: int) -> str:
    if b == exit_block:
        return "<exit>"
    return "" if b == 0 else f"$L__BB0_{b}"


def _instructions(kinds, succ, has_barrier, gen: np.random.Generator, lo: int, hi: int, n_regs: int,
                  op_mix: dict) -> tuple:
    """Random instruction stream matching the CFG's terminators, with register dependencies.

    Returns ``(block_start, op_class, dst_reg, src_reg, text)``. Bodies draw op classes from
    ``op_mix`` (30 % of non-constant memory operations are stores; 20 % of ALU operations are
    3-source ``mad``). Each source reads, with probability 0.7, the result of one of the four
    preceding instructions when that wrote a general register (read-after-write chains for the
    scoreboard), else a random register. Terminators: ``setp`` + ``@%p bra``/``@%p ret`` (the
    branch reads the predicate just written), ``rem`` + ``brx.idx``, ``bra.uni``, ``ret``,
    ``bar.sync`` (DESIGN §2: a barrier ends its block). Drawn in bulk with numpy.
    """
    n_real = len(kinds)
    exit_block = n_real
    classes = np.array([int(c) for c in op_mix], np.int64)
    weights = np.array([float(v) for v in op_mix.values()], np.float64)
    if not len(weights) or weights.min() < 0 or weights.sum() <= 0:
        raise ValueError("op_mix must map OpClass values to non-negative weights with a positive sum")
    control = [OpClass(c).name for c in classes if c in (OpClass.BRANCH, OpClass.EXIT, OpClass.BARRIER)]
    if control:
        # Terminators come from the CFG; a branch or barrier inside a body would break DESIGN §2.
        raise ValueError(f"op_mix may not contain control classes ({', '.join(control)}); they are placed by the CFG")
    n_terms = np.array([{FALL: int(has_barrier[b]), COND: 2, LATCH: 2, COND_RET: 2, SWITCH: 2}.get(int(kinds[b]), 1)
                        for b in range(n_real)], np.int64)
    n_body = np.maximum(gen.integers(lo, hi + 1, size=n_real) - n_terms, np.where(n_terms > 0, 0, 1))
    sizes = n_body + n_terms
    block_start = np.zeros(n_real + 2, np.int64)
    np.cumsum(sizes, out=block_start[1 : n_real + 1])
    block_start[-1] = block_start[-2]  # the virtual exit owns no instructions
    n = int(block_start[n_real])

    op_class = np.full(n, int(OpClass.ALU), np.int64)
    dst = np.full(n, -1, np.int64)
    n_src = np.zeros(n, np.int64)  # sources drawn below (fixed sources are set afterwards)
    variant = gen.integers(0, 1 << 30, size=n)  # picks the opcode spelling
    # Bodies, all at once.
    body = np.repeat(block_start[:n_real], n_body) + (np.arange(int(n_body.sum())) - np.repeat(
        np.cumsum(n_body) - n_body, n_body))
    cls = classes[np.minimum(np.searchsorted(np.cumsum(weights), gen.random(len(body)) * weights.sum(), side="right"),
                             len(classes) - 1)]
    op_class[body] = cls
    is_mem = np.isin(cls, [int(c) for c in _SPACE])
    store = is_mem & (cls != OpClass.MEM_CONST) & (gen.random(len(body)) < 0.3)
    mad = (cls == OpClass.ALU) & (gen.random(len(body)) < 0.2)
    dst[body] = np.where(store, -1, gen.integers(0, n_regs, size=len(body)))
    n_src[body] = np.select([store, is_mem, mad, cls == OpClass.ALU], [2, 1, 3, 2], default=1)
    # Terminators.
    fixed_src = np.full(n, -1, np.int64)  # a source that must be a given register (predicate, index)
    for b in range(n_real):
        k, end = int(kinds[b]), int(block_start[b + 1])
        if k in (COND, LATCH, COND_RET):
            dst[end - 2] = n_regs + int(gen.integers(N_PREDICATES))  # setp writes a predicate
            n_src[end - 2] = 2
            op_class[end - 1] = OpClass.EXIT if k == COND_RET else OpClass.BRANCH
            fixed_src[end - 1] = dst[end - 2]
        elif k == SWITCH:
            dst[end - 2] = int(gen.integers(n_regs))  # rem computes the jump-table index
            n_src[end - 2] = 1
            op_class[end - 1] = OpClass.BRANCH
            fixed_src[end - 1] = dst[end - 2]
        elif k in (JUMP, JUMP_BACK):
            op_class[end - 1] = OpClass.BRANCH
        elif k == RET:
            op_class[end - 1] = OpClass.EXIT
        elif has_barrier[b]:
            op_class[end - 1] = OpClass.BARRIER
    # Sources: mostly a recent result (read-after-write), else any register.
    src = np.full((n, 3), -1, np.int64)
    idx = np.arange(n)
    for col in range(3):
        back = idx - gen.integers(1, 5, size=n)
        recent = np.where(back >= 0, dst[np.maximum(back, 0)], -1)
        usable = (recent >= 0) & (recent < n_regs) & (gen.random(n) < 0.7)
        drawn = np.where(usable, recent, gen.integers(0, n_regs, size=n))
        src[:, col] = np.where(n_src > col, drawn, -1)
    has_fixed = fixed_src >= 0
    src[has_fixed, 0] = fixed_src[has_fixed]

    text = []
    starts, cls_l, dst_l, src_l, var_l = block_start.tolist(), op_class.tolist(), dst.tolist(), src.tolist(), variant.tolist()
    for b in range(n_real):
        k = int(kinds[b])
        targets = [t for t in succ[b] if t != b + 1 or k in (JUMP, JUMP_BACK)]
        end = starts[b + 1]
        for i in range(starts[b], end):
            text.append(_text(b, k, end - i, cls_l[i], dst_l[i], src_l[i], var_l[i], targets, len(succ[b]), n_regs,
                              exit_block))
    return (block_start, op_class.astype(np.uint8), dst.astype(np.int16), src.astype(np.int16), text)


def _text(b, kind, from_end, cls, d, srcs, variant, targets, n_succ, n_regs, exit_block) -> str:
    """The PTX-looking line of one synthetic instruction (for humans reading traces)."""
    r = [f"%r{x}" for x in srcs if x >= 0]
    if from_end == 1 and kind in (COND, LATCH):
        return f"@%p{srcs[0] - n_regs} bra {_label(targets[0], exit_block)};"
    if from_end == 1 and kind == COND_RET:
        return f"@%p{srcs[0] - n_regs} ret;"
    if from_end == 1 and kind == SWITCH:
        return f"brx.idx %r{srcs[0]}, $L__jt{b};"
    if from_end == 1 and kind in (JUMP, JUMP_BACK):
        return f"bra.uni {_label(targets[0], exit_block)};"
    if from_end == 1 and kind == RET:
        return "ret;"
    if cls == _BARRIER:
        return "bar.sync 0;"
    if from_end == 2 and kind in (COND, LATCH, COND_RET):
        return f"setp.lt.s32 %p{d - n_regs}, {r[0]}, {r[1]};"
    if from_end == 2 and kind == SWITCH:
        return f"rem.u32 %r{d}, {r[0]}, {n_succ};"
    space = _SPACE_OF.get(cls)
    if space is not None:
        return f"st.{space}.u32 [{r[0]}], {r[1]};" if d < 0 else f"ld.{space}.u32 %r{d}, [{r[0]}];"
    if cls == _ALU:
        if len(r) == 3:
            return f"mad.lo.s32 %r{d}, {r[0]}, {r[1]}, {r[2]};"
        return f"{_ALU_OPS[variant % len(_ALU_OPS)]} %r{d}, {r[0]}, {r[1]};"
    if cls == _SFU:
        return f"{_SFU_OPS[variant % len(_SFU_OPS)]} %r{d}, {r[0]};"
    return f"{_OTHER_OPS[variant % len(_OTHER_OPS)]} %r{d}, {r[0]};"


# ---------------------------------------------------------------------------------------------
# Public API
# ---------------------------------------------------------------------------------------------


def _launch_shape(n_threads, block, grid):
    def dims(v):
        v = (int(v),) if np.isscalar(v) else tuple(int(x) for x in v)
        v = v + (1,) * (3 - len(v))
        if len(v) != 3 or min(v) < 1:
            raise ValueError(f"launch dimensions must be 1-3 positive integers (got {v})")
        return v

    if block is None:
        if n_threads is None:
            raise ValueError("synthetic needs n_threads or block and grid")
        if grid is not None:
            per_cta = int(n_threads) // int(np.prod(dims(grid)))
        else:  # the largest CTA of at most 256 threads that tiles n_threads, whole warps preferred
            sizes = [d for d in range(min(int(n_threads), 256), 0, -1) if int(n_threads) % d == 0]
            per_cta = next((d for d in sizes if d % 32 == 0), sizes[0] if sizes else 1)
        block = (max(per_cta, 1),)
    block = dims(block)
    per_cta = int(np.prod(block))
    if grid is None:
        if n_threads is None:
            raise ValueError("synthetic needs n_threads or grid")
        if int(n_threads) % per_cta:
            raise ValueError(f"n_threads={n_threads} is not a multiple of the {per_cta} threads per CTA of block {block}")
        grid = (int(n_threads) // per_cta,)
    grid = dims(grid)
    total = int(np.prod(grid)) * per_cta
    if n_threads is not None and int(n_threads) != total:
        raise ValueError(f"n_threads={n_threads} but grid {grid} x block {block} launches {total} threads")
    if total < 1:
        raise ValueError("a synthetic trace needs at least one thread")
    return block, grid, total


def synthetic(
    n_blocks: int = 16,
    n_threads: Optional[int] = 64,
    seed: int = 0,
    *,
    warp_size: int = 32,
    block: Optional[Sequence[int]] = None,
    grid: Optional[Sequence[int]] = None,
    loop_prob: float = 0.15,
    exit_prob: float = 0.06,
    jump_prob: float = 0.10,
    switch_prob: float = 0.02,
    cond_prob: float = 0.45,
    barrier_prob: float = 0.5,
    max_path_len: int = 256,
    divergence: float = 0.2,
    instrs_per_block: tuple = (2, 8),
    op_mix: Optional[dict] = None,
    n_regs: int = 32,
    kernel: str = "synthetic",
    with_mem: bool = False,
    structured: bool = False,
) -> Trace:
    """A random valid trace: ``n_blocks`` blocks (the last is the virtual exit), ``n_threads`` paths.

    * ``loop_prob`` / ``exit_prob`` / ``jump_prob`` / ``switch_prob`` / ``cond_prob``: chance that a
      block ends in a loop latch / a (guarded) ``ret`` / a forward ``bra.uni`` / a ``brx.idx`` /
      a forward conditional branch (else it falls through);
    * ``barrier_prob``: chance that a fall-through block every thread passes exactly once (it
      post-dominates the entry and lies outside every loop) ends in ``bar.sync``;
    * ``divergence``: mean probability that a thread deviates from its warp's branch outcome
      (0 = warps never diverge; each block scales it by a random factor in [0, 2]);
    * ``warp_size``: the thread grouping that shares outcomes (the simulator may use another);
    * ``max_path_len``: blocks per path before threads take a shortest route to the exit;
    * ``instrs_per_block``: (lo, hi) instructions per real block; ``op_mix``: OpClass -> weight;
    * ``structured``: build the CFG from structured regions only (sequence, if-then, if-then-else,
      switch, while, do-while; a single return), which structural analysis reduces to one node —
      the baseline to compare unstructured CFGs (Wu et al. 2012) against; ``exit_prob`` and
      ``jump_prob`` are then unused;
    * ``with_mem``: also record ``/mem`` (the per-instruction layout of DESIGN §3: one entry per
      executed global, shared, local or constant instruction, NO_ACCESS where a guard is false)
      and ``mem_bytes``/``mem_kind``, each memory instruction following one access pattern
      (coalesced, strided, broadcast or random, aligned to its access width).
    """
    n_blocks = int(n_blocks)
    if n_blocks < 2:
        raise ValueError("n_blocks must be at least 2 (an entry block and the virtual exit)")
    if n_blocks > 0xFFFFFFFF:
        raise ValueError("n_blocks must fit in uint32")
    if warp_size < 1:
        raise ValueError("warp_size must be positive")
    lo, hi = (int(x) for x in instrs_per_block)
    if not 1 <= lo <= hi:
        raise ValueError(f"instrs_per_block must be (lo, hi) with 1 <= lo <= hi (got {instrs_per_block})")
    if n_regs < 4 or n_regs + N_PREDICATES > np.iinfo(np.int16).max:
        raise ValueError(f"n_regs must be between 4 and {np.iinfo(np.int16).max - N_PREDICATES}")
    for name, p in (("loop_prob", loop_prob), ("exit_prob", exit_prob), ("jump_prob", jump_prob),
                    ("switch_prob", switch_prob), ("cond_prob", cond_prob), ("barrier_prob", barrier_prob),
                    ("divergence", divergence)):
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"{name} must be a probability in [0, 1] (got {p})")
    block, grid, n_threads = _launch_shape(n_threads, block, grid)
    rng = _Draws(np.random.default_rng([int(seed) & _M64, n_blocks]))
    exit_block = n_blocks - 1

    cfg = _CFGBuilder(n_blocks, rng, loop_prob, exit_prob, jump_prob, switch_prob, cond_prob, structured)
    succ = cfg.successors()
    succ_ptr = np.zeros(n_blocks + 1, np.int64)
    np.cumsum([len(s) for s in succ], out=succ_ptr[1:])
    succ_idx = np.fromiter((t for s in succ for t in s), np.int64, int(succ_ptr[-1]))
    ipdom = _ipdom(n_blocks, succ_ptr, succ_idx)

    # Barriers only where every thread of a CTA passes exactly once (no deadlock, no count mismatch):
    # blocks on the entry's post-dominator chain, outside every loop interval.
    in_loop = np.zeros(n_blocks, np.bool_)
    for t, l in zip(cfg.loop_head, cfg.loop_latch):
        in_loop[t : l + 1] = True
    has_barrier = np.zeros(n_blocks, np.bool_)
    b = 0
    while b != exit_block and b >= 0:
        if cfg.kind[b] == FALL and not in_loop[b] and rng.random() < barrier_prob:
            has_barrier[b] = True
        b = int(ipdom[b])

    # Branch probabilities (cumulative per CSR row) and per-block deviation from the warp outcome.
    succ_cum = np.ones(len(succ_idx), np.float64)
    for b in range(exit_block):
        k, row = cfg.kind[b], slice(succ_ptr[b], succ_ptr[b + 1])
        n = succ_ptr[b + 1] - succ_ptr[b]
        if n == 1:
            continue
        if k == LATCH:  # [fall-through (leave), back edge]: 2-10 iterations on average
            stay = rng.uniform(0.5, 0.9)
            probs = np.array([1 - stay, stay])
        elif k == COND_RET:  # [fall-through, exit]: early returns are the rarer outcome
            r = rng.uniform(0.05, 0.3)
            probs = np.array([1 - r, r])
        elif n == 2:
            taken = rng.uniform(0.15, 0.85)
            probs = np.array([1 - taken, taken])
        else:
            probs = rng.rng.dirichlet(np.full(n, 2.0))
        cum = np.cumsum(probs)
        cum[-1] = 1.0
        succ_cum[row] = cum
    deviate = np.minimum(1.0, divergence * rng.rng.uniform(0.0, 2.0, n_blocks))

    block_start, op_class, dst_reg, src_reg, text = _instructions(
        cfg.kind, succ, has_barrier, rng.rng, lo, hi, int(n_regs), op_mix or DEFAULT_OP_MIX)

    max_len = max(int(max_path_len), int(cfg.dist[0]) + 1)
    per_cta = int(np.prod(block))
    path_ptr, path = walk_paths(succ_ptr, succ_idx, succ_cum, deviate, cfg.dist, per_cta, int(warp_size), max_len,
                                int(seed) & _M64, n_threads, dtype=path_dtype(n_blocks))
    mem = {}
    if with_mem:
        mem = _memory_addresses(op_class, dst_reg, src_reg, text, block_start, path_ptr, path, per_cta, int(n_regs),
                                rng, int(seed) & _M64)
        src_reg, text = mem.pop("src_reg"), mem.pop("text")
    return Trace(
        kernel=kernel,
        grid=grid,
        block=block,
        source_sha256="",
        block_start=block_start.astype(np.int32),
        succ_ptr=succ_ptr.astype(np.int32),
        succ_idx=succ_idx.astype(np.int32),
        ipdom=ipdom.astype(np.int32),
        label=[_label(b, exit_block) for b in range(n_blocks)],
        has_barrier=has_barrier,
        op_class=op_class,
        dst_reg=dst_reg,
        src_reg=src_reg,
        text=text,
        path_ptr=path_ptr,
        path=path,
        **mem,
        attrs={"generator": "simt_fast.trace.synth", "seed": int(seed), "warp_size": int(warp_size),
               "divergence": float(divergence), "loop_prob": float(loop_prob), "exit_prob": float(exit_prob)},
    )


# Access patterns of synthetic memory instructions (what coalescing statistics would see).
COALESCED, STRIDED, BROADCAST, RANDOM = range(4)
GLOBAL_REGION = 1 << 24  # bytes of address space per global memory instruction
SHARED_REGION = 1 << 12  # bytes per shared memory instruction (48 KiB of shared memory / ~12 arrays)
LOCAL_SLOT = 64  # bytes of a thread's local frame per local memory instruction (a spilled array)
CONST_REGION = 1 << 10  # bytes of the constant bank per constant memory instruction
GUARD_PROB = 0.2  # chance that a memory instruction is guarded by a predicate
GUARD_OFF = 0.3  # chance that a guarded instruction's guard is false for a thread (NO_ACCESS)
ATOMIC_PROB = 0.1  # chance that a global/shared store is a reduction (red: read-modify-write)
WIDTHS = (4, 8, 16)  # bytes per thread access: scalar, 64-bit or v2, v4
WIDTH_CUM = (0.7, 0.85, 1.0)


def _splitmix_np(x: np.ndarray) -> np.ndarray:
    x = x + np.uint64(_GOLDEN)
    x = (x ^ (x >> np.uint64(30))) * np.uint64(_MIX1)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(_MIX2)
    return x ^ (x >> np.uint64(31))


def _memory_addresses(op_class, dst_reg, src_reg, text, block_start, path_ptr, path, per_cta, n_regs, rng,
                      seed) -> dict:
    """/mem in the per-instruction layout (DESIGN §3) plus ``mem_bytes``/``mem_kind``.

    One entry per executed memory instruction (global, shared, local, constant), in path order.
    Each instruction draws an access width (4, 8 or 16 bytes; addresses are aligned to it) and a
    pattern: COALESCED (element ``tid``), STRIDED (element ``tid * s``, s in 2/4/8/32), BROADCAST
    (one element for every thread) or RANDOM (a hashed element of its region). Global patterns use
    the grid-wide thread id and a 16 MiB region per instruction, shared ones the id within the CTA
    and a 4 KiB region; local accesses are offsets in the thread's own frame (the same offset for
    every thread, as a spilled array is), constant ones offsets in the bank (broadcast, or indexed
    by the lane for the RANDOM pattern). The k-th execution of an instruction by a thread (loop
    iteration k) moves to the next tile of the region, as a loop walking an array would. Some
    instructions are guarded (their predicate becomes the first source): a thread whose guard is
    false gets NO_ACCESS. Stores are partly reductions (``red``: MEM_ATOMIC).
    """
    n_instrs = len(op_class)
    is_mem = np.isin(op_class, [int(c) for c in _SPACE])
    pattern = np.array([rng.weighted([0.5, 0.75, 0.85, 1.0]) for _ in range(n_instrs)], np.int64)
    stride = np.array([(2, 4, 8, 32)[rng.integers(4)] for _ in range(n_instrs)], np.int64)
    width = np.array([WIDTHS[rng.weighted(WIDTH_CUM)] for _ in range(n_instrs)], np.int64)
    guarded = np.array([rng.random() < GUARD_PROB for _ in range(n_instrs)], np.bool_) & is_mem
    atomic_draw = np.array([rng.random() < ATOMIC_PROB for _ in range(n_instrs)], np.bool_)
    glob, shared = op_class == OpClass.MEM_GLOBAL, op_class == OpClass.MEM_SHARED
    local, const = op_class == OpClass.MEM_LOCAL, op_class == OpClass.MEM_CONST
    store = is_mem & (dst_reg < 0)
    atomic = store & (glob | shared) & atomic_draw
    width = np.where(const | atomic, 4, width)  # constant loads and reductions are 32-bit here
    mem_kind = np.select([atomic, store, is_mem], [MEM_ATOMIC, MEM_STORE, MEM_LOAD], MEM_NONE).astype(np.uint8)
    mem_bytes = np.where(is_mem, width, 0).astype(np.uint8)
    region = np.select([shared, local, const], [SHARED_REGION, LOCAL_SLOT, CONST_REGION], GLOBAL_REGION)
    index = np.arange(n_instrs, dtype=np.int64)
    base = np.select([shared, local, const], [index * SHARED_REGION, index * LOCAL_SLOT, index * CONST_REGION],
                     (1 << 32) + index * GLOBAL_REGION)

    # Memory instructions of each block, as a CSR over blocks.
    mem_instrs = np.flatnonzero(is_mem)
    block_of = np.searchsorted(block_start, mem_instrs, side="right") - 1
    n_blocks = len(block_start) - 1
    per_block = np.bincount(block_of, minlength=n_blocks)
    mem_block_ptr = np.concatenate(([0], np.cumsum(per_block)))

    # Expand every path step into its block's memory instructions (numpy, no loop over steps).
    steps = path.astype(np.int64)
    count = per_block[steps]
    first = np.concatenate(([0], np.cumsum(count)))
    total = int(first[-1])
    step_of = np.repeat(np.arange(len(steps)), count)
    instr = mem_instrs[mem_block_ptr[steps[step_of]] + (np.arange(total) - first[step_of])]
    thread = np.repeat(np.arange(len(path_ptr) - 1), np.diff(path_ptr))[step_of] if total else np.zeros(0, np.int64)
    # k: how many times this thread already executed this instruction (its loop iteration).
    key = thread * n_instrs + instr
    order = np.argsort(key, kind="stable")
    sorted_key = key[order]
    group_start = np.flatnonzero(np.concatenate(([True], sorted_key[1:] != sorted_key[:-1]))) if total else np.zeros(0, np.int64)
    rank = np.arange(total) - np.repeat(group_start, np.diff(np.append(group_start, total)))
    k = np.empty(total, np.int64)
    k[order] = rank

    lane = np.where(glob[instr], thread, thread % per_cta)  # only global ids span the grid
    elems = region[instr] // width[instr]
    span = np.where(glob[instr], len(path_ptr) - 1, per_cta)
    pat = np.where(local[instr], BROADCAST, pattern[instr])  # a local offset is the same in every frame
    hashed = _splitmix_np((np.uint64(seed) + key.astype(np.uint64)) ^ (k.astype(np.uint64) << np.uint64(40)))
    elem = np.select(
        [pat == COALESCED, pat == STRIDED, pat == BROADCAST, const[instr]],
        [lane + k * span, lane * stride[instr] + k * span * stride[instr], k, lane % 16 + k],
        default=(hashed % elems.astype(np.uint64)).astype(np.int64),
    ) % elems
    mem_addr = (base[instr] + width[instr] * elem).astype(np.uint64)
    off = guarded[instr] & ((hashed >> np.uint64(11)).astype(np.float64) * 2.0**-53 < GUARD_OFF)
    mem_addr[off] = NO_ACCESS
    mem_ptr = np.zeros(len(path_ptr), np.int64)
    np.cumsum(np.add.reduceat(count, path_ptr[:-1]) if len(count) else np.zeros(len(path_ptr) - 1, np.int64),
              out=mem_ptr[1:])

    # The instructions say what they do: the guard is the first source, the text shows width and kind.
    src_reg = src_reg.copy()
    text = list(text)
    for i in mem_instrs.tolist():
        space = _SPACE_OF[int(op_class[i])]
        srcs = [int(r) for r in src_reg[i] if r >= 0]
        guard = ""
        if guarded[i]:
            pred = n_regs + i % N_PREDICATES
            guard = f"@%p{i % N_PREDICATES} "
            src_reg[i] = ([pred] + srcs + [-1, -1, -1])[:3]
        ty = {4: "u32", 8: "u64", 16: "v4.u32"}[int(width[i])]
        if atomic[i]:
            text[i] = f"{guard}red.{space}.add.u32 [%r{srcs[0]}], %r{srcs[1]};"
        elif store[i]:
            text[i] = f"{guard}st.{space}.{ty} [%r{srcs[0]}], %r{srcs[1]};"
        else:
            d = f"%r{int(dst_reg[i])}"
            text[i] = f"{guard}ld.{space}.{ty} {'{' + d + ', _, _, _}' if width[i] == 16 else d}, [%r{srcs[0]}];"
    return {"mem_ptr": mem_ptr, "mem_addr": mem_addr, "mem_format": MEM_FORMAT, "mem_bytes": mem_bytes,
            "mem_kind": mem_kind, "src_reg": src_reg, "text": text}


def _ipdom(n_blocks: int, succ_ptr: np.ndarray, succ_idx: np.ndarray) -> np.ndarray:
    """Immediate post-dominators from the CFG layer (virtual exit -> -1, the Trace convention)."""
    ipdom = np.asarray(immediate_postdominators(n_blocks, succ_ptr, succ_idx, n_blocks - 1), np.int64).copy()
    ipdom[n_blocks - 1] = -1
    return ipdom


def traces(max_blocks: int = 24, max_threads: int = 96, warp_sizes: Sequence[int] = (4, 8, 16, 32), **fixed):
    """Hypothesis strategy drawing small random synthetic traces (keyword args fix parameters)."""
    from hypothesis import strategies as st

    @st.composite
    def _traces(draw):
        kw = dict(
            n_blocks=draw(st.integers(2, max_blocks)),
            warp_size=draw(st.sampled_from(tuple(warp_sizes))),
            loop_prob=draw(st.floats(0.0, 0.4)),
            exit_prob=draw(st.floats(0.0, 0.2)),
            jump_prob=draw(st.floats(0.0, 0.2)),
            switch_prob=draw(st.sampled_from((0.0, 0.05))),
            barrier_prob=draw(st.sampled_from((0.0, 0.5, 1.0))),
            divergence=draw(st.floats(0.0, 1.0)),
            max_path_len=draw(st.integers(2, 96)),
            seed=draw(st.integers(0, 2**32 - 1)),
            with_mem=draw(st.booleans()),
            structured=draw(st.sampled_from((False, False, True))),
        )
        n_ctas = draw(st.integers(1, 3))
        per_cta = draw(st.integers(1, max(1, max_threads // n_ctas)))
        kw.update(block=(per_cta, 1, 1), grid=(n_ctas, 1, 1), n_threads=None)
        kw.update(fixed)
        return synthetic(**kw)

    return _traces()


# `simt_fast.trace.synth` is this function once the package is imported; keep the strategy reachable.
