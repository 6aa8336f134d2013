// Blocked LU decomposition (Doolittle, no pivoting) with the three kernels and the host loop of
// Rodinia lud (Che et al. 2009).
//
// The dim x dim row-major matrix is factored in place, 16 x 16 blocks at a time.  For each
// diagonal block at `offset` the host launches lud_diagonal (one CTA of 16 threads factors the
// diagonal block), lud_perimeter (one CTA of 32 threads per block to its right and below it: the
// first 16 threads solve the block row with the diagonal block's L, the other 16 the block column
// with its U, so every warp splits in two halves that run different loops) and lud_internal (one
// 16 x 16 CTA per trailing block subtracts the product of its perimeter blocks); a last
// lud_diagonal factors the final block.
#define BS 16

extern "C" __global__ void lud_diagonal(float* __restrict__ m, int dim, int offset)
{
    __shared__ float s[BS][BS];
    int tx = threadIdx.x;
    for (int i = 0; i < BS; ++i)
        s[i][tx] = m[(offset + i) * dim + offset + tx];
    __syncthreads();
    for (int i = 0; i < BS - 1; ++i) {
        if (tx > i) {  // column i of L below the diagonal
            for (int j = 0; j < i; ++j)
                s[tx][i] -= s[tx][j] * s[j][i];
            s[tx][i] /= s[i][i];
        }
        __syncthreads();
        if (tx > i) {  // row i + 1 of U right of the diagonal
            for (int j = 0; j < i + 1; ++j)
                s[i + 1][tx] -= s[i + 1][j] * s[j][tx];
        }
        __syncthreads();
    }
    for (int i = 1; i < BS; ++i)
        m[(offset + i) * dim + offset + tx] = s[i][tx];
}

extern "C" __global__ void lud_perimeter(float* __restrict__ m, int dim, int offset)
{
    __shared__ float dia[BS][BS];
    __shared__ float row[BS][BS];
    __shared__ float col[BS][BS];
    int tx = threadIdx.x;
    int block = offset + (blockIdx.x + 1) * BS;  // first row / column of this CTA's perimeter blocks

    if (tx < BS) {  // top half of the diagonal block, and the block row
        int idx = tx;
        for (int i = 0; i < BS / 2; ++i)
            dia[i][idx] = m[(offset + i) * dim + offset + idx];
        for (int i = 0; i < BS; ++i)
            row[i][idx] = m[(offset + i) * dim + block + idx];
    } else {  // bottom half of the diagonal block, and the block column
        int idx = tx - BS;
        for (int i = BS / 2; i < BS; ++i)
            dia[i][idx] = m[(offset + i) * dim + offset + idx];
        for (int i = 0; i < BS; ++i)
            col[i][idx] = m[(block + i) * dim + offset + idx];
    }
    __syncthreads();

    if (tx < BS) {  // U of the block row: forward substitution with the unit lower L
        int idx = tx;
        for (int i = 1; i < BS; ++i)
            for (int j = 0; j < i; ++j)
                row[i][idx] -= dia[i][j] * row[j][idx];
    } else {  // L of the block column: solve against the diagonal block's U
        int idx = tx - BS;
        for (int i = 0; i < BS; ++i) {
            for (int j = 0; j < i; ++j)
                col[idx][i] -= col[idx][j] * dia[j][i];
            col[idx][i] /= dia[i][i];
        }
    }
    __syncthreads();

    if (tx < BS) {
        int idx = tx;
        for (int i = 1; i < BS; ++i)
            m[(offset + i) * dim + block + idx] = row[i][idx];
    } else {
        int idx = tx - BS;
        for (int i = 0; i < BS; ++i)
            m[(block + i) * dim + offset + idx] = col[i][idx];
    }
}

extern "C" __global__ void lud_internal(float* __restrict__ m, int dim, int offset)
{
    __shared__ float row[BS][BS];
    __shared__ float col[BS][BS];
    int tx = threadIdx.x, ty = threadIdx.y;
    int g_row = offset + (blockIdx.y + 1) * BS, g_col = offset + (blockIdx.x + 1) * BS;
    row[ty][tx] = m[(offset + ty) * dim + g_col + tx];
    col[ty][tx] = m[(g_row + ty) * dim + offset + tx];
    __syncthreads();
    float sum = 0.0f;
    for (int i = 0; i < BS; ++i)
        sum += col[ty][i] * row[i][tx];
    m[(g_row + ty) * dim + g_col + tx] -= sum;
}
