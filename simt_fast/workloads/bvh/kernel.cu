// BVH ray traversal, one thread per ray (the stack-based traversal of Aila & Laine, "Understanding
// the efficiency of ray traversal on GPUs", HPG 2009, over a binary BVH of spheres).
//
// Each loop iteration handles one node.  An inner node loads the bounding boxes of both children
// and slab-tests them: it descends into the nearer child that is hit and pushes the farther one
// on a per-thread stack (local memory).  A leaf loads its primitive indices and then the spheres
// and intersects them.  Neighbouring rays of a warp are incoherent (diffuse-like random rays),
// so in most iterations some lanes are at inner nodes and others at leaves: the two sides of
// the inner/leaf branch both wait on global loads (child boxes vs primitive indices and sphere
// data), which is the latency a multi-path warp can overlap.
//
// Every float operation is an explicitly rounded intrinsic (no fma contraction), so the numpy
// reference reproduces each sphere hit bit for bit.  The boxes are built slightly larger than
// their spheres, so a box test never rejects a sphere the ray hits.
#define FAR 1.0e30f
#define EPS 1e-3f
#define STACK 64

struct vec3 {
    float x, y, z;
};

__device__ __forceinline__ float dot3(float ax, float ay, float az, float bx, float by, float bz)
{
    return __fadd_rn(__fadd_rn(__fmul_rn(ax, bx), __fmul_rn(ay, by)), __fmul_rn(az, bz));
}

// Entry distance of the ray into box b (6 floats: min xyz, max xyz), or FAR if the ray misses
// it or enters it beyond best.
__device__ __forceinline__ float slab(const float* __restrict__ b, vec3 o, vec3 inv, float best)
{
    float tx0 = __fmul_rn(__fsub_rn(b[0], o.x), inv.x), tx1 = __fmul_rn(__fsub_rn(b[3], o.x), inv.x);
    float ty0 = __fmul_rn(__fsub_rn(b[1], o.y), inv.y), ty1 = __fmul_rn(__fsub_rn(b[4], o.y), inv.y);
    float tz0 = __fmul_rn(__fsub_rn(b[2], o.z), inv.z), tz1 = __fmul_rn(__fsub_rn(b[5], o.z), inv.z);
    float tmin = fmaxf(fmaxf(fminf(tx0, tx1), fminf(ty0, ty1)), fmaxf(fminf(tz0, tz1), 0.0f));
    float tmax = fminf(fminf(fmaxf(tx0, tx1), fmaxf(ty0, ty1)), fmaxf(tz0, tz1));
    return (tmin <= tmax && tmin <= best) ? tmin : FAR;
}

// Distance along the unit ray to sphere s (cx, cy, cz, r), or FAR if it misses.
__device__ __forceinline__ float hit_sphere(const float* __restrict__ s, vec3 o, vec3 d)
{
    float ox = __fsub_rn(o.x, s[0]), oy = __fsub_rn(o.y, s[1]), oz = __fsub_rn(o.z, s[2]);
    float b = dot3(ox, oy, oz, d.x, d.y, d.z);
    float c = __fsub_rn(dot3(ox, oy, oz, ox, oy, oz), __fmul_rn(s[3], s[3]));
    float disc = __fsub_rn(__fmul_rn(b, b), c);
    if (disc <= 0.0f)
        return FAR;
    float root = __fsqrt_rn(disc);
    float t = __fsub_rn(-b, root);
    if (t <= EPS)  // the origin is inside the sphere: take the far intersection
        t = __fadd_rn(-b, root);
    return t > EPS ? t : FAR;
}

extern "C" __global__ void bvh_trace(const float* __restrict__ node_box,   // [n_nodes][6]
                                     const int* __restrict__ node_info,    // [n_nodes][2]: first, count
                                     const int* __restrict__ prim_idx,     // leaf primitive lists
                                     const float* __restrict__ spheres,    // [n_spheres][4]
                                     const float* __restrict__ rays,       // [n_rays][6]: origin, unit direction
                                     int n_rays,
                                     float* __restrict__ hit_t,
                                     int* __restrict__ hit_prim)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n_rays)
        return;
    const float* r = rays + 6 * i;
    vec3 o = {r[0], r[1], r[2]};
    vec3 d = {r[3], r[4], r[5]};
    vec3 inv = {__fdiv_rn(1.0f, d.x), __fdiv_rn(1.0f, d.y), __fdiv_rn(1.0f, d.z)};

    float best = FAR;
    int best_prim = -1;
    int stack[STACK];
    int sp = 0;
    int node = slab(node_box, o, inv, FAR) < FAR ? 0 : -1;  // the root, if the ray hits the scene
    while (node >= 0) {
        int first = node_info[2 * node];
        int count = node_info[2 * node + 1];
        if (count == 0) {
            // Inner node: children first and first + 1.
            float t0 = slab(node_box + 6 * first, o, inv, best);
            float t1 = slab(node_box + 6 * (first + 1), o, inv, best);
            if (t0 < FAR && t1 < FAR) {
                bool left_first = t0 <= t1;
                stack[sp++] = left_first ? first + 1 : first;
                node = left_first ? first : first + 1;
                continue;
            }
            if (t0 < FAR || t1 < FAR) {
                node = t0 < FAR ? first : first + 1;
                continue;
            }
        } else {
            // Leaf: primitives prim_idx[first .. first + count).
            for (int k = first; k < first + count; ++k) {
                int p = prim_idx[k];
                float t = hit_sphere(spheres + 4 * p, o, d);
                if (t < best || (t == best && t < FAR && p < best_prim)) {
                    best = t;
                    best_prim = p;
                }
            }
        }
        node = sp > 0 ? stack[--sp] : -1;
    }
    hit_t[i] = best;
    hit_prim[i] = best_prim;
}
