"""MUMmer-like query matching over a suffix trie (seed 003 §5.3, MUM).

Inputs: a random reference genome over ACGT; queries of 25 bases, mostly sampled from the
reference with point mutations and a few unknown bases ('N' = 4), some fully random.  The trie
is built here (depth-capped suffix trie, breadth of 4 children per node).

Reference (independent of the trie): the longest prefix of ``query[start:]`` that occurs as a
substring of the reference, capped at the trie depth, found with a set of all reference
substrings of length <= depth.
"""

from __future__ import annotations

import numpy as np

from simt_fast.workloads import LaunchSpec, Workload, fill

# reference length, trie depth, number of queries, query length, block
SIZES = {"tiny": (1500, 12, 192, 25, 64), "default": (8192, 20, 4096, 25, 128)}


def build_trie(reference: np.ndarray, depth: int) -> np.ndarray:
    """Suffix trie of ``reference`` with every suffix truncated to ``depth`` bases: int32[n, 4]."""
    children = [[-1, -1, -1, -1]]
    ref = reference.tolist()
    for start in range(len(ref)):
        node = 0
        for base in ref[start:start + depth]:
            nxt = children[node][base]
            if nxt < 0:
                nxt = len(children)
                children[node][base] = nxt
                children.append([-1, -1, -1, -1])
            node = nxt
    return np.array(children, np.int32)


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
    ref, depth = spec.meta["reference"], spec.meta["depth"]
    n_q, qlen = int(spec.arg("n_queries")), int(spec.arg("query_len"))
    ref_bytes = ref.tobytes()
    substrings = {ref_bytes[i:i + k] for k in range(1, depth + 1) for i in range(len(ref_bytes) - k + 1)}
    queries = spec.arg("queries").reshape(n_q, qlen)
    match_len = np.zeros((n_q, qlen), np.int32)
    for q in range(n_q):
        qb = queries[q].tobytes()
        for s in range(qlen):
            k = 0
            while s + k < qlen and k < depth and qb[s:s + k + 1] in substrings:
                k += 1
            match_len[q, s] = k
    best_start = np.argmax(match_len, axis=1)  # first maximum, like the kernel's strict '>'
    best_len = match_len[np.arange(n_q), best_start]
    best = np.stack([best_len, np.where(best_len > 0, best_start, -1)], axis=1).astype(np.int32)
    return {"match_len": match_len.ravel(), "best": best.ravel()}


WORKLOAD = Workload(
    name="mummer",
    description="MUMmer-like query matching by suffix-trie pointer chasing (seed 003 §5.3 MUM)",
    kernel="mummer_match",
    make=make,
    reference=reference,
    features=("pointer chasing", "data-dependent loop exits", "byte loads"),
)
