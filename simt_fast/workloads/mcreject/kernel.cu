// Delayed-rejection Metropolis-Hastings (Tierney & Mira, Stat. Med. 1999), one independent
// Markov chain per thread, on a tabulated target over a periodic 2-D grid of states (the
// many-chains-in-parallel pattern of GPU Monte Carlo codes).
//
// Each step proposes a short move y1 (uniform over the offsets of half-width r1) and accepts it with
// probability min(1, w[y1] / w[x]).  Accepted: the chain moves and reads the new state's
// observable.  Rejected: instead of staying, the chain makes a second, longer proposal y2
// (radius r2) and accepts it with the delayed-rejection probability, which for symmetric
// proposals is min(1, (w[y2] - w[y1]) / (w[x] - w[y1])) when y1 is a possible first proposal
// from y2 and w[y2] > w[y1], and 0 otherwise.  So both sides of the accept/reject branch read
// global tables: the accept side the observable, the reject side the target weight at y2 (and
// the observable if the second try succeeds).
//
// Every accepted move is also tallied by the observable's bin of the state moved to (a global
// histogram, as a regional adaptive sampler keeps per-region move statistics): the accept side's
// load is an address the side itself needs.
//
// The random words are generated in bulk beforehand (as with cuRAND's host API): four per chain
// and step, read as one 16-byte vector.  Every acceptance test is an exact 64-bit integer comparison (u / 2^32 < a / b  <=>  u * b < a * 2^32), so the numpy
// reference makes the same decisions.

// One axis of a proposal: uniform over the 2r non-zero displacements -r..-1, 1..r (r a power
// of two, so the low bits of a random word pick one exactly uniformly and the proposal is
// symmetric, as Metropolis-Hastings needs).
__device__ __forceinline__ int step(unsigned bits, int r)
{
    int b = (int)(bits & (unsigned)(2 * r - 1));
    return b < r ? b - r : b - r + 1;
}

// State s moved by a random displacement of half-width r on each axis, wrapping around.
__device__ __forceinline__ int move(int s, unsigned word, int r, int log2_side)
{
    int mask = (1 << log2_side) - 1;
    int x = (s + step(word, r)) & mask;
    int y = ((s >> log2_side) + step(word >> 16, r)) & mask;
    return (y << log2_side) | x;
}

// Could a proposal of half-width r from a have produced b (both torus offsets in -r..-1, 1..r)?
__device__ __forceinline__ bool reachable(int a, int b, int r, int log2_side)
{
    int side = 1 << log2_side;
    int dx = (b - a) & (side - 1), dy = ((b >> log2_side) - (a >> log2_side)) & (side - 1);
    dx = min(dx, side - dx);
    dy = min(dy, side - dy);
    return dx >= 1 && dx <= r && dy >= 1 && dy <= r;
}

extern "C" __global__ void dr_metropolis(const unsigned* __restrict__ weight,
                                         const int* __restrict__ observable,
                                         const int* __restrict__ start,
                                         const uint4* __restrict__ random,  // [n_steps][n_chains]
                                         int n_chains, int n_steps, int log2_side, int r1, int r2,
                                         int* __restrict__ final_state,
                                         int* __restrict__ obs_sum,
                                         int* __restrict__ accepted,
                                         int* __restrict__ moves_into)
{
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= n_chains)
        return;
    int x = start[c];
    unsigned wx = weight[x];
    int obs = observable[x];
    int sum = 0, first = 0, second = 0;
    for (int t = 0; t < n_steps; ++t) {
        uint4 words = random[(size_t)t * n_chains + c];  // one 16-byte load: all four words
        unsigned u0 = words.x, u1 = words.y, u2 = words.z, u3 = words.w;
        int y1 = move(x, u0, r1, log2_side);
        unsigned w1 = weight[y1];
        if ((unsigned long long)u1 * wx < ((unsigned long long)w1 << 32)) {
            x = y1;
            wx = w1;
            obs = observable[y1];
            atomicAdd(&moves_into[obs], 1);
            ++first;
        } else {
            int y2 = move(x, u2, r2, log2_side);
            unsigned w2 = weight[y2];
            if (w2 > w1 && reachable(y2, y1, r1, log2_side)
                && (unsigned long long)u3 * (wx - w1) < ((unsigned long long)(w2 - w1) << 32)) {
                x = y2;
                wx = w2;
                obs = observable[y2];
                atomicAdd(&moves_into[obs], 1);
                ++second;
            }
        }
        sum += obs;
    }
    final_state[c] = x;
    obs_sum[c] = sum;
    accepted[2 * c] = first;
    accepted[2 * c + 1] = second;
}
