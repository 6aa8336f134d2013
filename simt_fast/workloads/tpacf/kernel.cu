// Two-point angular correlation histograms with the kernel and launch of Parboil tpacf
// (Stratton et al. 2012; Wu et al. 2012 measure it).
//
// Points are unit vectors; set 0 is the observed data, sets 1 .. n_sets random catalogues.  One
// launch of 2 n_sets + 1 CTAs: CTA 0 histograms the data against itself (DD), CTA r against random
// set r (DR), CTA n_sets + r random set r against itself (RR), pairs within one set counted once.
// Each thread holds one point of the first set; the second set streams through shared memory a
// tile at a time.  Per pair, the angle's cosine (the dot product) is binned by a binary search over
// the descending bin edges (a data-dependent branch inside a loop whose trip count varies), and the
// bin is counted in its warp's histogram in shared memory with an atomic add; at the end the
// warps' histograms are summed into the CTA's row of the output.
#define BLOCK 256
#define WARPS (BLOCK / 32)
#define NBINS 20

extern "C" __global__ void tpacf_hist(const float* __restrict__ xs, const float* __restrict__ ys,
                                      const float* __restrict__ zs, const float* __restrict__ edges, int n_sets,
                                      int n, unsigned* __restrict__ hist)
{
    __shared__ float sx[BLOCK], sy[BLOCK], sz[BLOCK];
    __shared__ unsigned s_hist[NBINS][WARPS];
    int tx = threadIdx.x, b = blockIdx.x, warp = tx / 32;
    bool self = b == 0 || b > n_sets;  // DD and RR count each pair once
    int set_a = b <= n_sets ? 0 : b - n_sets;
    int set_b = b <= n_sets ? b : b - n_sets;

    for (int k = tx; k < NBINS * WARPS; k += BLOCK)
        s_hist[k / WARPS][k % WARPS] = 0;

    for (int i0 = 0; i0 < n; i0 += BLOCK) {
        int i = i0 + tx;
        float ax = 0.0f, ay = 0.0f, az = 0.0f;
        if (i < n) {
            ax = xs[set_a * n + i];
            ay = ys[set_a * n + i];
            az = zs[set_a * n + i];
        }
        for (int j0 = self ? i0 : 0; j0 < n; j0 += BLOCK) {
            __syncthreads();  // the previous tile has been used
            if (j0 + tx < n) {
                sx[tx] = xs[set_b * n + j0 + tx];
                sy[tx] = ys[set_b * n + j0 + tx];
                sz[tx] = zs[set_b * n + j0 + tx];
            }
            __syncthreads();
            if (i >= n)
                continue;
            int tile = min(BLOCK, n - j0);
            for (int jj = 0; jj < tile; ++jj) {
                if (self && j0 + jj <= i)
                    continue;
                float dot = __fadd_rn(__fadd_rn(__fmul_rn(ax, sx[jj]), __fmul_rn(ay, sy[jj])), __fmul_rn(az, sz[jj]));
                int lo = 0, hi = NBINS;
                while (hi > lo + 1) {
                    int k = (lo + hi) / 2;
                    if (dot >= edges[k])
                        hi = k;
                    else
                        lo = k;
                }
                atomicAdd(&s_hist[lo][warp], 1u);
            }
        }
    }
    __syncthreads();
    for (int bin = tx; bin < NBINS; bin += BLOCK) {
        unsigned total = 0;
        for (int w = 0; w < WARPS; ++w)
            total += s_hist[bin][w];
        hist[b * NBINS + bin] = total;
    }
}
