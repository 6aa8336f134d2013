"""Plain-Python reference model of DWF and en-DWF warp merging (seed 003 §3.6, §4.4, Appendix B).

The *male* warp is the incoming warp that tries to join a *female* warp, the forming warp
picked from the warp pool. Both are slot lists (``-1`` = hole, slot ``s`` in lane
``s % simd_width``, quarter ``s // simd_width``). The numba kernel in :mod:`simt_fast.sim.dwf`
must agree with this module on every input.
"""

from __future__ import annotations

HOLE = -1


def merge_count_conflicts(male, female, simd_width, enhanced):
    """Merge ``male`` into ``female``; returns ``(merged or None, n_conflicts, n_moved)``.

    A lane conflict is a slot where both warps hold a thread (both would need the same
    register bank at the same offset). DWF (Fung et al. 2007, lane-aware) keeps every male
    thread at its own slot, so any conflict refuses the merge. en-DWF (Appendix B) walks the
    lanes in order and, within a lane, the quarters in order; a conflicting male thread moves
    to the first other quarter of that lane where neither warp has a thread. The merge fails
    only if some conflict finds no such position. ``n_conflicts`` counts conflicting slots,
    ``n_moved`` the male threads relocated (en-DWF only; counted even when the merge fails).
    """
    n_quarters = len(male) // simd_width
    placed = list(male)
    n_conflicts = n_moved = n_unresolved = 0
    for lane in range(simd_width):
        for quarter in range(n_quarters):
            slot = quarter * simd_width + lane
            if female[slot] == HOLE or placed[slot] == HOLE:
                continue
            n_conflicts += 1
            resolved = False
            if enhanced:
                for other in range(n_quarters):
                    free = other * simd_width + lane
                    if other != quarter and female[free] == HOLE and placed[free] == HOLE:
                        placed[free], placed[slot] = placed[slot], HOLE
                        n_moved += 1
                        resolved = True
                        break
            if not resolved:
                n_unresolved += 1
    if n_unresolved:
        return None, n_conflicts, n_moved
    merged = [f if f != HOLE else m for f, m in zip(female, placed)]
    return merged, n_conflicts, n_moved


def merge(male, female, simd_width, enhanced):
    """The merged slots, or None when a lane conflict refuses the merge."""
    return merge_count_conflicts(male, female, simd_width, enhanced)[0]
