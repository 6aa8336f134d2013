// The assignment step of k-means clustering with Rodinia kmeans' kernels and host loop (Che et
// al. 2009).
//
// kmeans_invert (once) transposes the points to feature-major order, so that a warp's threads read
// consecutive words for each feature.  kmeans_assign, once per iteration of the host loop, gives
// every point (one thread each, 256-thread CTAs) the index of its nearest cluster centre; every
// thread reads the same centre coordinate at the same time (Rodinia keeps the centres in constant
// memory; here they are a global array, read the same way).  The host recomputes the centres
// from the memberships and repeats until no point moves.  Distances are summed with explicitly
// rounded operations so that a numpy reference breaks ties exactly as the kernel does.
#define BLOCK 256

extern "C" __global__ void kmeans_invert(const float* __restrict__ points, float* __restrict__ features,
                                         int n_points, int n_features)
{
    int p = blockIdx.x * BLOCK + threadIdx.x;
    if (p < n_points)
        for (int f = 0; f < n_features; ++f)
            features[p + n_points * f] = points[p * n_features + f];
}

extern "C" __global__ void kmeans_assign(const float* __restrict__ features, int n_features, int n_points,
                                         int n_clusters, const float* __restrict__ centres,
                                         int* __restrict__ membership)
{
    int p = blockIdx.x * BLOCK + threadIdx.x;
    if (p >= n_points)
        return;
    int nearest = -1;
    float best = 3.402823466e38f;
    for (int c = 0; c < n_clusters; ++c) {
        float dist = 0.0f;
        for (int f = 0; f < n_features; ++f) {
            float diff = __fsub_rn(features[p + n_points * f], centres[c * n_features + f]);
            dist = __fadd_rn(dist, __fmul_rn(diff, diff));
        }
        if (dist < best) {
            best = dist;
            nearest = c;
        }
    }
    membership[p] = nearest;
}
