// HotSpot thermal simulation with Rodinia hotspot's pyramid launches (Che et al. 2009; Lee et al.
// 2013 and Wu et al. 2012 measure it).
//
// One explicit time step moves every cell of the rows x cols chip towards its neighbours, its power
// and the ambient temperature; at the chip's edge a missing neighbour is the cell itself.  A CTA of
// BLOCK x BLOCK threads stages a tile of temperatures and powers in shared memory and runs
// `iterations` steps on it before writing back: after step i only the cells more than i away from
// the tile's edge are still exact, so the tile shrinks by one ring per step (the pyramid) and only
// its inner (BLOCK - 2*iterations)^2 cells are written.  Tiles therefore overlap by `iterations`
// cells on each side; the host launches one grid per `iterations` steps and swaps the buffers.
// Divergence: the shrinking ring, the chip's edges, the partial tiles at the high edges.
#define BLOCK 16

__device__ __forceinline__ bool in_range(int v, int lo, int hi) { return v >= lo && v <= hi; }

extern "C" __global__ void hotspot_pyramid(int iterations, const float* __restrict__ power,
                                           const float* __restrict__ temp_src, float* __restrict__ temp_dst,
                                           int cols, int rows, float step_div_cap, float rx_1, float ry_1,
                                           float rz_1, float ambient)
{
    __shared__ float s_temp[BLOCK][BLOCK];
    __shared__ float s_power[BLOCK][BLOCK];
    __shared__ float s_next[BLOCK][BLOCK];
    int tx = threadIdx.x, ty = threadIdx.y;
    int inner = BLOCK - 2 * iterations;             // cells per side this CTA writes
    int tile_y = inner * blockIdx.y - iterations;   // chip row of the tile's row 0
    int tile_x = inner * blockIdx.x - iterations;
    int y = tile_y + ty, x = tile_x + tx;
    int idx = cols * y + x;

    // the part of the tile that lies on the chip
    int lo_y = tile_y < 0 ? -tile_y : 0;
    int hi_y = tile_y + BLOCK > rows ? rows - 1 - tile_y : BLOCK - 1;
    int lo_x = tile_x < 0 ? -tile_x : 0;
    int hi_x = tile_x + BLOCK > cols ? cols - 1 - tile_x : BLOCK - 1;

    if (in_range(y, 0, rows - 1) && in_range(x, 0, cols - 1)) {
        s_temp[ty][tx] = temp_src[idx];
        s_power[ty][tx] = power[idx];
    }
    __syncthreads();

    int north = ty - 1 < lo_y ? lo_y : ty - 1;
    int south = ty + 1 > hi_y ? hi_y : ty + 1;
    int west = tx - 1 < lo_x ? lo_x : tx - 1;
    int east = tx + 1 > hi_x ? hi_x : tx + 1;

    bool computed = false;
    for (int i = 0; i < iterations; ++i) {
        computed = false;
        if (in_range(tx, i + 1, BLOCK - i - 2) && in_range(ty, i + 1, BLOCK - i - 2) &&
            in_range(tx, lo_x, hi_x) && in_range(ty, lo_y, hi_y)) {
            computed = true;
            float t = s_temp[ty][tx];
            s_next[ty][tx] = t + step_div_cap * (s_power[ty][tx] +
                                                 (s_temp[south][tx] + s_temp[north][tx] - 2.0f * t) * ry_1 +
                                                 (s_temp[ty][east] + s_temp[ty][west] - 2.0f * t) * rx_1 +
                                                 (ambient - t) * rz_1);
        }
        __syncthreads();
        if (i == iterations - 1)
            break;
        if (computed)
            s_temp[ty][tx] = s_next[ty][tx];
        __syncthreads();
    }
    if (computed)
        temp_dst[idx] = s_next[ty][tx];
}
