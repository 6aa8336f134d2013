// StoreGPU's sliding-window hashing (Al-Kiswany et al., HPDC 2008), the STO benchmark of the
// hybrid-warp-size thesis (§5.3): an MD5 digest of every window of a storage buffer.
//
// Content-based chunking slides a fixed-size window over the data and hashes every position; the
// host then declares chunk boundaries where a digest matches a pattern. The GPU's part is the
// hashing: window w covers bytes [w*step, w*step + WINDOW), and thread t digests windows
// t*per_thread ... t*per_thread + per_thread - 1. A window of WINDOW = 48 bytes is one MD5 block
// after padding, so every digest runs the same 64 rounds: the only data-dependent branch is the
// end of the buffer.
#define WINDOW 48
#define WINDOW_WORDS (WINDOW / 4)

__device__ __forceinline__ unsigned int rotl(unsigned int x, int c)
{
    return (x << c) | (x >> (32 - c));
}

// MD5 (RFC 1321) of one WINDOW-byte message given as little-endian 32-bit words.
__device__ __forceinline__ void md5_window(const unsigned int* __restrict__ words, unsigned int* __restrict__ out)
{
    // K[i] = floor(|sin(i + 1)| * 2^32); R[i] = the rotation of round i.
    const unsigned int K[64] = {
        0xd76aa478u, 0xe8c7b756u, 0x242070dbu, 0xc1bdceeeu, 0xf57c0fafu, 0x4787c62au, 0xa8304613u, 0xfd469501u,
        0x698098d8u, 0x8b44f7afu, 0xffff5bb1u, 0x895cd7beu, 0x6b901122u, 0xfd987193u, 0xa679438eu, 0x49b40821u,
        0xf61e2562u, 0xc040b340u, 0x265e5a51u, 0xe9b6c7aau, 0xd62f105du, 0x02441453u, 0xd8a1e681u, 0xe7d3fbc8u,
        0x21e1cde6u, 0xc33707d6u, 0xf4d50d87u, 0x455a14edu, 0xa9e3e905u, 0xfcefa3f8u, 0x676f02d9u, 0x8d2a4c8au,
        0xfffa3942u, 0x8771f681u, 0x6d9d6122u, 0xfde5380cu, 0xa4beea44u, 0x4bdecfa9u, 0xf6bb4b60u, 0xbebfbc70u,
        0x289b7ec6u, 0xeaa127fau, 0xd4ef3085u, 0x04881d05u, 0xd9d4d039u, 0xe6db99e5u, 0x1fa27cf8u, 0xc4ac5665u,
        0xf4292244u, 0x432aff97u, 0xab9423a7u, 0xfc93a039u, 0x655b59c3u, 0x8f0ccc92u, 0xffeff47du, 0x85845dd1u,
        0x6fa87e4fu, 0xfe2ce6e0u, 0xa3014314u, 0x4e0811a1u, 0xf7537e82u, 0xbd3af235u, 0x2ad7d2bbu, 0xeb86d391u
    };
    const int R[64] = {7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22,
                       5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20,
                       4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23,
                       6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21};
    unsigned int M[16];
#pragma unroll
    for (int i = 0; i < WINDOW_WORDS; ++i)
        M[i] = words[i];
    M[WINDOW_WORDS] = 0x80u;  // the padding bit right after the message
#pragma unroll
    for (int i = WINDOW_WORDS + 1; i < 14; ++i)
        M[i] = 0u;
    M[14] = WINDOW * 8;  // message length in bits, low word
    M[15] = 0u;
    unsigned int a = 0x67452301u, b = 0xefcdab89u, c = 0x98badcfeu, d = 0x10325476u;
#pragma unroll
    for (int i = 0; i < 64; ++i) {  // unrolled: the round function and word index are constants
        unsigned int f;
        int g;
        if (i < 16) {
            f = (b & c) | (~b & d);
            g = i;
        } else if (i < 32) {
            f = (d & b) | (~d & c);
            g = (5 * i + 1) & 15;
        } else if (i < 48) {
            f = b ^ c ^ d;
            g = (3 * i + 5) & 15;
        } else {
            f = c ^ (b | ~d);
            g = (7 * i) & 15;
        }
        f = f + a + K[i] + M[g];
        a = d;
        d = c;
        c = b;
        b = b + rotl(f, R[i]);
    }
    out[0] = 0x67452301u + a;
    out[1] = 0xefcdab89u + b;
    out[2] = 0x98badcfeu + c;
    out[3] = 0x10325476u + d;
}

extern "C" __global__ void storegpu_md5(const unsigned int* __restrict__ words, int n_windows, int step_words,
                                        int per_thread, unsigned int* __restrict__ digest)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    for (int k = 0; k < per_thread; ++k) {
        int w = t * per_thread + k;
        if (w >= n_windows)  // the last thread's share of the buffer may be short
            return;
        md5_window(words + w * step_words, digest + 4 * w);
    }
}
