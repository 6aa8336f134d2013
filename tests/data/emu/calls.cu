__device__ __noinline__ int sq(int x, float *p) { if (x > 3) return x*x; *p = 1.0f; return x+1; }
__device__ __noinline__ void st2(int *p, int v) { p[0] = v; }
extern "C" __global__ void k(int *out, float *f) {
  __shared__ int s[64];
  int t = threadIdx.x;
  s[t] = sq(t, f+t);
  __syncthreads();
  st2(out + t, s[63 - t] + __shfl_down_sync(0xffffffff, t, 1));
}
