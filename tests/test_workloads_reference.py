"""Golden and cross-checks of the workloads' numpy references.

Hand-worked cases (FIPS-197 vectors, N-Queens totals, a one-sphere scene, lexer lines...) and
small per-thread Python models written the way the kernel runs (scalar, sequential), compared
with the vectorised references that check() uses.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import simt_fast.workloads as workloads
from simt_fast.workloads import aes, bfs, inlinedreturn, mummer, nn
from simt_fast.workloads import nqueens, raytrace, statemachine, storegpu


def tiny(name, seed=0):
    return workloads.get(name).launch_spec("tiny", seed=seed)


# --- aes -----------------------------------------------------------------------------------------

def test_aes_sbox_and_fips197_vectors():
    assert (aes._SBOX[0x00], aes._SBOX[0x01], aes._SBOX[0x53]) == (0x63, 0x7C, 0xED)
    assert len(set(aes._SBOX.tolist())) == 256  # a permutation
    rk = aes.expand_key(bytes.fromhex("2b7e151628aed2a6abf7158809cf4f3c"))  # FIPS-197 A.1
    assert rk[160:].tobytes().hex() == "d014f9a8c9ee2589e13f0cc8b6630ca6"
    plain = np.frombuffer(bytes.fromhex("00112233445566778899aabbccddeeff"), np.uint8)  # FIPS-197 C.1
    assert aes.encrypt(plain, aes.expand_key(bytes(range(16)))).tobytes().hex() == "69c4e0d86a7b0430d8cdb78070b4c55a"


# --- nqueens -------------------------------------------------------------------------------------

def test_nqueens_known_totals():
    assert nqueens.completions([], 6) == 4
    assert int(workloads.get("nqueens").reference(tiny("nqueens"))["total"][0]) == 92  # N = 8
    spec = workloads.get("nqueens").launch_spec("default")
    assert int(spec.arg("n")) == 10 and int(workloads.get("nqueens").reference(spec)["total"][0]) == 724


def test_nqueens_prefix_masks_encode_attacked_squares():
    n = 8
    for prefix in nqueens.prefixes(n, 3)[:40]:
        cols, left, right = nqueens.encode(prefix, n)
        free = [c for c in range(n) if not ((cols | left | right) >> c) & 1]
        assert free == [c for c in range(n) if nqueens.safe(prefix, c)]


# --- blackscholes --------------------------------------------------------------------------------

def test_blackscholes_matches_closed_form_and_put_call_parity():
    spec = tiny("blackscholes")
    ref = workloads.get("blackscholes").reference(spec)
    r, v = float(spec.arg("riskfree")), float(spec.arg("volatility"))
    for i in range(0, 600, 37):
        s, x, t = (float(spec.arg(k)[i]) for k in ("spot", "strike", "years"))
        d1 = (math.log(s / x) + (r + v * v / 2) * t) / (v * math.sqrt(t))
        d2 = d1 - v * math.sqrt(t)
        phi = lambda z: 0.5 * (1 + math.erf(z / math.sqrt(2)))  # noqa: E731
        call = s * phi(d1) - x * math.exp(-r * t) * phi(d2)
        assert ref["call"][i] == pytest.approx(call, abs=1e-3)
        assert ref["call"][i] - ref["put"][i] == pytest.approx(s - x * math.exp(-r * t), abs=1e-3)


# --- bfs -----------------------------------------------------------------------------------------

def test_bfs_hand_worked_graph():
    # 0 -> 1, 2 ; 1 -> 2, 3 ; 2 -> 0, 4 ; 3 -> 4 ; 4 -> 1.  Level 1 = {1, 2}; 0 visited at level 0.
    row_ptr = np.array([0, 2, 4, 6, 7, 8], np.int32)
    col_idx = np.array([1, 2, 2, 3, 0, 4, 4, 1], np.int32)
    assert bfs.bfs_depths(row_ptr, col_idx).tolist() == [0, 1, 1, 2, 2]
    level = np.array([0, 1, 1, -1, -1], np.int32)
    spec = workloads.LaunchSpec(1, 32, [row_ptr, col_idx, level, np.int32(5), np.int32(1), None, None],
                                arg_names=("row_ptr", "col_idx", "level", "n_nodes", "cur_level", "next_frontier",
                                           "counters"))
    ref = bfs.reference(spec)
    assert ref["next_frontier"].tolist() == [0, 0, 0, 1, 1]
    # frontier {1, 2}; edges 1->2, 1->3, 2->0, 2->4 examined; 1->3 and 2->4 reach unvisited nodes
    assert ref["counters"].tolist() == [2, 4, 2]


def test_bfs_reference_matches_per_node_loop():
    spec = tiny("bfs", seed=2)
    row_ptr, col_idx, level = spec.arg("row_ptr"), spec.arg("col_idx"), spec.arg("level")
    cur = int(spec.arg("cur_level"))
    nxt = np.zeros(len(level), np.int32)
    counters = [0, 0, 0]
    for v in range(len(level)):
        if level[v] != cur:
            continue
        counters[0] += 1
        for e in range(row_ptr[v], row_ptr[v + 1]):
            counters[1] += 1
            if level[col_idx[e]] < 0:
                nxt[col_idx[e]] = 1
                counters[2] += 1
    ref = bfs.reference(spec)
    assert ref["next_frontier"].tolist() == nxt.tolist() and ref["counters"].tolist() == counters
    assert 0 < counters[0] < len(level)  # a representative level: frontier and non-frontier threads


# --- nn ------------------------------------------------------------------------------------------

def test_nn_connection_table_in_source_and_one_neuron_by_loops():
    wl = workloads.get("nn")
    table = nn.connection_table()
    assert (nn.table_in_source(wl.source.read_text()) == table).all()
    assert sorted(table.sum(axis=1).tolist()) == [3] * 6 + [4] * 9 + [6]
    spec = tiny("nn")
    x, w, b = spec.arg("input"), spec.arg("weights"), spec.arg("bias")
    out = wl.reference(spec)["output"]
    for o, oy, ox in [(0, 0, 0), (7, 4, 1), (15, 2, 3)]:
        acc = float(b[o]) + sum(float(w[o, m, ky, kx]) * float(x[0, m, 2 * oy + ky, 2 * ox + kx])
                                for m in range(6) if table[o, m] for ky in range(5) for kx in range(5))
        assert out[0, o, oy, ox] == pytest.approx(1.7159 * math.tanh(0.66666667 * acc), abs=1e-6)


# --- mummer --------------------------------------------------------------------------------------

def _mummer_spec(ref_text: str, queries: list, depth: int):
    code = {"A": 0, "C": 1, "G": 2, "T": 3, "N": 4}
    reference = np.array([code[c] for c in ref_text], np.uint8)
    q = np.array([[code[c] for c in s] for s in queries], np.uint8)
    n, qlen = q.shape
    args = [mummer.build_trie(reference, depth).ravel(), q.ravel(), np.int32(n), np.int32(qlen), None, None]
    return workloads.LaunchSpec(1, 32, args, arg_names=("trie", "queries", "n_queries", "query_len", "match_len", "best"),
                                meta={"reference": reference, "depth": depth})


def test_mummer_hand_worked_matches():
    spec = _mummer_spec("ACGTACGG", ["ACGTT", "GGNAC", "TTTTT"], depth=8)
    ref = mummer.reference(spec)
    assert ref["match_len"].reshape(3, 5).tolist() == [[4, 3, 2, 1, 1], [2, 1, 0, 2, 1], [1, 1, 1, 1, 1]]
    assert ref["best"].reshape(3, 2).tolist() == [[4, 0], [2, 0], [1, 0]]
    capped = mummer.reference(_mummer_spec("ACGTACGG", ["ACGTT"], depth=2))
    assert capped["match_len"].tolist() == [2, 2, 2, 1, 1]


def test_mummer_trie_walk_model_matches_substring_reference():
    spec = tiny("mummer", seed=4)
    trie = spec.arg("trie").reshape(-1, 4)
    n, qlen = int(spec.arg("n_queries")), int(spec.arg("query_len"))
    queries = spec.arg("queries").reshape(n, qlen)
    ref = mummer.reference(spec)["match_len"].reshape(n, qlen)
    for q in range(0, n, 7):  # the kernel's walk, one thread at a time
        for s in range(qlen):
            node, k = 0, 0
            while s + k < qlen and queries[q, s + k] <= 3 and trie[node, queries[q, s + k]] >= 0:
                node, k = trie[node, queries[q, s + k]], k + 1
            assert ref[q, s] == k


# --- raytrace ------------------------------------------------------------------------------------

@pytest.mark.parametrize("reflectivity, color", [(0.0, 0.55), (0.5, 0.5 * 0.5 * 1.1 + 0.5 * 0.3)])
def test_raytrace_one_sphere_in_front_of_the_camera(reflectivity, color):
    # One pixel looks straight down +z at a sphere of radius 1 centred at eye height: hit at
    # (0, 1.5, -1), normal and light direction both -z (lambert 1, not shadowed) -> lit 1.1.
    # A mirror half reflects back along -z into the sky (0.3 at the horizon).
    sphere = np.array([[0, 1.5, 0, 1, 0.5, reflectivity, 0, 0]], np.float32)
    image, bounces = raytrace.render(sphere, (0.0, 1.5, -10.0), 1, 1)
    assert bounces.tolist() == [1]
    assert image[0] == pytest.approx(color, abs=1e-6)


def test_raytrace_shadow_and_floor():
    # A big sphere between the light and the floor point under it shadows that point.
    sphere = np.array([[0, 2, 4, 1, 0.5, 0, 0, 0]], np.float32)
    lit, _ = raytrace.render(np.zeros((0, 8), np.float32), (0.0, 8.0, 4.0), 16, 16)
    shaded, _ = raytrace.render(sphere, (0.0, 8.0, 4.0), 16, 16)
    assert (shaded <= lit + 1e-6).sum() > 200 and (shaded < lit - 0.1).any()


# --- storegpu ------------------------------------------------------------------------------------

def _md5_rounds(message: bytes) -> bytes:
    """MD5 written from RFC 1321's round structure (as the kernel does it), for one padded block or more."""
    k = [int(abs(math.sin(i + 1)) * 2 ** 32) & 0xFFFFFFFF for i in range(64)]
    r = [7, 12, 17, 22] * 4 + [5, 9, 14, 20] * 4 + [4, 11, 16, 23] * 4 + [6, 10, 15, 21] * 4
    m32 = 0xFFFFFFFF
    padded = message + b"\x80" + b"\0" * ((55 - len(message)) % 64) + (8 * len(message)).to_bytes(8, "little")
    h = [0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476]
    for off in range(0, len(padded), 64):
        m = [int.from_bytes(padded[off + 4 * i: off + 4 * i + 4], "little") for i in range(16)]
        a, b, c, d = h
        for i in range(64):
            if i < 16:
                f, g = (b & c) | (~b & d), i
            elif i < 32:
                f, g = (d & b) | (~d & c), (5 * i + 1) % 16
            elif i < 48:
                f, g = b ^ c ^ d, (3 * i + 5) % 16
            else:
                f, g = c ^ (b | (~d & m32)), (7 * i) % 16
            f = (f + a + k[i] + m[g]) & m32
            a, d, c = d, c, b
            b = (b + (((f << r[i]) | (f >> (32 - r[i]))) & m32)) & m32
        h = [(x + y) & m32 for x, y in zip(h, (a, b, c, d))]
    return b"".join(x.to_bytes(4, "little") for x in h)


