// Compound condition (a && b) || (c && d) with short-circuit evaluation (Wu et al. 2012 Fig. 3).
//
// Each operand after the first is a load whose address depends on the operand before it, so
// the compiler cannot evaluate it speculatively and must emit the short-circuit CFG: the
// subgraphs {a, b} and {c, d} each have two exits (interacting out-edges), i.e. unstructured
// control flow whose IPDOM is the join after the if/else.  Per-element data make the four
// outcomes mix within a warp; each thread handles several elements (loop around the branch).
extern "C" __global__ void shortcircuit(const int* __restrict__ a, const int* __restrict__ c,
                                        const int* __restrict__ table, int table_mask,
                                        int n, int per_thread, int* __restrict__ out)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    int n_threads = blockDim.x * gridDim.x;
    for (int k = 0; k < per_thread; ++k) {
        int i = t + k * n_threads;
        if (i >= n)
            break;
        int x = a[i];
        int result;
        if ((x > 0 && table[x & table_mask] > 0) || (c[i] > 0 && table[c[i] & table_mask] < 0)) {
            // B5: the taken side does a short integer mix of both operands
            result = (x * 31 + c[i]) ^ (x >> 3);
        } else {
            // B6: the fall-through side
            result = x - 2 * c[i];
        }
        out[i] = result;
    }
}
