// do-while loop with a data-dependent break (ElTantawy et al. 2014: the opportunistic early reconvergence
// example).  Shape, with the seed's block names:
//
//     do {                                  // BBA: one xorshift step
//         if (cond1) { BBB; break; }        // the value hit this thread's target
//         else       { BBC; }
//     } while (cond2);                      // per-thread iteration budget
//     BBD
//
// Lanes leave through the break at different iterations, others run out of budget, so splits
// of one warp reach the same blocks at different times: the case where multi-path IPDOM with
// opportunistic early reconvergence merges splits before the loop exit.
extern "C" __global__ void earlyexit(const unsigned* __restrict__ seeds,
                                     const unsigned* __restrict__ targets,
                                     const int* __restrict__ budget,
                                     unsigned target_mask, int n,
                                     int* __restrict__ found_at, unsigned* __restrict__ checksum)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n)
        return;
    unsigned x = seeds[t], target = targets[t], acc = 0;
    int limit = budget[t], it = 0, found = -1;
    do {
        // BBA
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        ++it;
        if ((x & target_mask) == target) {
            // BBB: deliberately longer than BBC, so a split that loops through BBC can reach
            // BBB again while an earlier split is still in it (ElTantawy et al. 2014's early-reconvergence
            // opportunity: two splits of one warp in the same block).
            unsigned h = x;
#pragma unroll
            for (int r = 0; r < 6; ++r) {
                h ^= h >> 15;
                h *= 0x2c1b3c6du;
                h ^= h >> 12;
                h *= 0x297a2d39u;
            }
            found = it;
            acc += h;
            break;
        } else {
            // BBC
            acc = acc * 33u + (x & 0xffu);
        }
    } while (it < limit);
    // BBD
    found_at[t] = found;
    checksum[t] = acc ^ x;
}
