// 7-point Jacobi stencil with Parboil stencil's 2.5-D blocking, x coarsening and host loop
// (Stratton et al. 2012; Lee et al. 2013 measure it).
//
// next = c1 * (sum of the six neighbours) - c0 * centre on the interior of an nx x ny x nz grid
// (x fastest); the faces keep their values.  A CTA of BX x BY threads owns a 2*BX x BY column of
// the grid and marches it along z: the current z-plane of the column sits in shared memory, the
// planes below and above in registers, and each thread computes two points BX apart.  Neighbours
// across the column's y edges and outer x edges are read from global memory instead of shared
// memory, so the threads on the CTA's edges take other branches.  The host launches one grid per
// iteration and swaps the two grids.
#define BX 32
#define BY 4

extern "C" __global__ void stencil7(float c0, float c1, const float* __restrict__ a0, float* __restrict__ anext,
                                    int nx, int ny, int nz)
{
    __shared__ float plane[BY][2 * BX];
    int tx = threadIdx.x, ty = threadIdx.y;
    int i = blockIdx.x * 2 * BX + tx, i2 = i + BX, j = blockIdx.y * BY + ty;
    long pl = (long)nx * ny;
    long c = i + (long)nx * j, c2 = i2 + (long)nx * j;
    bool in1 = i < nx && j < ny, in2 = i2 < nx && j < ny;
    bool interior1 = i > 0 && i < nx - 1 && j > 0 && j < ny - 1;
    bool interior2 = i2 < nx - 1 && j > 0 && j < ny - 1;
    float below1 = 0.0f, below2 = 0.0f, above1 = 0.0f, above2 = 0.0f;

    plane[ty][tx] = 0.0f;
    plane[ty][tx + BX] = 0.0f;
    __syncthreads();
    if (in1) {
        below1 = a0[c];
        plane[ty][tx] = a0[c + pl];
    }
    if (in2) {
        below2 = a0[c2];
        plane[ty][tx + BX] = a0[c2 + pl];
    }
    __syncthreads();

    for (int k = 1; k < nz - 1; ++k) {
        long off = k * pl;
        if (in1)
            above1 = a0[c + off + pl];
        if (in2)
            above2 = a0[c2 + off + pl];
        if (interior1) {
            float north = ty == BY - 1 ? a0[c + off + nx] : plane[ty + 1][tx];
            float south = ty == 0 ? a0[c + off - nx] : plane[ty - 1][tx];
            float west = tx == 0 ? a0[c + off - 1] : plane[ty][tx - 1];
            float east = plane[ty][tx + 1];
            anext[c + off] = (above1 + below1 + north + south + east + west) * c1 - plane[ty][tx] * c0;
        }
        if (interior2) {
            float north = ty == BY - 1 ? a0[c2 + off + nx] : plane[ty + 1][tx + BX];
            float south = ty == 0 ? a0[c2 + off - nx] : plane[ty - 1][tx + BX];
            float west = plane[ty][tx + BX - 1];
            float east = tx == BX - 1 ? a0[c2 + off + 1] : plane[ty][tx + BX + 1];
            anext[c2 + off] = (above2 + below2 + north + south + east + west) * c1 - plane[ty][tx + BX] * c0;
        }
        __syncthreads();  // everyone has read the plane before it moves down
        below1 = plane[ty][tx];
        plane[ty][tx] = above1;
        below2 = plane[ty][tx + BX];
        plane[ty][tx + BX] = above2;
        __syncthreads();
    }
}