def test_storegpu_md5_matches_rfc_vectors_table_and_reference_windows():
    # RFC 1321 test suite answers for the round structure the kernel unrolls
    assert _md5_rounds(b"").hex() == "d41d8cd98f00b204e9800998ecf8427e"
    assert _md5_rounds(b"abc").hex() == "900150983cd24fb0d6963f7d28e17f72"
    assert _md5_rounds(b"message digest").hex() == "f96b697d7cb7938d525a2f31aaf161d0"
    wl = workloads.get("storegpu")
    assert (storegpu.table_in_source(wl.source.read_text()) == storegpu.md5_constants()).all()
    spec = tiny("storegpu", seed=5)
    ref = wl.reference(spec)["digest"].reshape(-1, 4)
    data = spec.arg("words").view(np.uint8).tobytes()
    step = spec.meta["step"]
    n = int(spec.arg("n_windows"))
    assert n == (len(data) - storegpu.WINDOW) // step + 1 and len(ref) == n
    for w in (0, 1, 17, n - 1):  # window w covers bytes [w*step, w*step + WINDOW)
        expected = np.frombuffer(_md5_rounds(data[w * step: w * step + storegpu.WINDOW]), "<u4")
        assert (ref[w] == expected).all(), w
    # every thread but the last digests PER_THREAD windows: the tail is the only divergence
    assert int(spec.arg("per_thread")) * spec.grid[0] * spec.block[0] >= n


