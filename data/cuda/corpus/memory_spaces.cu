// Parser corpus: constant memory, local arrays (dynamic indexing), globals with initialisers,
// vector loads/stores, read-only loads.
__constant__ float coeffs[8] = {0.5f, 0.25f, 0.125f, 1.0f, 2.0f, 4.0f, -1.0f, 3.0f};
__constant__ int table[4] = {3, 1, 4, 1};
__device__ unsigned long long counter = 42ull;
__device__ float scratch[64];

extern "C" __global__ void stencil(float4 *out, const float4 *__restrict__ in, int n)
{
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    float window[16];
    for (int i = 0; i < 16; ++i) window[i] = in[(tid + i) % n].x;
    float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
    for (int k = 0; k < 8; ++k) {
        float w = window[(tid + table[k & 3] * k) & 15] * coeffs[k];
        float4 v = __ldg(&in[(tid + k) % n]);
        acc.x += w * v.x; acc.y += w * v.y; acc.z += w * v.z; acc.w += w * v.w;
    }
    if (tid < n) out[tid] = acc;
    if (tid == 0) { counter += 1; scratch[tid & 63] = acc.x; }
}
