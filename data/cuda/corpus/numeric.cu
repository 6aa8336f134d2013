// Parser corpus: doubles, 64-bit integer math, transcendental (SFU) functions, conversions.
extern "C" __global__ void doubles(double *out, const double *in, int n)
{
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid >= n) return;
    double x = in[tid];
    double y = sqrt(fabs(x)) + exp(x * 0.001) - log1p(fabs(x));
    out[tid] = y > 1.0 ? y / x : fma(x, y, 2.5);
}

extern "C" __global__ void int64_math(unsigned long long *out, const long long *in, int n)
{
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid >= n) return;
    long long a = in[tid];
    unsigned long long h = 1469598103934665603ull;
    for (int i = 0; i < 8; ++i) {
        h ^= (unsigned long long)((a >> (8 * i)) & 0xff);
        h *= 1099511628211ull;
    }
    out[tid] = h / (unsigned long long)(a | 1) + (h % 1000003ull) + __umul64hi(h, (unsigned long long)a);
}

extern "C" __global__ void fast_math(float *out, const float *in, int n)
{
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid < n) {
        float v = in[tid];
        out[tid] = __sinf(v) * __cosf(v) + __expf(v) + rsqrtf(fabsf(v) + 1.0f) + __fdividef(v, 3.0f) + tanhf(v);
    }
}
