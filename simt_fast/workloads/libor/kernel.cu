// LIBOR market model Monte Carlo: forward-rate paths and a swaption portfolio (Jin 2012 §5.3,
// LIB: "4096 paths for 15 options"), in double precision.
//
// Each thread simulates one path: n_steps time steps of the lognormal forward-rate dynamics
// under the spot measure (the drift of rate i sums over rates n+1..i, so the inner loop shrinks
// as time advances), then values a portfolio of receiver swaptions: an option pays only when its
// swap value is negative (the payoff branch).  The forward rates and the discount/annuity
// factors live in per-thread local arrays.
#define MAX_RATES 96

extern "C" __global__ void libor_path(const double* __restrict__ normals,     // [n_steps][n_paths]
                                      const double* __restrict__ lambda,      // [n_rates] volatility by time-to-reset
                                      const double* __restrict__ l0,          // [n_rates] initial forward rates
                                      const int* __restrict__ maturities,     // [n_options], in 1..n_rates-n_steps
                                      const double* __restrict__ swaprates,   // [n_options]
                                      int n_paths, int n_rates, int n_steps, int n_options,
                                      double delta, double* __restrict__ value)
{
    int path = blockIdx.x * blockDim.x + threadIdx.x;
    if (path >= n_paths)
        return;
    double L[MAX_RATES], B[MAX_RATES], S[MAX_RATES];
    for (int i = 0; i < n_rates; ++i)
        L[i] = l0[i];

    for (int n = 0; n < n_steps; ++n) {
        double sqez = sqrt(delta) * normals[n * n_paths + path];
        double v = 0.0;
        for (int i = n + 1; i < n_rates; ++i) {
            double lam = lambda[i - n - 1];
            double con1 = delta * lam;
            v += con1 * L[i] / (1.0 + delta * L[i]);
            double vrat = exp(con1 * v + lam * (sqez - 0.5 * con1));
            L[i] = L[i] * vrat;
        }
    }

    // Discount factors B and annuities S from the first maturity on.
    double b = 1.0, s = 0.0;
    for (int n = n_steps; n < n_rates; ++n) {
        b = b / (1.0 + delta * L[n]);
        s = s + delta * b;
        B[n - n_steps] = b;
        S[n - n_steps] = s;
    }
    double payoff = 0.0;
    for (int k = 0; k < n_options; ++k) {
        int m = maturities[k] - 1;
        double swap = B[m] + swaprates[k] * S[m] - 1.0;
        if (swap < 0.0)  // the receiver swaption is exercised only in the money
            payoff += -100.0 * swap;
    }
    for (int n = 0; n < n_steps; ++n)  // discount back to time 0 along the path
        payoff = payoff / (1.0 + delta * L[n]);
    value[path] = payoff;
}
