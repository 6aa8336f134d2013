// Emulator corpus: __constant__ and __device__ variables set and read by the host
// (cudaMemcpyToSymbol / cudaMemcpyFromSymbol).
__constant__ float coef[4];
__device__ float table[8];
__device__ int counter;

extern "C" __global__ void scale(float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = coef[i & 3] * table[i & 7];
        atomicAdd(&counter, 1);
        if (i < 8) table[i] += 1.0f;
    }
}
