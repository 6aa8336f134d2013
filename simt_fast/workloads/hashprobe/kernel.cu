// Hash-join probe over a linear-probing hash table, one thread per probe-side row (the probe
// phase of a GPU hash join, e.g. the no-partitioning joins of He et al., SIGMOD 2008, with the
// open-addressing table of CUDPP/WarpCore-style hash maps).
//
// The build side has duplicate keys: a table slot holds a distinct key and the first build row
// with that key, and rows with equal keys are chained through build_next.  A probe walks the
// slots from hash(key) until it finds its key (hit) or an empty slot (miss):
//   hit  -> walk the key's chain of build rows and sum their payloads (dependent loads);
//   miss -> left outer join: the row's group default (probe_group, then group_default).
// At ~70% load probe lengths vary, so in one warp some lanes walk chains, some load their
// group default and others are still probing: three paths that all wait on global memory.
#define EMPTY 0xffffffffu

__device__ __forceinline__ unsigned mix32(unsigned h)  // MurmurHash3's 32-bit finaliser
{
    h ^= h >> 16;
    h *= 0x85ebca6bu;
    h ^= h >> 13;
    h *= 0xc2b2ae35u;
    h ^= h >> 16;
    return h;
}

extern "C" __global__ void hash_probe(const unsigned* __restrict__ table_keys,
                                      const int* __restrict__ table_head,
                                      const int* __restrict__ build_next,
                                      const int* __restrict__ build_val,
                                      const unsigned* __restrict__ probe_keys,
                                      const int* __restrict__ probe_group,
                                      const int* __restrict__ group_default,
                                      int n_probe, unsigned slot_mask,
                                      int* __restrict__ out_sum,
                                      int* __restrict__ out_count,
                                      int* __restrict__ out_probes)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n_probe)
        return;
    unsigned key = probe_keys[i];
    unsigned slot = mix32(key) & slot_mask;
    int probes = 1;
    int sum, count;
    for (;;) {
        unsigned k = table_keys[slot];
        if (k == key) {
            sum = 0;
            count = 0;
            for (int r = table_head[slot]; r >= 0; r = build_next[r]) {
                sum += build_val[r];
                ++count;
            }
            break;
        }
        if (k == EMPTY) {
            sum = group_default[probe_group[i]];
            count = 0;
            break;
        }
        slot = (slot + 1) & slot_mask;
        ++probes;
    }
    out_sum[i] = sum;
    out_count[i] = count;
    out_probes[i] = probes;
}
