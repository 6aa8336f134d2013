// N-Queens by backtracking (Jin 2012 §5.3, NQU: "the CPU generates configurations for the upper
// rows and the GPU is responsible for the remaining rows").
//
// Each thread receives a legal placement of the first rows as three bitmasks (occupied columns,
// and the two diagonal attack sets already shifted to the next row) and counts its completions
// with an explicit stack in a local array: how deep and how long each thread searches depends on
// its prefix, so lanes drop out one by one and "most of the time only a single thread is active".
// The per-thread counts are summed with a warp shuffle reduction and one 64-bit atomic per warp.
#define MAX_N 16

extern "C" __global__ void nqueens(const unsigned* __restrict__ prefixes,  // [n_prefixes][3]: cols, left diag, right diag
                                   int n_prefixes, int n, int prefix_rows,
                                   int* __restrict__ solutions,              // [n_prefixes]
                                   unsigned long long* __restrict__ total)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned count = 0;
    if (t < n_prefixes) {
        const unsigned full = (1u << n) - 1u;
        const int remaining = n - prefix_rows;  // rows this thread still has to fill (>= 1)
        unsigned cols[MAX_N], left[MAX_N], right[MAX_N], avail[MAX_N];
        cols[0] = prefixes[3 * t];
        left[0] = prefixes[3 * t + 1];
        right[0] = prefixes[3 * t + 2];
        avail[0] = full & ~(cols[0] | left[0] | right[0]);
        int depth = 0;
        while (depth >= 0) {
            unsigned a = avail[depth];
            if (a == 0) {  // no free square left in this row: backtrack
                --depth;
                continue;
            }
            unsigned bit = a & (0u - a);  // lowest free column
            avail[depth] = a ^ bit;
            if (depth + 1 == remaining) {  // the last row is placed: one solution
                ++count;
                continue;
            }
            unsigned c = cols[depth] | bit;
            unsigned l = ((left[depth] | bit) << 1) & full;
            unsigned r = (right[depth] | bit) >> 1;
            ++depth;
            cols[depth] = c;
            left[depth] = l;
            right[depth] = r;
            avail[depth] = full & ~(c | l | r);
        }
        solutions[t] = (int)count;
    }
    // Every lane of the (full) warp takes part, including lanes without a prefix.
    for (int offset = 16; offset > 0; offset >>= 1)
        count += __shfl_down_sync(0xffffffffu, count, offset);
    if ((threadIdx.x & 31) == 0 && count != 0)
        atomicAdd(total, (unsigned long long)count);
}
