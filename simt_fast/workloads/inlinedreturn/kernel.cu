// A device function with an early return, inlined into a loop (Wu et al. 2012 Fig. 4).
//
// find_first() scans a row for a key and returns from inside its loop (loop2) as soon as it
// finds it.  Once inlined into the caller's loop (loop1) that return becomes a second exit of
// loop2 that jumps past the "not found" code: an interacting out-edge, so the inlined CFG is
// unstructured even though both functions are structured on their own.
__device__ __forceinline__ int find_first(const int* __restrict__ row, int len, int key)
{
    for (int j = 0; j < len; ++j) {  // loop2
        if (row[j] == key)
            return j;  // early return: the second exit of loop2 after inlining
    }
    return -1;
}

extern "C" __global__ void inlinedreturn(const int* __restrict__ rows,      // [n][width]
                                         const int* __restrict__ row_len,   // [n], <= width
                                         const int* __restrict__ keys,      // [n][n_keys]
                                         int n, int width, int n_keys,
                                         int* __restrict__ position,        // [n][n_keys]
                                         int* __restrict__ score)           // [n]
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n)
        return;
    const int* row = rows + (size_t)t * width;
    int len = row_len[t];
    int s = 0;
    for (int k = 0; k < n_keys; ++k) {  // loop1
        int p = find_first(row, len, keys[t * n_keys + k]);
        position[t * n_keys + k] = p;
        if (p >= 0)
            s += p + 1;
        else
            s -= 3;
    }
    score[t] = s;
}
