"""MUMmer-like query matching over a suffix trie (Jin 2012 §5.3, MUM).

Inputs: a random reference genome over ACGT; queries of 25 bases, mostly sampled from the
reference with point mutations and a few unknown bases ('N' = 4), some fully random.  The trie
is built here (depth-capped suffix trie, breadth of 4 children per node).

Reference (independent of the trie): the longest prefix of ``query[start:]`` that occurs as a
substring of the reference, capped at the trie depth, found by comparing integer codes of all
query and reference substrings of each length.
"""

from __future__ import annotations

import numpy as np

from simt_fast.workloads import LaunchSpec, Workload, fill

# reference length, trie depth, number of queries, query length, block
SIZES = {"tiny": (1500, 12, 192, 25, 64), "default": (8192, 20, 4096, 25, 128),
         "thesis": (140000, 20, 50000, 25, 128)}


def build_trie(reference: np.ndarray, depth: int) -> np.ndarray:
    """Suffix trie of ``reference`` with every suffix truncated to ``depth`` bases: int32[n, 4].

    Built level by level: at depth d every suffix still long enough steps from its node along
    base reference[start + d]; each distinct (node, base) pair is one new node (breadth-first
    numbering, root = 0)."""
    ref = reference.astype(np.int64)
    starts = np.arange(len(ref))
    node = np.zeros(len(ref), np.int64)
    children = [np.full(4, -1, np.int64)]
    n_nodes = 1
    for d in range(depth):
        alive = starts + d < len(ref)
        starts, node = starts[alive], node[alive]
        if not len(starts):
            break
        key = node * 4 + ref[starts + d]
        edges, inverse = np.unique(key, return_inverse=True)
        new_ids = n_nodes + np.arange(len(edges))
        children.append(np.full(4 * len(edges), -1, np.int64))
        flat = np.concatenate(children)
        flat[edges] = new_ids
        children = [flat]
        node = new_ids[inverse.ravel()]
        n_nodes += len(edges)
    flat = np.concatenate(children)
    return flat.reshape(-1, 4).astype(np.int32)


def make(size: str, rng: np.random.Generator) -> LaunchSpec:
    n_ref, depth, n_q, qlen, block = SIZES[size]
    reference = rng.integers(0, 4, n_ref, dtype=np.uint8)
    starts = rng.integers(0, n_ref - qlen, n_q)
    queries = reference[starts[:, None] + np.arange(qlen)[None, :]].copy()
    mutate = rng.random((n_q, qlen)) < 0.06
    queries[mutate] = rng.integers(0, 4, int(mutate.sum()), dtype=np.uint8)
    queries[rng.random((n_q, qlen)) < 0.01] = 4  # 'N'
    randoms = rng.random(n_q) < 0.15
    queries[randoms] = rng.integers(0, 4, (int(randoms.sum()), qlen), dtype=np.uint8)
    trie = build_trie(reference, depth)
    args = [trie.ravel(), queries.ravel(), np.int32(n_q), np.int32(qlen),
            fill(n_q * qlen, np.int32, -7), fill(2 * n_q, np.int32, -7)]
    names = ("trie", "queries", "n_queries", "query_len", "match_len", "best")
    return LaunchSpec((n_q + block - 1) // block, block, args, outputs=(4, 5), arg_names=names,
                      meta={"reference": reference, "depth": depth})


def reference(spec: LaunchSpec) -> dict:
    """Longest prefix of each query suffix that occurs in the reference (<= depth), by counting:
    a length-k substring occurs only if its length-(k-1) prefix does, so the match length at a
    start is the number of lengths k whose substring is among the reference's length-k
    substrings (compared as base-4 integer codes)."""
    ref, depth = spec.meta["reference"].astype(np.int64), spec.meta["depth"]
    n_q, qlen = int(spec.arg("n_queries")), int(spec.arg("query_len"))
    queries = spec.arg("queries").reshape(n_q, qlen).astype(np.int64)
    match_len = np.zeros((n_q, qlen), np.int32)
    ref_code = np.zeros(len(ref), np.int64)
    q_code = np.zeros((n_q, qlen), np.int64)
    q_ok = np.ones((n_q, qlen), bool)
    for k in range(1, min(depth, qlen) + 1):
        # codes of the substrings of length k starting at every position
        ref_code = ref_code[:len(ref) - k + 1] * 4 + ref[k - 1:]
        q_code = q_code[:, :qlen - k + 1] * 4 + np.minimum(queries[:, k - 1:], 3)
        q_ok = q_ok[:, :qlen - k + 1] & (queries[:, k - 1:] <= 3)  # an 'N' matches nothing
        present = q_ok & np.isin(q_code, np.unique(ref_code))
        match_len[:, :qlen - k + 1] += present
    best_start = np.argmax(match_len, axis=1)  # first maximum, like the kernel's strict '>'
    best_len = match_len[np.arange(n_q), best_start]
    best = np.stack([best_len, np.where(best_len > 0, best_start, -1)], axis=1).astype(np.int32)
    return {"match_len": match_len.ravel(), "best": best.ravel()}


WORKLOAD = Workload(
    name="mummer",
    description="MUMmer-like query matching by suffix-trie pointer chasing (Jin 2012 §5.3 MUM)",
    kernel="mummer_match",
    make=make,
    sizes=tuple(SIZES),
    reference=reference,
    features=("pointer chasing", "data-dependent loop exits", "byte loads"),
)
