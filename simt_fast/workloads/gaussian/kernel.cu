// Gaussian elimination with Rodinia gaussian's two kernels and host loop (Che et al. 2009).
//
// For each pivot row t the host launches gaussian_fan1 (one thread per row below the pivot: its
// multiplier m[r][t] = a[r][t] / a[t][t]) and gaussian_fan2 (4 x 4 CTAs over the whole matrix:
// thread (x, y) subtracts m[t+1+x][t] times the pivot row from a[t+1+x][t+y], and the threads of
// column 0 do the same to the right-hand side b).  The grids keep covering the whole matrix while
// the active part shrinks, so ever more threads leave at the two bounds tests; the host solves the
// triangular system at the end.
extern "C" __global__ void gaussian_fan1(float* __restrict__ m, const float* __restrict__ a, int size, int t)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= size - 1 - t)
        return;
    m[size * (r + t + 1) + t] = a[size * (r + t + 1) + t] / a[size * t + t];
}

extern "C" __global__ void gaussian_fan2(const float* __restrict__ m, float* __restrict__ a, float* __restrict__ b,
                                         int size, int t)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;  // row below the pivot
    int y = blockIdx.y * blockDim.y + threadIdx.y;  // column from the pivot's
    if (x >= size - 1 - t)
        return;
    if (y >= size - t)
        return;
    int row = x + 1 + t;
    a[size * row + (y + t)] -= m[size * row + t] * a[size * t + (y + t)];
    if (y == 0)
        b[row] -= m[size * row + t] * b[t];
}
