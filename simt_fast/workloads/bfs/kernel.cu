// Breadth-first search, one level expansion (Jin 2012 §5.3, BFS on a random 4096-node graph).
//
// One thread per node.  A thread whose node is in the current frontier (level == cur_level)
// walks its variable-length CSR neighbour list and marks every unvisited neighbour in
// next_frontier.  Frontier membership, the neighbour-loop trip count and the visited check are
// the three data-dependent branches that make BFS divergence-heavy.  The kernel never reads what
// it writes, so control flow does not depend on scheduling: concurrent writers of
// next_frontier[u] all store the same value 1.
extern "C" __global__ void bfs_expand(const int* __restrict__ row_ptr,
                                      const int* __restrict__ col_idx,
                                      const int* __restrict__ level,
                                      int n_nodes, int cur_level,
                                      int* __restrict__ next_frontier,
                                      int* __restrict__ counters)
{
    int v = blockIdx.x * blockDim.x + threadIdx.x;
    bool in_frontier = v < n_nodes && level[v] == cur_level;

    // Warp vote: one atomic per warp counts the frontier (every lane reaches this point).
    unsigned vote = __ballot_sync(0xffffffffu, in_frontier);
    if ((threadIdx.x & 31) == 0 && vote != 0)
        atomicAdd(&counters[0], __popc(vote));
    if (!in_frontier)
        return;

    int begin = row_ptr[v];
    int end = row_ptr[v + 1];
    int discovered = 0;
    for (int e = begin; e < end; ++e) {
        int u = col_idx[e];
        if (level[u] < 0) {  // not visited at any earlier level
            next_frontier[u] = 1;
            ++discovered;
        }
    }
    atomicAdd(&counters[1], end - begin);  // edges examined
    atomicAdd(&counters[2], discovered);   // edges that reach an unvisited node
}
