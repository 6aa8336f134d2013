// Speckle-reducing anisotropic diffusion (SRAD, Yu & Acton 2002) with the kernels and launches of
// Rodinia srad_v1 (Che et al. 2009; Wu et al. 2012 measure it).
//
// The image is Nr x Nc, column-major (element ei = row + Nr * col), one thread per pixel in
// CTAs of BLOCK threads.  The host program: srad_extract (I -> exp(I / 255)); per iteration, the
// image's sum and sum of squares by srad_reduce, launched again on its own partial sums until one
// CTA is left (the host then derives the speckle scale q0^2), srad_coeff (directional derivatives
// and the diffusion coefficient, clamped to [0, 1]), srad_update (the divergence step); finally
// srad_compress (J -> 255 log J).  Neighbours at the image's edge are the pixel itself, through
// the host-built index arrays iN, iS (rows) and jW, jE (columns).
#define BLOCK 512

extern "C" __global__ void srad_extract(float* __restrict__ image, int ne)
{
    int ei = blockIdx.x * BLOCK + threadIdx.x;
    if (ei < ne)
        image[ei] = expf(image[ei] / 255.0f);
}

// Sums and sums of squares of n values (squares of `values` when `square_in`, else of the
// second input), one partial pair per CTA: the interleaved shared-memory tree of Rodinia's reduce.
extern "C" __global__ void srad_reduce(const float* __restrict__ sums_in, const float* __restrict__ sq_in,
                                       int n, int square_in, float* __restrict__ sums_out,
                                       float* __restrict__ sq_out)
{
    __shared__ float s_sum[BLOCK];
    __shared__ float s_sq[BLOCK];
    int tx = threadIdx.x;
    int ei = blockIdx.x * BLOCK + tx;
    float v = 0.0f, q = 0.0f;
    if (ei < n) {
        v = sums_in[ei];
        q = square_in ? v * v : sq_in[ei];
    }
    s_sum[tx] = v;
    s_sq[tx] = q;
    __syncthreads();
    for (int stride = 1; stride < BLOCK; stride *= 2) {
        if (tx % (2 * stride) == 0) {
            s_sum[tx] += s_sum[tx + stride];
            s_sq[tx] += s_sq[tx + stride];
        }
        __syncthreads();
    }
    if (tx == 0) {
        sums_out[blockIdx.x] = s_sum[0];
        sq_out[blockIdx.x] = s_sq[0];
    }
}

extern "C" __global__ void srad_coeff(const float* __restrict__ image, const int* __restrict__ i_n,
                                      const int* __restrict__ i_s, const int* __restrict__ j_w,
                                      const int* __restrict__ j_e, int nr, int ne, float q0sqr,
                                      float* __restrict__ d_n, float* __restrict__ d_s, float* __restrict__ d_w,
                                      float* __restrict__ d_e, float* __restrict__ coeff)
{
    int ei = blockIdx.x * BLOCK + threadIdx.x;
    if (ei >= ne)
        return;
    int row = ei % nr, col = ei / nr;
    float jc = image[ei];
    float dn = image[i_n[row] + nr * col] - jc;
    float ds = image[i_s[row] + nr * col] - jc;
    float dw = image[row + nr * j_w[col]] - jc;
    float de = image[row + nr * j_e[col]] - jc;
    float g2 = (dn * dn + ds * ds + dw * dw + de * de) / (jc * jc);  // normalised gradient magnitude
    float l = (dn + ds + dw + de) / jc;                              // normalised Laplacian
    float num = 0.5f * g2 - (1.0f / 16.0f) * (l * l);
    float den = 1.0f + 0.25f * l;
    float qsqr = num / (den * den);                                  // instantaneous coefficient of variation
    den = (qsqr - q0sqr) / (q0sqr * (1.0f + q0sqr));
    float c = 1.0f / (1.0f + den);
    if (c < 0.0f)
        c = 0.0f;
    else if (c > 1.0f)
        c = 1.0f;
    d_n[ei] = dn;
    d_s[ei] = ds;
    d_w[ei] = dw;
    d_e[ei] = de;
    coeff[ei] = c;
}

extern "C" __global__ void srad_update(float* __restrict__ image, const int* __restrict__ i_s,
                                       const int* __restrict__ j_e, int nr, int ne, float lambda,
                                       const float* __restrict__ d_n, const float* __restrict__ d_s,
                                       const float* __restrict__ d_w, const float* __restrict__ d_e,
                                       const float* __restrict__ coeff)
{
    int ei = blockIdx.x * BLOCK + threadIdx.x;
    if (ei >= ne)
        return;
    int row = ei % nr, col = ei / nr;
    float c_here = coeff[ei];  // north and west use the pixel's own coefficient
    float c_south = coeff[i_s[row] + nr * col];
    float c_east = coeff[row + nr * j_e[col]];
    float div = c_here * d_n[ei] + c_south * d_s[ei] + c_here * d_w[ei] + c_east * d_e[ei];
    image[ei] = image[ei] + 0.25f * lambda * div;
}

extern "C" __global__ void srad_compress(float* __restrict__ image, int ne)
{
    int ei = blockIdx.x * BLOCK + threadIdx.x;
    if (ei < ne)
        image[ei] = logf(image[ei]) * 255.0f;
}
