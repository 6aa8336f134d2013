// Time-dependent single-source shortest paths (earliest arrival on a road-like network), one
// Bellman-Ford round in the pull (gather) form, one thread per vertex over the CSR of incoming
// edges (the topology-driven SSSP of Pannotia and of the LonestarGPU suite, Jacobi style: every
// read is of the previous round, so threads never race).
//
// Per in-edge (u -> v), once u's arrival time is known, the edge's travel time depends on its
// kind:
//   free-flowing edge (profile_of[e] < 0) -> its length over the speed of its road class;
//   time-dependent edge               -> read its travel-time profile at the departure time
//                                        (piecewise linear over TD_SLOTS slots of a day);
// then the edge relaxes v if it arrives earlier (ties to the lower predecessor id).  About half
// the edges are time-dependent, so in most iterations a warp's lanes split between the two
// kinds, and both sides wait on a global load.
#define INF 0x3fffffff
#define TD_SLOTS 16
#define SLOT_BITS 6  // a slot is 64 time units; a day is TD_SLOTS slots

extern "C" __global__ void sssp_round(const int* __restrict__ row_ptr,  // in-edges of each vertex
                                      const int* __restrict__ src,
                                      const int* __restrict__ profile_of,
                                      const int* __restrict__ length,
                                      const int* __restrict__ road_class,
                                      const int* __restrict__ class_speed,
                                      const int* __restrict__ profile,  // [n_profiles][TD_SLOTS]
                                      const int* __restrict__ dist,
                                      const int* __restrict__ pred,
                                      int n_nodes,
                                      int* __restrict__ new_dist,
                                      int* __restrict__ new_pred)
{
    int v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= n_nodes)
        return;
    int best = dist[v], best_pred = pred[v];
    int end = row_ptr[v + 1];
    for (int e = row_ptr[v]; e < end; ++e) {
        int u = src[e];
        int du = dist[u];
        if (du == INF)
            continue;
        int p = profile_of[e];
        int travel;
        if (p < 0) {
            int speed = class_speed[road_class[e]];
            travel = (length[e] + speed - 1) / speed;
        } else {
            // linear interpolation between the profile points around the departure time
            int slot = (du >> SLOT_BITS) & (TD_SLOTS - 1);
            int frac = du & ((1 << SLOT_BITS) - 1);
            const int* f = profile + p * TD_SLOTS;
            int a = f[slot], b = f[(slot + 1) & (TD_SLOTS - 1)];
            travel = a + (((b - a) * frac) >> SLOT_BITS);
        }
        int arrive = du + travel;
        if (arrive < best || (arrive == best && u < best_pred)) {
            best = arrive;
            best_pred = u;
        }
    }
    new_dist[v] = best;
    new_pred[v] = best_pred;
}
