// Needleman-Wunsch global sequence alignment, the launch structure of Rodinia's nw (Che et al.
// 2009), one of the programs Lee et al. 2013 measure.
//
// The (n+1) x (n+1) score matrix is cut into TILE x TILE tiles; the host launches one grid per
// anti-diagonal of tiles, first the upper-left half (nw_upper, 1, 2, ... n/TILE CTAs), then the
// lower-right half (nw_lower, n/TILE - 1 ... 1 CTAs).  A CTA of TILE threads fills one tile whose
// top row and left column are already final: it stages the tile's substitution scores and its
// borders in shared memory, then sweeps the tile's 2*TILE - 1 anti-diagonals, thread tx computing
// the cell of column tx on each (so on the first and last diagonals most threads idle: the
// wavefront's divergence), with a barrier between diagonals.
//   score[i][j] = max(score[i-1][j-1] + ref[i][j], score[i][j-1] - penalty, score[i-1][j] - penalty)
#define TILE 16

__device__ __forceinline__ int best_of(int diag, int left, int up, int penalty)
{
    return max(diag, max(left - penalty, up - penalty));
}

__device__ __forceinline__ void nw_tile(int* __restrict__ score, const int* __restrict__ ref, int n_cols,
                                        int penalty, int tile_row, int tile_col)
{
    __shared__ int s_ref[TILE][TILE];
    __shared__ int s_score[TILE + 1][TILE + 1];
    int tx = threadIdx.x;
    int corner = n_cols * TILE * tile_row + TILE * tile_col;  // the cell above-left of the tile

    for (int r = 0; r < TILE; ++r)
        s_ref[r][tx] = ref[corner + n_cols * (r + 1) + tx + 1];
    if (tx == 0)
        s_score[0][0] = score[corner];
    s_score[0][tx + 1] = score[corner + tx + 1];              // the row above the tile
    s_score[tx + 1][0] = score[corner + n_cols * (tx + 1)];   // the column left of it
    __syncthreads();

    for (int d = 0; d < TILE; ++d) {  // anti-diagonals through the tile's upper-left triangle
        if (tx <= d) {
            int x = tx + 1, y = d - tx + 1;
            s_score[y][x] = best_of(s_score[y - 1][x - 1] + s_ref[y - 1][x - 1], s_score[y][x - 1],
                                    s_score[y - 1][x], penalty);
        }
        __syncthreads();
    }
    for (int d = TILE - 2; d >= 0; --d) {  // ... and through its lower-right triangle
        if (tx <= d) {
            int x = tx + TILE - d, y = TILE - tx;
            s_score[y][x] = best_of(s_score[y - 1][x - 1] + s_ref[y - 1][x - 1], s_score[y][x - 1],
                                    s_score[y - 1][x], penalty);
        }
        __syncthreads();
    }
    for (int r = 0; r < TILE; ++r)
        score[corner + n_cols * (r + 1) + tx + 1] = s_score[r + 1][tx + 1];
}

// Anti-diagonal `diagonal` (1-based) of the upper-left half: its `diagonal` tiles, CTA b on tile
// row diagonal - 1 - b, column b.
extern "C" __global__ void nw_upper(int* __restrict__ score, const int* __restrict__ ref, int n_cols,
                                    int penalty, int diagonal)
{
    nw_tile(score, ref, n_cols, penalty, diagonal - 1 - blockIdx.x, blockIdx.x);
}

// The lower-right half: the anti-diagonal of `diagonal` tiles, CTA b on tile row n_tiles - 1 - b,
// column b + n_tiles - diagonal.
extern "C" __global__ void nw_lower(int* __restrict__ score, const int* __restrict__ ref, int n_cols,
                                    int penalty, int diagonal, int n_tiles)
{
    nw_tile(score, ref, n_cols, penalty, n_tiles - 1 - blockIdx.x, blockIdx.x + n_tiles - diagonal);
}
