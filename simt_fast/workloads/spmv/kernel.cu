// Sparse matrix-vector product y = A x, CSR, one thread per row (the "CSR scalar" kernel of
// Bell & Garland, SC 2009, and of SHOC's SpMV), on one rank's block of a row-distributed matrix
// as in HPCG: columns below n_local are owned and read x directly; the others are halo columns,
// whose values arrived from neighbouring ranks into x_halo, in receive order, found through
// halo_slot.
//
// Row lengths are skewed, so a warp's inner loop runs as long as its longest row, and in each
// iteration the local/halo test splits the lanes: one side waits on one load (x[c]), the
// other on two dependent loads (halo_slot, then x_halo).  The two partial sums are kept apart
// (the local part can start before the halo exchange ends) and added at the end.
//
// Products and sums are explicitly rounded (no fma contraction), so the numpy reference, which
// accumulates in the same order, matches bit for bit.
extern "C" __global__ void spmv_csr(const int* __restrict__ row_ptr,
                                    const int* __restrict__ col,
                                    const float* __restrict__ val,
                                    const float* __restrict__ x,
                                    const int* __restrict__ halo_slot,
                                    const float* __restrict__ x_halo,
                                    int n_rows, int n_local,
                                    float* __restrict__ y)
{
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= n_rows)
        return;
    float local = 0.0f;
    float halo = 0.0f;
    int end = row_ptr[row + 1];
    for (int e = row_ptr[row]; e < end; ++e) {
        int c = col[e];
        if (c < n_local)
            local = __fadd_rn(local, __fmul_rn(val[e], x[c]));
        else
            halo = __fadd_rn(halo, __fmul_rn(val[e], x_halo[halo_slot[c - n_local]]));
    }
    y[row] = __fadd_rn(local, halo);
}
