// One training step of a two-layer perceptron with Rodinia backprop's kernels and launches (Che et
// al. 2009).
//
// The input layer has n_in units plus a bias unit (index 0), the hidden layer HIDDEN units plus a
// bias (index 0); weights[i][j] (row-major, HIDDEN + 1 columns) joins input unit i to hidden unit
// j.  backprop_forward: CTA b of HEIGHT x HIDDEN threads takes input units 16b+1 .. 16b+16; thread
// (tx, ty) multiplies weight[16b+ty+1][tx+1] by its input in shared memory, and a tree over ty
// (log2 HEIGHT halving steps, `ty % step == 0`) sums each column; thread (0, ty) writes hidden unit
// ty's partial sum of the CTA.  The host adds the partial sums, squashes, runs the output layer
// and the error terms, and backprop_adjust moves every weight by ETA * delta * input plus MOMENTUM
// times its previous move.
#define HEIGHT 16
#define HIDDEN 16
#define ETA 0.3f
#define MOMENTUM 0.3f

extern "C" __global__ void backprop_forward(const float* __restrict__ input, const float* __restrict__ weights,
                                            float* __restrict__ partial_sums)
{
    __shared__ float s_input[HEIGHT];
    __shared__ float s_product[HEIGHT][HIDDEN];
    int tx = threadIdx.x, ty = threadIdx.y, by = blockIdx.y;
    int unit = HEIGHT * by + ty + 1;  // input unit (0 is the bias)

    if (tx == 0)
        s_input[ty] = input[unit];
    __syncthreads();
    s_product[ty][tx] = weights[(HIDDEN + 1) * unit + tx + 1];
    __syncthreads();
    s_product[ty][tx] *= s_input[ty];
    __syncthreads();
    for (int step = 2; step <= HEIGHT; step *= 2) {
        if (ty % step == 0)
            s_product[ty][tx] += s_product[ty + step / 2][tx];
        __syncthreads();
    }
    if (tx == 0)
        partial_sums[by * HIDDEN + ty] = s_product[0][ty];
}

extern "C" __global__ void backprop_adjust(const float* __restrict__ delta, const float* __restrict__ input,
                                           float* __restrict__ weights, float* __restrict__ prev_change)
{
    int tx = threadIdx.x, ty = threadIdx.y, by = blockIdx.y;
    int unit = HEIGHT * by + ty + 1;
    int index = (HIDDEN + 1) * unit + tx + 1;
    float change = ETA * delta[tx + 1] * input[unit] + MOMENTUM * prev_change[index];
    weights[index] += change;
    prev_change[index] = change;
    if (ty == 0 && by == 0) {  // the bias unit's weights (its input is 1)
        float bias_change = ETA * delta[tx + 1] + MOMENTUM * prev_change[tx + 1];
        weights[tx + 1] += bias_change;
        prev_change[tx + 1] = bias_change;
    }
}
