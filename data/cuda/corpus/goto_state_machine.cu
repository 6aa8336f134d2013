// Parser/structurizer corpus: a goto state machine. Three states jump to one another and every
// state can leave the loop (to `done` or to `fail`): an irreducible, many-exit cycle. Unbounded
// Forward Copy duplicates it about 86x (-O0); the structurizer's growth limit keeps it near 3x
// (docs/analyses.md).
extern "C" __global__ void goto_state_machine(int *out, const int *in, int n, int steps)
{
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid >= n) return;
    int x = in[tid], acc = 0, k = 0;
    if (x < 0) goto c;
    if (x & 8) goto b;
a:
    acc += x;
    if (++k > steps) goto done;
    if (x & 1) { x = 3 * x + 1; goto b; }
    if (x % 3 == 0) goto c;
    if (acc > 100000) goto fail;
    x >>= 1;
    if (x & 16) goto b;
    if (acc == 7) goto done;
    goto a;
b:
    acc ^= x;
    if (++k > steps) goto done;
    if (x % 5 == 0) goto a;
    if (x & 2) goto c;
    if (acc < -100000) goto fail;
    x = x / 2 + 7;
    if (x & 32) goto a;
    if (acc == 9) goto done;
    goto b;
c:
    acc -= x;
    if (++k > steps) goto done;
    if (x & 4) goto a;
    if (x % 7 == 1) goto b;
    if (acc == 42) goto fail;
    x += 11;
    if (x & 64) goto b;
    if (acc == 5) goto done;
    goto c;
done:
    out[tid] = acc;
    return;
fail:
    out[tid] = -k;
}
