#include <cstdio>
typedef int (*op_t)(int);
__device__ int inc(int x){return x+1;}
__device__ int dbl(int x){return 2*x;}
__device__ op_t ops[2] = {inc, dbl};
struct Base { __device__ virtual int f(int x){return x;} };
struct Der : Base { __device__ int f(int x) override {return x*3;} };
__global__ void h(int *a, cudaTextureObject_t tex){
  int i = threadIdx.x;
  unsigned r;
  asm volatile("{ .reg .pred p; setp.ne.u32 p, %1, 0; selp.u32 %0, 1, 0, p; }" : "=r"(r) : "r"(i));
  a[i] = ops[i&1](a[i]) + r + (int)tex1Dfetch<float>(tex, i);
  Der d; Base *b = &d; if (i==3) a[i] = b->f(a[i]);
  if (i == 0) printf("hello %d\n", a[0]);
}
