// Whitted-style ray tracer: spheres over a checkered floor, point light with shadows,
// reflections up to a bounded depth (Jin 2012 §5.3, RAY: "up to 5 levels of reflections and
// shadows", one thread per pixel).
//
// Divergence comes from what each pixel's ray hits: the sky (loop exits at once), a sphere or
// the floor (different shading paths), shadowed or lit (the shadow loop exits at the first
// occluder), and how many reflections keep enough weight to continue.
//
// Every float operation is an explicitly rounded intrinsic (__fmul_rn, __fadd_rn, ...): nvcc
// may not contract them into fma, so the numpy reference can reproduce each hit/miss decision
// bit for bit instead of disagreeing on grazing rays.
#define MAX_DEPTH 5
#define SPHERE_STRIDE 8  // cx, cy, cz, radius, albedo, reflectivity, unused, unused
#define EPS 1e-3f
#define FAR 1000.0f
#define AMBIENT 0.1f
#define MIN_WEIGHT 0.02f

struct vec3 {
    float x, y, z;
};

__device__ __forceinline__ vec3 make(float x, float y, float z) { vec3 v = {x, y, z}; return v; }
__device__ __forceinline__ vec3 add(vec3 a, vec3 b) { return make(__fadd_rn(a.x, b.x), __fadd_rn(a.y, b.y), __fadd_rn(a.z, b.z)); }
__device__ __forceinline__ vec3 sub(vec3 a, vec3 b) { return make(__fsub_rn(a.x, b.x), __fsub_rn(a.y, b.y), __fsub_rn(a.z, b.z)); }
__device__ __forceinline__ vec3 scale(vec3 a, float s) { return make(__fmul_rn(a.x, s), __fmul_rn(a.y, s), __fmul_rn(a.z, s)); }
__device__ __forceinline__ float dot(vec3 a, vec3 b)
{
    return __fadd_rn(__fadd_rn(__fmul_rn(a.x, b.x), __fmul_rn(a.y, b.y)), __fmul_rn(a.z, b.z));
}
__device__ __forceinline__ vec3 divide(vec3 a, float s) { return make(__fdiv_rn(a.x, s), __fdiv_rn(a.y, s), __fdiv_rn(a.z, s)); }
__device__ __forceinline__ vec3 normalize(vec3 a) { return divide(a, __fsqrt_rn(dot(a, a))); }

// Distance along the unit ray (o, d) to sphere k, or FAR when the ray misses it.
__device__ __forceinline__ float hit_sphere(const float* __restrict__ s, vec3 o, vec3 d)
{
    vec3 oc = sub(o, make(s[0], s[1], s[2]));
    float b = dot(oc, d);
    float c = __fsub_rn(dot(oc, oc), __fmul_rn(s[3], s[3]));
    float disc = __fsub_rn(__fmul_rn(b, b), c);
    if (disc <= 0.0f)
        return FAR;
    float root = __fsqrt_rn(disc);
    float t = __fsub_rn(-b, root);
    if (t <= EPS)  // the origin is inside the sphere (or on it): take the far intersection
        t = __fadd_rn(-b, root);
    return t > EPS ? t : FAR;
}

extern "C" __global__ void raytrace(const float* __restrict__ spheres, int n_spheres,
                                    float light_x, float light_y, float light_z,
                                    int width, int height,
                                    float* __restrict__ image, int* __restrict__ bounces)
{
    int px = blockIdx.x * blockDim.x + threadIdx.x;
    int py = blockIdx.y * blockDim.y + threadIdx.y;
    if (px >= width || py >= height)
        return;
    float aspect = __fdiv_rn((float)width, (float)height);
    float u = __fmul_rn(__fsub_rn(__fdiv_rn(__fmul_rn(2.0f, __fadd_rn((float)px, 0.5f)), (float)width), 1.0f), aspect);
    float v = __fsub_rn(1.0f, __fdiv_rn(__fmul_rn(2.0f, __fadd_rn((float)py, 0.5f)), (float)height));
    vec3 origin = make(0.0f, 1.5f, -6.0f);
    vec3 dir = normalize(make(u, v, 1.5f));
    vec3 light = make(light_x, light_y, light_z);

    float color = 0.0f, weight = 1.0f;
    int n_bounces = 0;
    for (int depth = 0; depth < MAX_DEPTH; ++depth) {
        float t_best = FAR;
        int hit = -1;
        for (int k = 0; k < n_spheres; ++k) {
            float t = hit_sphere(spheres + k * SPHERE_STRIDE, origin, dir);
            if (t < t_best) {
                t_best = t;
                hit = k;
            }
        }
        if (dir.y < -1e-6f) {  // the floor y = 0 only faces rays that go down
            float t = __fdiv_rn(-origin.y, dir.y);
            if (t > EPS && t < t_best) {
                t_best = t;
                hit = n_spheres;
            }
        }
        if (hit < 0) {  // escaped to the sky: a vertical gradient ends the path
            float sky = __fadd_rn(0.3f, __fmul_rn(0.5f, fmaxf(dir.y, 0.0f)));
            color = __fadd_rn(color, __fmul_rn(weight, sky));
            break;
        }
        ++n_bounces;
        vec3 p = add(origin, scale(dir, t_best));
        vec3 normal;
        float albedo, reflectivity;
        if (hit == n_spheres) {
            normal = make(0.0f, 1.0f, 0.0f);
            int cx = (int)floorf(p.x), cz = (int)floorf(p.z);
            albedo = ((cx + cz) & 1) ? 0.9f : 0.25f;
            reflectivity = 0.35f;
        } else {
            const float* s = spheres + hit * SPHERE_STRIDE;
            normal = normalize(sub(p, make(s[0], s[1], s[2])));
            albedo = s[4];
            reflectivity = s[5];
        }
        vec3 to_light = sub(light, p);
        float light_dist = __fsqrt_rn(dot(to_light, to_light));
        vec3 l = divide(to_light, light_dist);
        vec3 p_off = add(p, scale(normal, EPS));
        float lambert = dot(normal, l);
        float lit = AMBIENT;
        if (lambert > 0.0f) {
            bool shadowed = false;
            for (int k = 0; k < n_spheres; ++k) {  // any occluder ends the shadow ray
                if (hit_sphere(spheres + k * SPHERE_STRIDE, p_off, l) < light_dist) {
                    shadowed = true;
                    break;
                }
            }
            if (!shadowed)
                lit = __fadd_rn(lit, lambert);
        }
        color = __fadd_rn(color, __fmul_rn(__fmul_rn(__fmul_rn(weight, __fsub_rn(1.0f, reflectivity)), albedo), lit));
        weight = __fmul_rn(weight, reflectivity);
        if (weight < MIN_WEIGHT)
            break;
        dir = normalize(sub(dir, scale(normal, __fmul_rn(2.0f, dot(dir, normal)))));
        origin = p_off;
    }
    image[py * width + px] = color;
    bounces[py * width + px] = n_bounces;
}
