// PathFinder dynamic programming with Rodinia pathfinder's pyramid launches (Che et al. 2009; Wu
// et al. 2012 measure it).
//
// The cheapest path down a rows x cols grid of weights, moving one row down and at most one column
// sideways per step: cost[r][x] = wall[r][x] + min(cost[r-1][x-1], cost[r-1][x], cost[r-1][x+1])
// (a missing neighbour at the grid's edge is left out).  A CTA of BLOCK threads stages a row of
// costs in shared memory and advances it `iterations` rows before writing back: after step i only
// the columns more than i away from the tile's edge are exact, so the tile shrinks by one column on
// each side per step and only its inner BLOCK - 2*iterations columns are written; the host
// launches one grid per `iterations` rows and swaps the cost buffers.
#define BLOCK 256

__device__ __forceinline__ bool in_range(int v, int lo, int hi) { return v >= lo && v <= hi; }

extern "C" __global__ void pathfinder_rows(int iterations, const int* __restrict__ wall, const int* __restrict__ src,
                                           int* __restrict__ dst, int cols, int start_row)
{
    __shared__ int s_prev[BLOCK];
    __shared__ int s_next[BLOCK];
    int tx = threadIdx.x;
    int inner = BLOCK - 2 * iterations;
    int tile_x = inner * blockIdx.x - iterations;  // grid column of the tile's column 0
    int x = tile_x + tx;

    int lo = tile_x < 0 ? -tile_x : 0;  // the tile's columns that lie on the grid
    int hi = tile_x + BLOCK > cols ? cols - 1 - tile_x : BLOCK - 1;
    int west = tx - 1 < lo ? lo : tx - 1;
    int east = tx + 1 > hi ? hi : tx + 1;
    bool on_grid = in_range(tx, lo, hi);

    if (in_range(x, 0, cols - 1))
        s_prev[tx] = src[x];
    __syncthreads();

    bool computed = false;
    for (int i = 0; i < iterations; ++i) {
        computed = false;
        if (in_range(tx, i + 1, BLOCK - i - 2) && on_grid) {
            computed = true;
            int shortest = min(s_prev[west], min(s_prev[tx], s_prev[east]));
            s_next[tx] = shortest + wall[cols * (start_row + i) + x];
        }
        __syncthreads();
        if (i == iterations - 1)
            break;
        if (computed)
            s_prev[tx] = s_next[tx];
        __syncthreads();
    }
    if (computed)
        dst[x] = s_next[tx];
}
