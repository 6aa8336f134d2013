// AES-128 encryption, one 16-byte block per thread, ECB (Jin 2012 §5.3, AES: "encrypt a 256x256
// image with a 128-bit key").
//
// The S-box and the expanded key schedule are staged in shared memory by the whole CTA (strided
// loop, then __syncthreads) before any thread encrypts.  The round loop is kept as a loop
// (#pragma unroll 1) so the trace shows it; the final round skips MixColumns, the loop's only
// branch besides the bounds test: AES is a low-divergence, table-lookup-bound workload.
// State layout: byte (row r, column c) is s[4 * c + r], as in FIPS-197.
__device__ __forceinline__ unsigned char xtime(unsigned char x)
{
    return (unsigned char)((x << 1) ^ ((x & 0x80) ? 0x1b : 0x00));  // multiply by 2 in GF(2^8)
}

extern "C" __global__ void aes128_encrypt(const unsigned char* __restrict__ sbox_table,   // [256]
                                          const unsigned char* __restrict__ round_keys,   // [11][16]
                                          const unsigned char* __restrict__ plaintext,
                                          unsigned char* __restrict__ ciphertext, int n_blocks)
{
    __shared__ unsigned char sbox[256];
    __shared__ unsigned char rk[176];
    for (int k = threadIdx.x; k < 256; k += blockDim.x)
        sbox[k] = sbox_table[k];
    for (int k = threadIdx.x; k < 176; k += blockDim.x)
        rk[k] = round_keys[k];
    __syncthreads();

    int b = blockIdx.x * blockDim.x + threadIdx.x;
    if (b >= n_blocks)
        return;
    unsigned char s[16], t[16];
    for (int k = 0; k < 16; ++k)
        s[k] = plaintext[16 * b + k] ^ rk[k];  // initial AddRoundKey

#pragma unroll 1
    for (int round = 1; round <= 10; ++round) {
        // SubBytes and ShiftRows together: row r rotates left by r columns.
        for (int c = 0; c < 4; ++c)
            for (int r = 0; r < 4; ++r)
                t[4 * c + r] = sbox[s[4 * ((c + r) & 3) + r]];
        if (round != 10) {  // MixColumns, skipped in the final round
            for (int c = 0; c < 4; ++c) {
                unsigned char a0 = t[4 * c], a1 = t[4 * c + 1], a2 = t[4 * c + 2], a3 = t[4 * c + 3];
                unsigned char all = a0 ^ a1 ^ a2 ^ a3;
                t[4 * c] = a0 ^ all ^ xtime(a0 ^ a1);
                t[4 * c + 1] = a1 ^ all ^ xtime(a1 ^ a2);
                t[4 * c + 2] = a2 ^ all ^ xtime(a2 ^ a3);
                t[4 * c + 3] = a3 ^ all ^ xtime(a3 ^ a0);
            }
        }
        for (int k = 0; k < 16; ++k)
            s[k] = t[k] ^ rk[16 * round + k];  // AddRoundKey
    }
    for (int k = 0; k < 16; ++k)
        ciphertext[16 * b + k] = s[k];
}