# --- laplace3d -----------------------------------------------------------------------------------

def test_laplace3d_reference_matches_point_loop():
    spec = tiny("laplace3d")
    nx, ny, nz = (int(spec.arg(k)) for k in ("nx", "ny", "nz"))
    u = spec.arg("u").reshape(nz, ny, nx)
    out = workloads.get("laplace3d").reference(spec)["u_new"].reshape(nz, ny, nx)
    f = np.float32
    for k, j, i in [(0, 3, 3), (2, 0, 5), (3, 4, nx - 1), (1, 1, 1), (4, ny - 2, nx - 2), (3, 5, 31), (2, 3, 32)]:
        if min(i, j, k) == 0 or i == nx - 1 or j == ny - 1 or k == nz - 1:
            assert out[k, j, i] == u[k, j, i]
        else:
            s = f(f(f(f(f(u[k, j, i - 1] + u[k, j, i + 1]) + u[k, j - 1, i]) + u[k, j + 1, i]) + u[k - 1, j, i]) + u[k + 1, j, i])
            assert out[k, j, i] == f(s * f(1.0 / 6.0))


# --- libor ---------------------------------------------------------------------------------------

def test_libor_reference_matches_scalar_path_model():
    spec = tiny("libor")
    n_paths, n_rates, n_steps = (int(spec.arg(k)) for k in ("n_paths", "n_rates", "n_steps"))
    delta, lam = float(spec.arg("delta")), spec.arg("lambda").tolist()
    z = spec.arg("normals").reshape(n_steps, n_paths)
    ref = workloads.get("libor").reference(spec)["value"]
    for p in (0, 5, n_paths - 1):
        L = spec.arg("l0").tolist()
        for n in range(n_steps):
            sqez, v = math.sqrt(delta) * z[n, p], 0.0
            for i in range(n + 1, n_rates):
                con1 = delta * lam[i - n - 1]
                v += con1 * L[i] / (1 + delta * L[i])
                L[i] *= math.exp(con1 * v + lam[i - n - 1] * (sqez - 0.5 * con1))
        b, s, B, S = 1.0, 0.0, [], []
        for n in range(n_steps, n_rates):
            b /= 1 + delta * L[n]
            s += delta * b
            B.append(b)
            S.append(s)
        payoff = 0.0
        for mat, rate in zip(spec.arg("maturities"), spec.arg("swaprates")):
            swap = B[mat - 1] + rate * S[mat - 1] - 1
            payoff += -100 * swap if swap < 0 else 0.0
        for n in range(n_steps):
            payoff /= 1 + delta * L[n]
        assert ref[p] == pytest.approx(payoff, rel=1e-12, abs=1e-14)


