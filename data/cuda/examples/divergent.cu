// Two small divergent kernels, the walk-through of the README's *Everyday use* and docs/emu.md.
// Built to data/ptx/examples/divergent.ptx by scripts/build_ptx.py (nvcc -ptx -O3).

// Collatz steps of each input (steps to reach 1 by x -> 3x + 1 if x is odd, x / 2 if even: a
// data-dependent while loop whose body is an if/else), and an atomic histogram of the step counts:
// hist[min(steps / 8, bins - 1)]. Inputs must be at least 1.
extern "C" __global__ void collatz(const unsigned *in, unsigned *steps, unsigned *hist, int n, int bins)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    unsigned x = in[i];
    unsigned s = 0;
    while (x > 1) {
        if (x & 1) {  // 3x + 1, then every halving of the even result at once
            x = 3 * x + 1;
            unsigned t = __ffs(x) - 1;
            x >>= t;
            s += 1 + t;
        } else {
            x >>= 1;
            ++s;
        }
    }
    steps[i] = s;
    atomicAdd(&hist[min(s / 8, (unsigned)bins - 1)], 1u);
}

// Binary search of each query in a sorted table: pos[i] is an index holding the query, or where it
// would be inserted (the first element not less than it). Threads leave the loop when they find
// their query, so a warp's threads run different numbers of iterations.
extern "C" __global__ void binsearch(const int *table, int m, const int *queries, int *pos, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    int q = queries[i];
    int lo = 0, hi = m;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        int v = table[mid];
        if (v == q) {
            lo = mid;
            break;
        }
        if (v < q)
            lo = mid + 1;
        else
            hi = mid;
    }
    pos[i] = lo;
}
