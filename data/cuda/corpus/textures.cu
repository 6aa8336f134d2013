// Emulator corpus: texture objects (tex.1d/2d/3d with integer and float coordinates, integer and
// float element types, one and four channels). Each thread fetches at coordinates it reads from
// a buffer, so the tests choose every coordinate (out of range, negative, fractional).
extern "C" __global__ void fetch1d(cudaTextureObject_t t, const int *idx, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex1Dfetch<float>(t, idx[i]);
}

extern "C" __global__ void sample1d(cudaTextureObject_t t, const float *x, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex1D<float>(t, x[i]);
}

extern "C" __global__ void sample1d_short(cudaTextureObject_t t, const float *x, int *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex1D<short>(t, x[i]);
}

extern "C" __global__ void sample2d_int(cudaTextureObject_t t, const float2 *xy, int *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex2D<int>(t, xy[i].x, xy[i].y);
}

extern "C" __global__ void sample2d_uchar(cudaTextureObject_t t, const float2 *xy, unsigned *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex2D<unsigned char>(t, xy[i].x, xy[i].y);
}

extern "C" __global__ void sample2d_float4(cudaTextureObject_t t, const float2 *xy, float4 *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex2D<float4>(t, xy[i].x, xy[i].y);
}

extern "C" __global__ void sample3d(cudaTextureObject_t t, const float4 *xyz, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex3D<float>(t, xyz[i].x, xyz[i].y, xyz[i].z);
}
