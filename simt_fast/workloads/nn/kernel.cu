// Convolutional neural-network layer with ONE-THREAD blocks (Jin 2012 §5.3, NN).
//
// The thesis' NN benchmark recognises handwritten digits with kernels launched as blocks of a
// single thread, which leaves 31 of 32 warp lanes empty: the case that hybrid warp size and
// warp formation address.  Here each CTA (block = 1 thread) computes one output neuron of a
// LeNet-style sparse convolution layer: 6 input maps of 13x13 -> 16 output maps of 5x5, 5x5
// kernels with stride 2.  The sparse input-map connection table lives in constant memory and
// decides which input maps a neuron sums over (3, 4 or 6 of them).
#define IN_MAPS 6
#define OUT_MAPS 16
#define IN_W 13
#define OUT_W 5
#define KW 5
#define STRIDE 2

__constant__ unsigned char connection[OUT_MAPS][IN_MAPS] = {
    {1, 1, 1, 0, 0, 0},
    {0, 1, 1, 1, 0, 0},
    {0, 0, 1, 1, 1, 0},
    {0, 0, 0, 1, 1, 1},
    {1, 0, 0, 0, 1, 1},
    {1, 1, 0, 0, 0, 1},
    {1, 1, 1, 1, 0, 0},
    {0, 1, 1, 1, 1, 0},
    {0, 0, 1, 1, 1, 1},
    {1, 0, 0, 1, 1, 1},
    {1, 1, 0, 0, 1, 1},
    {1, 1, 1, 0, 0, 1},
    {1, 1, 0, 1, 1, 0},
    {0, 1, 1, 0, 1, 1},
    {1, 0, 1, 1, 0, 1},
    {1, 1, 1, 1, 1, 1},
};

// blockIdx.x = output pixel (oy * OUT_W + ox), blockIdx.y = output map, blockIdx.z = sample.
extern "C" __global__ void nn_conv_layer(const float* __restrict__ input,    // [sample][IN_MAPS][IN_W][IN_W]
                                         const float* __restrict__ weights,  // [OUT_MAPS][IN_MAPS][KW][KW]
                                         const float* __restrict__ bias,     // [OUT_MAPS]
                                         float* __restrict__ output)         // [sample][OUT_MAPS][OUT_W][OUT_W]
{
    int pixel = blockIdx.x, o = blockIdx.y, sample = blockIdx.z;
    int oy = pixel / OUT_W, ox = pixel % OUT_W;
    const float* in = input + sample * IN_MAPS * IN_W * IN_W;
    float acc = bias[o];
    for (int m = 0; m < IN_MAPS; ++m) {
        if (!connection[o][m])
            continue;
        const float* w = weights + (o * IN_MAPS + m) * KW * KW;
        const float* p = in + m * IN_W * IN_W + (STRIDE * oy) * IN_W + STRIDE * ox;
        for (int ky = 0; ky < KW; ++ky)
            for (int kx = 0; kx < KW; ++kx)
                acc += w[ky * KW + kx] * p[ky * IN_W + kx];
    }
    // LeCun's scaled hyperbolic tangent squashing function.
    output[((sample * OUT_MAPS + o) * OUT_W + oy) * OUT_W + ox] = 1.7159f * tanhf(0.66666667f * acc);
}