# --- ElTantawy et al. 2014 / Wu et al. 2012 control-flow kernels -----------------------------------------------------------

def test_earlyexit_reference_matches_per_thread_do_while():
    spec = tiny("earlyexit", seed=1)
    ref = workloads.get("earlyexit").reference(spec)
    mask = int(spec.arg("target_mask"))
    for t in range(0, 1024, 97):
        x, target, limit = int(spec.arg("seeds")[t]), int(spec.arg("targets")[t]), int(spec.arg("budget")[t])
        acc, it, found = 0, 0, -1
        while True:
            x ^= (x << 13) & 0xFFFFFFFF
            x ^= x >> 17
            x ^= (x << 5) & 0xFFFFFFFF
            it += 1
            if x & mask == target:
                h = x
                for _ in range(6):
                    h ^= h >> 15
                    h = (h * 0x2C1B3C6D) & 0xFFFFFFFF
                    h ^= h >> 12
                    h = (h * 0x297A2D39) & 0xFFFFFFFF
                found, acc = it, (acc + h) & 0xFFFFFFFF
                break
            acc = (acc * 33 + (x & 0xFF)) & 0xFFFFFFFF
            if not it < limit:
                break
        assert (int(ref["found_at"][t]), int(ref["checksum"][t])) == (found, acc ^ x)
    assert 0 < (ref["found_at"] > 0).mean() < 1  # both loop exits are taken


def test_shortcircuit_reference_matches_scalar_short_circuit():
    spec = tiny("shortcircuit")
    a, c, table = (spec.arg(k).tolist() for k in ("a", "c", "table"))
    m = int(spec.arg("table_mask"))
    out = workloads.get("shortcircuit").reference(spec)["out"]
    paths = set()
    for i in range(0, len(a), 5):
        x = a[i]
        first = x > 0 and table[x & m] > 0
        second = not first and c[i] > 0 and table[c[i] & m] < 0
        paths.add((x > 0, first, c[i] > 0 if not first else None, second))
        want = ((x * 31 + c[i]) ^ (x >> 3)) if first or second else x - 2 * c[i]
        assert out[i] == np.int32(want)
    assert len(paths) >= 5  # every edge of the short-circuit CFG is exercised


