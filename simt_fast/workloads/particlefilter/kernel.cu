// The resampling step of a particle filter tracking an object through video frames, with the
// kernel and host loop of Rodinia particlefilter (naive version; Che et al. 2009; Wu et al. 2012
// measure it).
//
// Per frame the host moves the particles, weighs them by the frame's likelihood, normalises the
// weights into a cumulative distribution CDF and draws the systematic-resampling positions
// u[i] = u1 + i / n.  The kernel (one thread per particle, 128-thread CTAs) finds the first
// particle whose CDF reaches u[i] by a linear search that leaves its loop at the match (a second
// loop exit besides the trip count) and copies that particle's position.  Threads with larger i
// search further, so the warps' lanes leave the loop one by one.
#define BLOCK 128

extern "C" __global__ void particlefilter_resample(const double* __restrict__ x, const double* __restrict__ y,
                                                   const double* __restrict__ cdf, const double* __restrict__ u,
                                                   double* __restrict__ x_new, double* __restrict__ y_new, int n)
{
    int i = blockIdx.x * BLOCK + threadIdx.x;
    if (i < n) {
        int index = -1;
        for (int k = 0; k < n; ++k) {
            if (cdf[k] >= u[i]) {
                index = k;
                break;
            }
        }
        if (index == -1)
            index = n - 1;
        x_new[i] = x[index];
        y_new[i] = y[index];
    }
}
