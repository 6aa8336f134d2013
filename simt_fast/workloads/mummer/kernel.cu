// MUMmer-like exact matching of short DNA queries against a suffix trie of a reference
// (Jin 2012 §5.3, MUM: "a large number of comparisons", high divergence).
//
// The trie holds every suffix of the reference truncated to a maximum depth; node 0 is the
// root and trie[4 * node + base] is the child reached by base (A,C,G,T = 0..3) or -1.  For each
// start position of its query a thread walks the trie from the root as long as the query keeps
// matching: pointer chasing whose loop exit (mismatch, unknown base 'N', end of query, depth cap)
// is data-dependent and different for every lane.
extern "C" __global__ void mummer_match(const int* __restrict__ trie,
                                        const unsigned char* __restrict__ queries,  // [n_queries][query_len]
                                        int n_queries, int query_len,
                                        int* __restrict__ match_len,                // [n_queries][query_len]
                                        int* __restrict__ best)                     // [n_queries][2]
{
    int q = blockIdx.x * blockDim.x + threadIdx.x;
    if (q >= n_queries)
        return;
    const unsigned char* s = queries + (size_t)q * query_len;
    int best_len = 0, best_start = -1;
    for (int start = 0; start < query_len; ++start) {
        int node = 0, len = 0;
        while (start + len < query_len) {
            int base = s[start + len];
            if (base > 3)  // 'N': an unknown base matches nothing
                break;
            int child = trie[4 * node + base];
            if (child < 0)  // the reference has no such substring (or the depth cap is reached)
                break;
            node = child;
            ++len;
        }
        match_len[(size_t)q * query_len + start] = len;
        if (len > best_len) {
            best_len = len;
            best_start = start;
        }
    }
    best[2 * q] = best_len;
    best[2 * q + 1] = best_start;
}
