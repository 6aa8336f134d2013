// One Jacobi sweep of the 3-D Laplace equation with Dirichlet boundaries (Jin 2012 §5.3, LPS).
//
// A CTA owns a BX x BY column of the grid and marches it along z (2.5-D blocking): the current
// z-plane tile plus a one-cell halo is staged in shared memory, the planes below and above stay
// in registers.  Divergence comes from the nested index tests: which threads load a halo cell
// (tile edges, but not past the grid), which points are on the boundary (copied) or interior
// (averaged), and the partial tiles at the high x/y edges.  Both __syncthreads are reached by
// every thread of the CTA (out-of-range threads skip the work, not the barrier).
#define BX 32
#define BY 4

extern "C" __global__ void laplace3d(const float* __restrict__ u, float* __restrict__ u_new,
                                     int nx, int ny, int nz)
{
    __shared__ float tile[BY + 2][BX + 2];
    int tx = threadIdx.x, ty = threadIdx.y;
    int i = blockIdx.x * BX + tx, j = blockIdx.y * BY + ty;
    bool inside = i < nx && j < ny;
    long plane = (long)nx * ny;
    long idx = i + (long)j * nx;
    float below = 0.0f, centre = 0.0f, above = 0.0f;
    if (inside) {
        centre = u[idx];
        if (nz > 1)
            above = u[idx + plane];
    }
    for (int k = 0; k < nz; ++k) {
        long g = idx + k * plane;
        __syncthreads();  // everyone has finished reading the previous plane's tile
        if (inside) {
            tile[ty + 1][tx + 1] = centre;
            if (tx == 0 && i > 0)
                tile[ty + 1][0] = u[g - 1];
            if (tx == BX - 1 && i + 1 < nx)
                tile[ty + 1][BX + 1] = u[g + 1];
            if (ty == 0 && j > 0)
                tile[0][tx + 1] = u[g - nx];
            if (ty == BY - 1 && j + 1 < ny)
                tile[BY + 1][tx + 1] = u[g + nx];
        }
        __syncthreads();
        if (inside) {
            float r;
            if (i == 0 || i == nx - 1 || j == 0 || j == ny - 1 || k == 0 || k == nz - 1) {
                r = centre;  // Dirichlet boundary: the prescribed value stays
            } else {
                float west = tile[ty + 1][tx], east = tile[ty + 1][tx + 2];
                float south = tile[ty][tx + 1], north = tile[ty + 2][tx + 1];
                r = (((((west + east) + south) + north) + below) + above) * (1.0f / 6.0f);
            }
            u_new[g] = r;
            below = centre;
            centre = above;
            above = (k + 2 < nz) ? u[g + 2 * plane] : 0.0f;
        }
    }
}
