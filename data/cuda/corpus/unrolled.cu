// Parser corpus: a large straight-line-heavy kernel (fully unrolled rounds with data-dependent
// branches), the shape of crypto/hash kernels; also the parser benchmark's big input.
__device__ __forceinline__ unsigned rotl(unsigned x, int r) { return (x << r) | (x >> (32 - r)); }

extern "C" __global__ void rounds(unsigned *out, const unsigned *in, int n)
{
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid >= n) return;
    unsigned a = in[tid], b = in[(tid + 1) % n], c = 0x9e3779b9u, d = (unsigned)tid;
#pragma unroll
    for (int r = 0; r < 96; ++r) {
        a += b ^ rotl(c, r & 31);
        d = rotl(d ^ a, (r * 7) & 31);
        if ((a ^ r) & 1) c += d * 0x85ebca6bu; else c ^= d + 0xc2b2ae35u;
        b = rotl(b + c, (r * 13) & 31);
        if (b & 0x10) a = in[(a ^ b) % n];
    }
    out[tid] = a ^ b ^ c ^ d;
}
