// The gain evaluation of streaming k-median local search (Guha et al. 2003) with the kernel and
// host loop of Rodinia streamcluster's pgain (Che et al. 2009).
//
// For a candidate facility x, one thread per point (512-thread CTAs) compares the cost of serving
// the point from x with its current cost.  A point that would be cheaper at x is marked to switch
// and adds its saving to its own row's slot K; any other point adds, in its row's slot of its
// current centre, what moving to x would cost it should that centre close.  Rows are per point, so
// no two threads add to one word; the host sums the rows, decides which centres to close and
// whether opening x pays, updates the assignment and tries the next candidate.  The candidate's
// coordinates are staged in shared memory by the CTA's first `dim` threads.
#define BLOCK 512
#define MAX_DIM 64

extern "C" __global__ void streamcluster_gain(int num, int dim, int x, const float* __restrict__ coord,
                                              const float* __restrict__ weight, const float* __restrict__ cost,
                                              const int* __restrict__ assign, const int* __restrict__ centre_slot,
                                              int k, int stride, float* __restrict__ work,
                                              int* __restrict__ switch_membership)
{
    __shared__ float s_x[MAX_DIM];
    int tx = threadIdx.x;
    if (tx < dim)
        s_x[tx] = coord[tx * num + x];
    __syncthreads();
    int p = blockIdx.x * BLOCK + tx;
    if (p >= num)
        return;
    float dist = 0.0f;
    for (int d = 0; d < dim; ++d) {
        float diff = coord[d * num + p] - s_x[d];
        dist += diff * diff;
    }
    float x_cost = dist * weight[p];
    float* row = work + (long)p * stride;
    if (x_cost < cost[p]) {
        switch_membership[p] = 1;
        row[k] += x_cost - cost[p];
    } else {
        row[centre_slot[assign[p]]] += cost[p] - x_cost;
    }
}
