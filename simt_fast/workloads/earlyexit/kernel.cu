// do-while loop with a data-dependent break (seed 001: the opportunistic early reconvergence
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
            // BBB
            found = it;
            acc += x >> 16;
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
