// Black-Scholes European option pricing (Jin 2012 §5.3, BS).
//
// Each thread prices several options (grid-stride loop, so the number of options per thread
// differs at the tail).  The cumulative normal distribution uses the Abramowitz-Stegun
// polynomial, evaluated on |d| and mirrored for d > 0: that sign test is the kernel's only
// data-dependent branch (nvcc usually turns it into a select), so BS is the low-divergence case.

__device__ __forceinline__ float cnd(float d)
{
    const float a1 = 0.31938153f, a2 = -0.356563782f, a3 = 1.781477937f,
                a4 = -1.821255978f, a5 = 1.330274429f;
    const float rsqrt_2pi = 0.39894228040143267794f;
    float k = 1.0f / (1.0f + 0.2316419f * fabsf(d));
    float c = rsqrt_2pi * expf(-0.5f * d * d) * (k * (a1 + k * (a2 + k * (a3 + k * (a4 + k * a5)))));
    if (d > 0.0f)
        c = 1.0f - c;
    return c;
}

extern "C" __global__ void blackscholes(float* __restrict__ call, float* __restrict__ put,
                                        const float* __restrict__ spot,
                                        const float* __restrict__ strike,
                                        const float* __restrict__ years,
                                        float riskfree, float volatility, int n_options)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n_options; i += blockDim.x * gridDim.x) {
        float s = spot[i], x = strike[i], t = years[i];
        float sqrt_t = sqrtf(t);
        float d1 = (logf(s / x) + (riskfree + 0.5f * volatility * volatility) * t) / (volatility * sqrt_t);
        float d2 = d1 - volatility * sqrt_t;
        float cnd1 = cnd(d1), cnd2 = cnd(d2);
        float discount = expf(-riskfree * t);
        call[i] = s * cnd1 - x * discount * cnd2;
        put[i] = x * discount * (1.0f - cnd2) - s * (1.0f - cnd1);
    }
}
