// Seed 004 Fig. 1(a): each thread convolves flen samples with flen coefficients.
// Compiled with: nvcc -ptx -arch=compute_75 -O3 fir.cu -o fir.ptx
__global__ void fir(const float* samples, const float* coeffs, int flen, float* results)
{
    int idx = threadIdx.x;
    float result = 0;
    for (int i = 0; i < flen; i++)
        result += coeffs[i] * samples[idx + i];
    results[idx] = result;
}
