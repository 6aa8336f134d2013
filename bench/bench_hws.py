"""Throughput of the HWS squeeze and the DWF / en-DWF merge: numba kernels vs the plain-Python references.

    /work/venv/bin/python bench/bench_hws.py [--warps N] [--warp-size 32] [--simd-width 8] [--density 0.5]

Random warps: each slot holds a thread with probability ``density``; threads sit in their own
lane but in a random quarter (as after earlier squeezes/merges). Both implementations process
the same warps and their outputs are compared before any number is printed. The reference
runs on a slice of the warps (it is ~100x slower) and its rate is extrapolated per warp.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from simt_fast.sim import hws
from simt_fast.sim import warp_merge
from simt_fast.sim.reference import dwf as ref_dwf
from simt_fast.sim.reference import hws as ref_hws


def random_warps(rng, n_warps, warp_size, simd_width, density, warp_id_base):
    n_quarters = warp_size // simd_width
    # per warp and lane, a random permutation of which home quarter sits in which quarter
    home_quarter = np.argsort(rng.random((n_warps, simd_width, n_quarters)), axis=2)
    lanes = np.arange(simd_width)[None, :, None]
    warp_ids = (warp_id_base + np.arange(n_warps))[:, None, None]
    tid = warp_ids * warp_size + home_quarter * simd_width + lanes  # [warp, lane, quarter]
    slots = tid.transpose(0, 2, 1).reshape(n_warps, warp_size)
    slots[rng.random(slots.shape) >= density] = -1
    return np.ascontiguousarray(slots, dtype=np.int64)


def rate(fn, n_items, repeat=3):
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return n_items / best


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--warps", type=int, default=200_000)
    ap.add_argument("--ref-warps", type=int, default=2_000)
    ap.add_argument("--warp-size", type=int, default=32)
    ap.add_argument("--simd-width", type=int, default=8)
    ap.add_argument("--density", type=float, default=0.5)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    ws, sw = args.warp_size, args.simd_width
    males = random_warps(rng, args.warps, ws, sw, args.density, warp_id_base=args.warps)
    females = random_warps(rng, args.warps, ws, sw, args.density, warp_id_base=0)
    n_ref = min(args.ref_warps, args.warps)
    male_rows, female_rows = males[:n_ref].tolist(), females[:n_ref].tolist()

    # warm up (compile or load from the numba cache) and check agreement before timing
    squeezed, moves = hws.squeeze_batch(males, sw)
    for w in range(n_ref):
        assert squeezed[w].tolist() == ref_hws.squeeze(male_rows[w], sw), f"squeeze differs on warp {w}"
    print(f"{args.warps} random warps, warp_size {ws}, simd_width {sw}, density {args.density}")
    print(f"  squeeze moved {moves.mean():.2f} threads/warp; active quarters "
          f"{hws.active_quarters_batch(males, sw).mean():.2f} -> {hws.active_quarters_batch(squeezed, sw).mean():.2f}")

    out = np.empty_like(males)
    mv = np.empty(args.warps, np.int64)
    r_nb = rate(lambda: hws._squeeze_batch(males, out, sw, mv), args.warps)
    r_py = rate(lambda: [ref_hws.squeeze_with_moves(r, sw) for r in male_rows], n_ref, repeat=1)
    print(f"  squeeze        numba {r_nb:12,.0f} warps/s   reference {r_py:10,.0f} warps/s   x{r_nb / r_py:,.0f}")

    def to_masks(slots):
        return np.bitwise_or.reduce((slots >= 0).astype(np.uint64) << np.arange(ws, dtype=np.uint64), axis=1)

    masks = to_masks(males)
    from numba import njit

    @njit
    def squeeze_masks(masks, warp_size, simd_width, out):
        for i in range(masks.shape[0]):
            out[i] = hws.squeeze_mask(masks[i], warp_size, simd_width)

    mask_out = np.empty_like(masks)
    squeeze_masks(masks, ws, sw, mask_out)
    assert (mask_out == to_masks(squeezed)).all(), "squeeze_mask differs from the slot squeeze"
    r_mask = rate(lambda: squeeze_masks(masks, ws, sw, mask_out), args.warps)
    print(f"  squeeze_mask   numba {r_mask:12,.0f} warps/s   (bit-packed form, called from @njit)")

    for enhanced in (False, True):
        name = "en-DWF merge" if enhanced else "DWF merge   "
        merged, ok, conflicts, moved = warp_merge.merge_batch(males, females, sw, enhanced)
        for w in range(n_ref):
            exp = ref_dwf.merge(male_rows[w], female_rows[w], sw, enhanced)
            assert ok[w] == (exp is not None) and (exp is None or merged[w].tolist() == exp), f"merge differs on {w}"
        ok_buf = np.empty(args.warps, np.bool_)
        c_buf = np.empty(args.warps, np.int64)
        m_buf = np.empty(args.warps, np.int64)
        r_nb = rate(lambda: warp_merge._merge_batch(males, females, out, sw, enhanced, ok_buf, c_buf, m_buf),
                    args.warps)
        r_py = rate(lambda: [ref_dwf.merge_count_conflicts(m, f, sw, enhanced)
                             for m, f in zip(male_rows, female_rows)], n_ref, repeat=1)
        print(f"  {name}   numba {r_nb:12,.0f} merges/s  reference {r_py:10,.0f} merges/s  x{r_nb / r_py:,.0f}"
              f"   (success {ok.mean():.1%}, {conflicts.mean():.2f} conflicts/pair)")


if __name__ == "__main__":
    main()
