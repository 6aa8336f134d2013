// Parser corpus: shared memory (static and extern), barriers, atomics, a tree reduction.
extern "C" __global__ void block_histogram(unsigned *hist, const unsigned char *data, int n)
{
    __shared__ unsigned local_hist[256];
    for (int i = threadIdx.x; i < 256; i += blockDim.x) local_hist[i] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        atomicAdd(&local_hist[data[i]], 1u);
    __syncthreads();
    for (int i = threadIdx.x; i < 256; i += blockDim.x) atomicAdd(&hist[i], local_hist[i]);
}

extern "C" __global__ void reduce_sum(float *out, const float *in, int n)
{
    extern __shared__ float partial[];
    unsigned t = threadIdx.x;
    unsigned i = blockIdx.x * blockDim.x * 2 + t;
    float s = 0.0f;
    if (i < n) s = in[i];
    if (i + blockDim.x < n) s += in[i + blockDim.x];
    partial[t] = s;
    __syncthreads();
    for (unsigned stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        if (t < stride) partial[t] += partial[t + stride];
        __syncthreads();
    }
    if (t == 0) {
        atomicAdd(out, partial[0]);
        atomicMax((int *)out + 1, (int)blockIdx.x);
        atomicCAS((int *)out + 2, 0, 1);
        atomicExch((unsigned *)out + 3, 7u);
    }
}