def test_inlinedreturn_hand_worked_row():
    args = [np.array([5, 7, 5, 9, 1, 1], np.int32), np.array([4], np.int32), np.array([5, 9, 1, 8], np.int32),
            np.int32(1), np.int32(6), np.int32(4), None, None]
    spec = workloads.LaunchSpec(1, 32, args, arg_names=("rows", "row_len", "keys", "n", "width", "n_keys",
                                                        "position", "score"))
    ref = inlinedreturn.reference(spec)
    assert ref["position"].tolist() == [0, 3, -1, -1]  # 1 lies beyond row_len: not found
    assert ref["score"].tolist() == [1 + 4 - 3 - 3]


@pytest.mark.parametrize("line, counts", [
    (b'x = 3.14 + "a\\"b" # c', [1, 0, 1, 1, 2, 1, 0]),
    (b'if (n1<10) go_to;', [3, 1, 0, 0, 4, 0, 0]),
    (b'12. a.b "open \\', [2, 0, 1, 0, 1, 0, 1]),
    (b'"abc', [0, 0, 0, 0, 0, 0, 1]),
    (b"7if\t_x9 \x00 zz", [2, 1, 0, 0, 0, 0, 0]),
    (b'"a\\\x00b" q', [1, 0, 0, 1, 0, 0, 0]),
])
def test_statemachine_hand_worked_lines(line, counts):
    assert statemachine.tokenize_counts(line) == counts


@pytest.mark.parametrize("line, counts", [
    (b"ab12cd 7seas 2024", [2, 1, 3, 3]),
    (b"x9y9z9, 0.5-q_", [2, 2, 4, 5]),
    (b"abc\x00 123", [1, 0, 1, 0]),
    (b"", [0, 0, 0, 0]),
])
def test_multientry_hand_worked_lines(line, counts):
    from simt_fast.workloads import multientry

    assert multientry.scan_counts(line) == counts


# --- the multi-path study's workloads (bvh, hashprobe, spmv, sssp, mcreject) ----------------------

def test_bvh_hand_worked_sphere_hits():
    from simt_fast.workloads import bvh

    spheres = np.array([[0, 0, 10, 1], [0, 0, 10, 1], [0, 0, 5, 1]], np.float32)
    rays = np.array([[0, 0, 0, 0, 0, 1],     # along +z: sphere 2 at t = 5 - 1
                     [0, 0, 10, 1, 0, 0],    # from the centre of spheres 0/1: far root, t = 1 (tie -> id 0)
                     [0, 0, 0, 1, 0, 0]], np.float32)  # misses everything
    t, p = bvh.nearest_hits(spheres, rays)
    assert t.tolist() == [4.0, 1.0, float(bvh.FAR)] and p.tolist() == [2, 0, -1]
    t, p = bvh.nearest_hits(spheres[:2], rays[:1])
    assert (t.tolist(), p.tolist()) == ([9.0], [0])  # b = -10, c = 99, disc = 1: t = 10 - 1


def test_bvh_tree_holds_every_sphere_once_inside_nested_boxes():
    from simt_fast.workloads import bvh

    spec = tiny("bvh", seed=1)
    spheres = spec.arg("spheres").reshape(-1, 4)
    box, info, prims = spec.arg("node_box").reshape(-1, 6), spec.arg("node_info").reshape(-1, 2), spec.arg("prim_idx")
    assert sorted(prims.tolist()) == list(range(len(spheres)))
    seen = []
    for k, (first, count) in enumerate(info.tolist()):
        if count == 0:
            for c in (first, first + 1):
                assert (box[c, :3] >= box[k, :3]).all() and (box[c, 3:] <= box[k, 3:]).all()
        else:
            assert 1 <= count <= bvh.LEAF_SIZE
            s = spheres[prims[first:first + count]]
            assert (s[:, :3] - s[:, 3:] > box[k, :3]).all() and (s[:, :3] + s[:, 3:] < box[k, 3:]).all()
            seen.append(count)
    assert sum(seen) == len(spheres) and len(info) == 2 * len(seen) - 1


