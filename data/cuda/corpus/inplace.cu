// Emulator corpus: device memory as CUDA has it -- an in-place scan (the same buffer passed as
// input and output) and pointer arithmetic between two views of one allocation.
#define BLOCK 256

extern "C" __global__ void scan_inplace(const int *in, int *out, int n)
{
    __shared__ int buf[BLOCK];
    int t = threadIdx.x;
    buf[t] = t < n ? in[t] : 0;
    __syncthreads();
    for (int d = 1; d < BLOCK; d <<= 1) {
        int v = t >= d ? buf[t - d] : 0;
        __syncthreads();
        buf[t] += v;
        __syncthreads();
    }
    if (t < n) out[t] = buf[t];
}

// second == first + n in the caller: the kernel reads the second half through the first pointer
extern "C" __global__ void add_halves(float *first, const float *second, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) first[i] = first[i + n] + 2.0f * second[i];
}
