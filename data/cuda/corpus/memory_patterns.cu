// Memory access patterns whose coalescing, bank conflicts and cache behaviour are worked out by hand
// in tests/test_memory_patterns.py (docs/memory.md).

// Global loads of in[tid * stride]: stride 1 touches 4 sectors per warp (32 x 4 bytes), stride 2
// 8, stride 32 one sector per thread (32); stride 0 is a broadcast (1 sector).
extern "C" __global__ void stride_load(float *out, const float *in, int stride)
{
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    out[tid] = in[tid * stride];
}

// A gather through an index array: the sectors are the distinct in[idx[...]] sectors of a warp.
extern "C" __global__ void gather(float *out, const float *in, const int *idx)
{
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    out[tid] = in[idx[tid]];
}

// Shared memory read at word (t * stride) mod 1056: stride 1 is conflict-free, stride 2 a 2-way
// conflict, stride 32 a 32-way conflict (every lane in bank 0), stride 0 a broadcast.
extern "C" __global__ void shared_stride(float *out, int stride)
{
    __shared__ float buf[32 * 33];
    int t = threadIdx.x;
    for (int i = t; i < 32 * 33; i += blockDim.x) buf[i] = (float)i;
    __syncthreads();
    out[blockIdx.x * blockDim.x + t] = buf[(t * stride) % (32 * 33)];
}

// Streaming: every element is read once and written once (no reuse for a cache).
extern "C" __global__ void stream(float *c, const float *a, const float *b, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        c[i] = a[i] + b[i];
}

// Every CTA re-reads a small array `passes` times: after the first pass it is in the L1.
extern "C" __global__ void reread(float *out, const float *small, int n, int passes)
{
    float acc = 0.f;
    for (int p = 0; p < passes; ++p)
        for (int j = threadIdx.x; j < n; j += blockDim.x)
            acc += small[j];
    out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}

// Constant memory read at c[tid % k]: k distinct addresses per warp, k serialised accesses.
__constant__ float table[32];
extern "C" __global__ void const_spread(float *out, int k)
{
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    out[tid] = table[tid % k];
}

// A dynamically indexed local array: every thread reads the same frame offset, which the hardware
// interleaves into 32 consecutive words per warp (4 sectors).
extern "C" __global__ void local_array(float *out, const float *in, int pick)
{
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    float buf[16];
    for (int i = 0; i < 16; ++i) buf[i] = in[tid] * (float)i;
    out[tid] = buf[pick & 15];
}