def test_bvh_stack_traversal_model_finds_the_brute_force_hit():
    # The kernel's traversal in Python (float64 slab tests), against the brute-force reference.
    spec = tiny("bvh", seed=2)
    box, info, prims = spec.arg("node_box").reshape(-1, 6), spec.arg("node_info").reshape(-1, 2), spec.arg("prim_idx")
    spheres, rays = spec.arg("spheres").reshape(-1, 4), spec.arg("rays").reshape(-1, 6)
    from simt_fast.workloads import bvh

    want_t, want_p = bvh.nearest_hits(spheres, rays)
    visited = []
    for i in range(0, len(rays), 3):
        o, d = rays[i, :3].astype(np.float64), rays[i, 3:].astype(np.float64)

        def entry(k, best):
            t0, t1 = (box[k, :3] - o) / d, (box[k, 3:] - o) / d
            lo, hi = max(np.minimum(t0, t1).max(), 0.0), np.maximum(t0, t1).min()
            return lo if lo <= hi and lo <= best else None

        best, best_p, stack, steps = float(bvh.FAR), -1, [0], 0
        while stack:
            k = stack.pop()
            steps += 1
            if entry(k, best) is None:
                continue
            first, count = info[k]
            if count:
                t = bvh.hit_spheres(spheres[prims[first:first + count]], rays[i:i + 1, :3], rays[i:i + 1, 3:])[0]
                j = int(np.argmin(t))
                if t[j] < best or (t[j] == best and prims[first + j] < best_p):
                    best, best_p = float(t[j]), int(prims[first + j])
            else:
                stack += [first, first + 1]
        assert (np.float32(best), best_p) == (want_t[i], want_p[i])
        visited.append(steps)
    assert np.mean(visited) < 0.5 * len(info)  # the tree prunes: rays visit a minority of the nodes
    assert 0.2 < (want_p >= 0).mean() < 1.0  # hits and misses


def _hash_collisions(mask, n):
    from simt_fast.workloads import hashprobe

    keys = np.arange(1, 5000, dtype=np.uint32)
    home = hashprobe.mix32(keys) & np.uint32(mask)
    h = int(np.bincount(home).argmax())
    return keys[home == h][:n], h


def test_hashprobe_hand_worked_probe_and_join():
    from simt_fast.workloads import hashprobe

    (a, b, c, absent), h = _hash_collisions(7, 4)  # four keys with the same home slot h
    table, slots = hashprobe.build_table(np.array([a, b, c], np.uint32), 3)
    assert slots.tolist() == [h, (h + 1) & 7, (h + 2) & 7]
    # build rows: key a twice (5, 7), b once (-3), c once (10); probe c, a, absent, b
    row_key = np.array([0, 1, 0, 2])
    args = [table, None, None, np.array([5, -3, 7, 10], np.int32), np.array([c, a, absent, b], np.uint32),
            np.array([0, 1, 2, 3], np.int32), np.array([100, 200, 300, 400], np.int32), np.int32(4), np.uint32(7),
            None, None, None]
    names = ("table_keys", "table_head", "build_next", "build_val", "probe_keys", "probe_group", "group_default",
             "n_probe", "slot_mask", "out_sum", "out_count", "out_probes")
    spec = workloads.LaunchSpec(1, 32, args, arg_names=names,
                                meta={"build_keys": np.array([a, b, c], np.uint32), "row_key": row_key})
    ref = hashprobe.reference(spec)
    assert ref["out_sum"].tolist() == [10, 12, 300, -3]
    assert ref["out_count"].tolist() == [1, 2, 0, 1]
    assert ref["out_probes"].tolist() == [3, 1, 4, 2]


def test_hashprobe_table_walk_model_matches_reference():
    from simt_fast.workloads import hashprobe

    spec = tiny("hashprobe", seed=2)
    tk, head, nxt, val = (spec.arg(k).tolist() for k in ("table_keys", "table_head", "build_next", "build_val"))
    keys, group, default = (spec.arg(k).tolist() for k in ("probe_keys", "probe_group", "group_default"))
    mask = int(spec.arg("slot_mask"))
    ref = hashprobe.reference(spec)
    for i in range(0, len(keys), 3):  # the kernel's loop, one probe at a time
        slot, probes = int(hashprobe.mix32(np.array([keys[i]]))[0]) & mask, 1
        while tk[slot] not in (keys[i], 0xFFFFFFFF):
            slot, probes = (slot + 1) & mask, probes + 1
        if tk[slot] == keys[i]:
            rows = []
            r = head[slot]
            while r >= 0:
                rows.append(val[r])
                r = nxt[r]
            want = (sum(rows), len(rows), probes)
        else:
            want = (default[group[i]], 0, probes)
        assert (ref["out_sum"][i], ref["out_count"][i], ref["out_probes"][i]) == want
    assert 0.69 < np.mean(np.array(tk) != 0xFFFFFFFF) < 0.71  # ~70% load
    assert 0.5 < np.mean(ref["out_count"] > 0) < 0.7 and ref["out_probes"].max() > 4 and ref["out_count"].max() > 2


