// One time step of the D3Q19 lattice-Boltzmann method (BGK collision, push streaming) with the
// kernel structure and host loop of Parboil lbm (Stratton et al. 2012; Lee et al. 2013 measure it).
//
// One thread per cell, a CTA per x row (grid: y, z).  Each of the 19 distribution fields is its own
// array (structure of arrays) with a margin before and after it, so that streaming from the
// domain's faces stays inside the allocation.  A cell reads its 19 values; an OBSTACLE cell bounces
// each one back to the neighbour it came from, any other cell relaxes them towards the equilibrium
// of its density and velocity (an ACCEL cell has its velocity imposed) and pushes value i to its
// neighbour in direction i.  The host launches one grid per time step and swaps the two grids.
#define OMEGA 1.95f
#define OBSTACLE 1
#define ACCEL 2

// direction ids: C N S E W T B NE NW SE SW NT NB ST SB ET EB WT WB
enum { C, N, S, E, W, T, B, NE, NW, SE, SW, NT, NB, ST, SB, ET, EB, WT, WB, Q };

__device__ __forceinline__ float equilibrium(float f, float weight_rho, float cu, float u2)
{
    return (1.0f - OMEGA) * f + OMEGA * weight_rho * (1.0f + cu * (4.5f * cu + 3.0f) - u2);
}

extern "C" __global__ void lbm_stream_collide(const float* __restrict__ src, float* __restrict__ dst,
                                              const int* __restrict__ flags, int nx, int ny, int nz, int margin)
{
    int x = threadIdx.x, y = blockIdx.x, z = blockIdx.y;
    long cell = x + (long)nx * (y + (long)ny * z);
    long field = (long)nx * ny * nz + 2 * margin;  // floats per direction
    long here = margin + cell;
    long row = nx, plane = (long)nx * ny;
    const float* s = src + here;
    float* d = dst + here;
#define SRC(i) s[(i) * field]
#define DST(i, dx, dy, dz) d[(i) * field + (dx) + (dy) * row + (dz) * plane]

    if (flags[cell] == OBSTACLE) {  // bounce back: what came in along i goes out along -i
        DST(C, 0, 0, 0) = SRC(C);
        DST(S, 0, -1, 0) = SRC(N);
        DST(N, 0, 1, 0) = SRC(S);
        DST(W, -1, 0, 0) = SRC(E);
        DST(E, 1, 0, 0) = SRC(W);
        DST(B, 0, 0, -1) = SRC(T);
        DST(T, 0, 0, 1) = SRC(B);
        DST(SW, -1, -1, 0) = SRC(NE);
        DST(SE, 1, -1, 0) = SRC(NW);
        DST(NW, -1, 1, 0) = SRC(SE);
        DST(NE, 1, 1, 0) = SRC(SW);
        DST(SB, 0, -1, -1) = SRC(NT);
        DST(ST, 0, -1, 1) = SRC(NB);
        DST(NB, 0, 1, -1) = SRC(ST);
        DST(NT, 0, 1, 1) = SRC(SB);
        DST(WB, -1, 0, -1) = SRC(ET);
        DST(WT, -1, 0, 1) = SRC(EB);
        DST(EB, 1, 0, -1) = SRC(WT);
        DST(ET, 1, 0, 1) = SRC(WB);
        return;
    }

    float fc = SRC(C), fn = SRC(N), fs = SRC(S), fe = SRC(E), fw = SRC(W), ft = SRC(T), fb = SRC(B);
    float fne = SRC(NE), fnw = SRC(NW), fse = SRC(SE), fsw = SRC(SW), fnt = SRC(NT), fnb = SRC(NB);
    float fst = SRC(ST), fsb = SRC(SB), fet = SRC(ET), feb = SRC(EB), fwt = SRC(WT), fwb = SRC(WB);
    float rho = fc + fn + fs + fe + fw + ft + fb + fne + fnw + fse + fsw + fnt + fnb + fst + fsb + fet + feb + fwt + fwb;
    float ux = (fe + fne + fse + fet + feb) - (fw + fnw + fsw + fwt + fwb);
    float uy = (fn + fne + fnw + fnt + fnb) - (fs + fse + fsw + fst + fsb);
    float uz = (ft + fnt + fst + fet + fwt) - (fb + fnb + fsb + feb + fwb);
    ux /= rho;
    uy /= rho;
    uz /= rho;
    if (flags[cell] == ACCEL) {  // the driven lid
        ux = 0.005f;
        uy = 0.002f;
        uz = 0.0f;
    }
    float u2 = 1.5f * (ux * ux + uy * uy + uz * uz);
    float r0 = rho * (1.0f / 3.0f), r1 = rho * (1.0f / 18.0f), r2 = rho * (1.0f / 36.0f);
    DST(C, 0, 0, 0) = equilibrium(fc, r0, 0.0f, u2);
    DST(N, 0, 1, 0) = equilibrium(fn, r1, uy, u2);
    DST(S, 0, -1, 0) = equilibrium(fs, r1, -uy, u2);
    DST(E, 1, 0, 0) = equilibrium(fe, r1, ux, u2);
    DST(W, -1, 0, 0) = equilibrium(fw, r1, -ux, u2);
    DST(T, 0, 0, 1) = equilibrium(ft, r1, uz, u2);
    DST(B, 0, 0, -1) = equilibrium(fb, r1, -uz, u2);
    DST(NE, 1, 1, 0) = equilibrium(fne, r2, ux + uy, u2);
    DST(NW, -1, 1, 0) = equilibrium(fnw, r2, -ux + uy, u2);
    DST(SE, 1, -1, 0) = equilibrium(fse, r2, ux - uy, u2);
    DST(SW, -1, -1, 0) = equilibrium(fsw, r2, -ux - uy, u2);
    DST(NT, 0, 1, 1) = equilibrium(fnt, r2, uy + uz, u2);
    DST(NB, 0, 1, -1) = equilibrium(fnb, r2, uy - uz, u2);
    DST(ST, 0, -1, 1) = equilibrium(fst, r2, -uy + uz, u2);
    DST(SB, 0, -1, -1) = equilibrium(fsb, r2, -uy - uz, u2);
    DST(ET, 1, 0, 1) = equilibrium(fet, r2, ux + uz, u2);
    DST(EB, 1, 0, -1) = equilibrium(feb, r2, ux - uz, u2);
    DST(WT, -1, 0, 1) = equilibrium(fwt, r2, -ux + uz, u2);
    DST(WB, -1, 0, -1) = equilibrium(fwb, r2, -ux - uz, u2);
#undef SRC
#undef DST
}
