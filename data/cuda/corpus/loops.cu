// Parser corpus: counted, data-dependent and nested loops; break/continue; early return.
extern "C" __global__ void nested_loops(float *out, const float *in, int n, int m)
{
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid >= n) return;
    float acc = 0.0f;
    for (int i = 0; i < m; ++i) {
        if (in[(tid + i) % n] < 0.0f) continue;
        for (int j = 0; j <= i; ++j) {
            acc += in[(tid * j + i) % n];
            if (acc > 1e6f) break;
        }
    }
    out[tid] = acc;
}

extern "C" __global__ void collatz(unsigned *steps, const unsigned *start, int n)
{
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid >= n) return;
    unsigned x = start[tid], k = 0;
    while (x != 1u) {
        x = (x & 1u) ? 3u * x + 1u : x >> 1;
        if (++k > 1000u) { steps[tid] = 0xffffffffu; return; }
    }
    steps[tid] = k;
}

extern "C" __global__ void do_while_search(int *found, const int *keys, int n, int key)
{
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    int lo = 0, hi = n - 1, pos = -1;
    do {
        int mid = (lo + hi) / 2;
        int v = keys[mid];
        if (v == key + tid) { pos = mid; break; }
        if (v < key + tid) lo = mid + 1; else hi = mid - 1;
    } while (lo <= hi);
    found[tid] = pos;
}
