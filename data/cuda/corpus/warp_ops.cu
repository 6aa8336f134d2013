// Parser corpus: warp shuffles, votes, ballots, match, activemask, syncwarp.
extern "C" __global__ void warp_reduce(int *out, const int *in, int n)
{
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    int v = tid < n ? in[tid] : 0;
    unsigned mask = __ballot_sync(0xffffffffu, v > 0);
    for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
    int lane = threadIdx.x & 31;
    int up = __shfl_up_sync(0xffffffffu, v, 1);
    int x = __shfl_xor_sync(0xffffffffu, v, 3);
    int b = __shfl_sync(0xffffffffu, v, 0);
    if (__all_sync(0xffffffffu, v != 0) && lane == 0) out[tid / 32] = v + __popc(mask);
    if (__any_sync(__activemask(), up < 0)) {
        __syncwarp();
        out[n + tid] = x + b;
    }
}
