// Parser corpus: switch statements, device functions (inlined and __noinline__), recursion-free call chains.
__device__ __noinline__ int classify(int v)
{
    switch (v & 7) {
    case 0: return 10;
    case 1: return v * 3;
    case 2: return v ^ 0x55;
    case 3: return -v;
    case 4: return v >> 2;
    case 5: return v + 100;
    default: return 0;
    }
}

__device__ __noinline__ float mix(float a, float b, int mode)
{
    if (mode == 0) return a + b;
    if (mode == 1) return a * b;
    return a - classify((int)b);
}

__device__ __forceinline__ int clampi(int v, int lo, int hi) { return v < lo ? lo : (v > hi ? hi : v); }

extern "C" __global__ void dispatch(float *out, const int *in, int n)
{
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid < n) {
        int c = classify(in[tid]);
        float r = mix((float)c, (float)in[(tid + 1) % n], clampi(c, 0, 2));
        switch (tid % 4) {
        case 0: out[tid] = r; break;
        case 1: out[tid] = -r; break;
        case 2: out[tid] = r * 2.0f; break;
        default: out[tid] = 0.0f;
        }
    }
}