def test_spmv_hand_worked_and_dense_product():
    from simt_fast.workloads import spmv

    # row 0: halo column 2 (2.0) then local column 0 (3.0); row 1: local column 1 (4.0)
    args = [np.array([0, 2, 3], np.int32), np.array([2, 0, 1], np.int32), np.array([2, 3, 4], np.float32),
            np.array([1, 5], np.float32), np.array([0], np.int32), np.array([7], np.float32), np.int32(2), np.int32(2), None]
    names = ("row_ptr", "col", "val", "x", "halo_slot", "x_halo", "n_rows", "n_local", "y")
    assert spmv.reference(workloads.LaunchSpec(1, 32, args, arg_names=names))["y"].tolist() == [3 + 2 * 7, 4 * 5]

    spec = tiny("spmv", seed=1)
    row_ptr, col, val = spec.arg("row_ptr"), spec.arg("col"), spec.arg("val")
    n, n_halo = int(spec.arg("n_local")), len(spec.arg("x_halo"))
    dense = np.zeros((n, n + n_halo))
    np.add.at(dense, (np.repeat(np.arange(n), np.diff(row_ptr)), col), val)
    x = np.concatenate([spec.arg("x"), spec.arg("x_halo")[spec.arg("halo_slot")]]).astype(np.float64)
    np.testing.assert_allclose(spmv.reference(spec)["y"], dense @ x, rtol=1e-4, atol=1e-4)
    lengths = np.diff(row_ptr)
    assert lengths.max() <= spmv.MAX_ROW and lengths.max() > 6 * np.median(lengths)  # skewed rows
    halo = col >= n
    interleaved = sum(halo[s:e].any() and not halo[s:e].all() and (np.diff(halo[s:e].astype(int)) < 0).any()
                      for s, e in zip(row_ptr[:-1], row_ptr[1:]))
    assert 0.15 < halo.mean() < 0.35 and interleaved > 50  # halo entries before local ones in many rows


def test_sssp_hand_worked_rounds_and_profile_interpolation():
    from simt_fast.workloads import sssp

    inf = sssp.INF
    profile = np.full(sssp.TD_SLOTS, 30, np.int32)
    profile[1], profile[2] = 40, 60
    # departure 96 = slot 1 + 32/64: halfway between 40 and 60
    assert sssp.travel_times(np.array([0]), np.array([0]), np.array([0]), np.array([10]), profile, np.array([96])) == [50]
    # in-edges: 1 <- 0 (free flow, 100 m at 10 m/unit); 2 <- 0 (profile 0); 2 <- 1 (free flow, 25 m: 3 units)
    graph = (np.array([0, 0, 1, 3], np.int32), np.array([0, 0, 1], np.int32), np.array([-1, 0, -1], np.int32),
             np.array([100, 0, 25], np.int32), np.array([0, 0, 0], np.int32), np.array([10], np.int32), profile)
    dist, pred = np.array([0, inf, inf], np.int32), np.full(3, -1, np.int32)
    dist, pred = sssp.relax_round(*graph, dist, pred)
    assert dist.tolist() == [0, 10, 30] and pred.tolist() == [-1, 0, 0]
    dist, pred = sssp.relax_round(*graph, dist, pred)
    assert dist.tolist() == [0, 10, 13] and pred.tolist() == [-1, 0, 1]


def test_sssp_rounds_reach_dijkstra_on_free_flow_edges():
    import heapq

    from simt_fast.workloads import sssp

    spec = tiny("sssp", seed=1)
    row_ptr, src = spec.arg("row_ptr"), spec.arg("src")
    length, road_class, speed = spec.arg("length"), spec.arg("road_class"), spec.arg("class_speed")
    n = len(row_ptr) - 1
    free = np.full(len(src), -1, np.int32)
    dist, pred = np.where(np.arange(n) == 0, 0, sssp.INF).astype(np.int32), np.full(n, -1, np.int32)
    for _ in range(n):
        nxt = sssp.relax_round(row_ptr, src, free, length, road_class, speed, spec.arg("profile"), dist, pred)
        if np.array_equal(nxt[0], dist) and np.array_equal(nxt[1], pred):
            break
        dist, pred = nxt
    out = [[] for _ in range(n)]
    for v in range(n):
        for e in range(row_ptr[v], row_ptr[v + 1]):
            s = int(speed[road_class[e]])
            out[src[e]].append((v, (int(length[e]) + s - 1) // s))
    best, heap = {0: 0}, [(0, 0)]
    while heap:
        d, u = heapq.heappop(heap)
        if d > best[u]:
            continue
        for v, w in out[u]:
            if d + w < best.get(v, sssp.INF):
                best[v] = d + w
                heapq.heappush(heap, (d + w, v))
    assert dist.tolist() == [best.get(v, sssp.INF) for v in range(n)]
    spec_ref = workloads.get("sssp").reference(spec)
    assert 0.05 < np.mean(spec_ref["new_dist"] != spec.arg("dist")) and 0.4 < np.mean(spec.arg("profile_of") >= 0) < 0.6


def test_mcreject_delayed_rejection_kernel_satisfies_detailed_balance():
    # The exact transition matrix of one step (both stages, every proposal) on an 8 x 8 torus:
    # pi_x P[x, y] == pi_y P[y, x], so the target is the chain's stationary distribution.
    from simt_fast.workloads import mcreject

    log2_side, side = 3, 8
    r1, r2 = mcreject.R1, mcreject.R2
    w = np.random.default_rng(5).integers(1, 1 << 20, side * side).astype(np.float64)

    def offsets(r):
        axis = [d for d in range(-r, r + 1) if d]
        return [(dx, dy) for dx in axis for dy in axis]

    def moved(s, dx, dy):
        return ((s // side + dy) % side) * side + (s % side + dx) % side

    P = np.zeros((side * side, side * side))
    for x in range(side * side):
        for d1 in offsets(r1):
            y1 = moved(x, *d1)
            q1 = 1 / len(offsets(r1))
            a1 = min(1.0, w[y1] / w[x])
            P[x, y1] += q1 * a1
            for d2 in offsets(r2):
                y2 = moved(x, *d2)
                q2 = q1 * (1 - a1) / len(offsets(r2))
                ok = w[y2] > w[y1] and mcreject.reachable(np.array([y2]), np.array([y1]), r1, log2_side)[0]
                a2 = min(1.0, (w[y2] - w[y1]) / (w[x] - w[y1])) if ok and a1 < 1 else 0.0
                P[x, y2] += q2 * a2
                P[x, x] += q2 * (1 - a2)
    np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=1e-12)
    flow = w[:, None] * P
    np.testing.assert_allclose(flow, flow.T, rtol=1e-9, atol=1e-9 * w.max())


def test_mcreject_scalar_chain_model_matches_reference():
    spec = tiny("mcreject", seed=3)
    weight, obs = spec.arg("weight").tolist(), spec.arg("observable").tolist()
    n, steps, log2_side = int(spec.arg("n_chains")), int(spec.arg("n_steps")), int(spec.arg("log2_side"))
    r1, r2 = int(spec.arg("r1")), int(spec.arg("r2"))
    side = 1 << log2_side
    words = spec.arg("random").reshape(steps, n, 4)
    ref = workloads.get("mcreject").reference(spec)

    def offset(bits, r):
        b = bits & (2 * r - 1)
        return b - r if b < r else b - r + 1

    def move(s, word, r):
        return ((s // side + offset(word >> 16, r)) % side) * side + (s % side + offset(word, r)) % side

    def torus(a, b):
        d = abs(a - b)
        return min(d, side - d)

    moves = np.zeros_like(ref["moves_into"])
    for c in range(n):
        x, total, first, second = int(spec.arg("start")[c]), 0, 0, 0
        for t in range(steps):
            u0, u1, u2, u3 = (int(v) for v in words[t, c])
            y1 = move(x, u0, r1)
            if u1 * weight[x] < weight[y1] << 32:
                x, first = y1, first + 1
                moves[obs[x]] += 1
            else:
                y2 = move(x, u2, r2)
                dx, dy = torus(y1 % side, y2 % side), torus(y1 // side, y2 // side)
                if (weight[y2] > weight[y1] and 1 <= dx <= r1 and 1 <= dy <= r1
                        and u3 * (weight[x] - weight[y1]) < (weight[y2] - weight[y1]) << 32):
                    x, second = y2, second + 1
                    moves[obs[x]] += 1
            total += obs[x]
        assert (ref["final_state"][c], ref["obs_sum"][c]) == (x, total)
        assert ref["accepted"][2 * c:2 * c + 2].tolist() == [first, second]
    assert ref["moves_into"].tolist() == moves.tolist()
    acc = ref["accepted"].reshape(n, 2).sum(axis=0)
    assert 0 < acc[1] < acc[0] < n * steps  # both stages accept, and both reject
