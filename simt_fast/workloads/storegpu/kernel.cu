// Content-defined chunking with a gear rolling hash, and per-chunk digests (seed 003 §5.3,
// STO: StoreGPU's sliding-window hashing of a storage buffer).
//
// Thread t owns bytes [t*segment, (t+1)*segment).  The gear hash h = (h << 1) + gear[byte]
// forgets a byte after 64 shifts, so the hash at position i is a function of the 64-byte window
// ending at i; a thread first rolls over the 63 bytes before its segment to get exactly that
// window.  A chunk ends where the hash's masked (top) bits are all zero and the chunk already has
// min_chunk bytes; its FNV-1a state is finished with an add-rotate-xor (MD5-style) mixer.
// Boundaries are data-dependent, so threads branch into the finaliser at different bytes.
#define WINDOW 64
#define FNV_OFFSET 0xcbf29ce484222325ull
#define FNV_PRIME 0x100000001b3ull

__constant__ unsigned long long gear[256] = {
    0xe220a8397b1dcdafull, 0x6e789e6aa1b965f4ull, 0x06c45d188009454full, 0xf88bb8a8724c81ecull,
    0x1b39896a51a8749bull, 0x53cb9f0c747ea2eaull, 0x2c829abe1f4532e1ull, 0xc584133ac916ab3cull,
    0x3ee5789041c98ac3ull, 0xf3b8488c368cb0a6ull, 0x657eecdd3cb13d09ull, 0xc2d326e0055bdef6ull,
    0x8621a03fe0bbdb7bull, 0x8e1f7555983aa92full, 0xb54e0f1600cc4d19ull, 0x84bb3f97971d80abull,
    0x7d29825c75521255ull, 0xc3cf17102b7f7f86ull, 0x3466e9a083914f64ull, 0xd81a8d2b5a4485acull,
    0xdb01602b100b9ed7ull, 0xa9038a921825f10dull, 0xedf5f1d90dca2f6aull, 0x54496ad67bd2634cull,
    0xdd7c01d4f5407269ull, 0x935e82f1db4c4f7bull, 0x69b82ebc92233300ull, 0x40d29eb57de1d510ull,
    0xa2f09dabb45c6316ull, 0xee521d7a0f4d3872ull, 0xf16952ee72f3454full, 0x377d35dea8e40225ull,
    0x0c7de8064963bab0ull, 0x05582d37111ac529ull, 0xd254741f599dc6f7ull, 0x69630f7593d108c3ull,
    0x417ef96181daa383ull, 0x3c3c41a3b43343a1ull, 0x6e19905dcbe531dfull, 0x4fa9fa7324851729ull,
    0x84eb4454a792922aull, 0x134f7096918175ceull, 0x07dc930b302278a8ull, 0x12c015a97019e937ull,
    0xcc06c31652ebf438ull, 0xecee65630a691e37ull, 0x3e84ecb1763e79adull, 0x690ed476743aae49ull,
    0x774615d7b1a1f2e1ull, 0x22b353f04f4f52daull, 0xe3ddd86ba71a5eb1ull, 0xdf268adeb6513356ull,
    0x2098eb73d4367d77ull, 0x03d6845323ce3c71ull, 0xc952c5620043c714ull, 0x9b196bca844f1705ull,
    0x30260345dd9e0ec1ull, 0xcf448a5882bb9698ull, 0xf4a578dccbc87656ull, 0xbfdeaed9a17b3c8full,
    0xed79402d1d5c5d7bull, 0x55f070ab1cbbf170ull, 0x3e00a34929a88f1dull, 0xe255b237b8bb18fbull,
    0x2a7b67af6c6ad50eull, 0x466d5e7f3e46f143ull, 0x42375cb399a4fc72ull, 0x8c8a1f148a8bb259ull,
    0x32fcab5daed5bdfcull, 0x9e60398c8d8553c0ull, 0xee89cceb8c4064c0ull, 0xdb0215941d86a66full,
    0x5ccde78203c367a8ull, 0xf1bcbc6a1ec11786ull, 0xef054fceee954551ull, 0xdf82012d0555c6dfull,
    0x292566ff72403c08ull, 0xc4dd302a1bfa1137ull, 0xd85f219db5c554e1ull, 0x6a27ff807441bcd2ull,
    0x96a573e9b48216e8ull, 0x46a9fdac40bf0048ull, 0x3dd12464a0ee15b4ull, 0x451e521296a7eea1ull,
    0x56e4398a98f8a0fdull, 0x7b7dc2160e3335a7ull, 0xc679ee0bebcb1ccaull, 0x928d6f2d7453424eull,
    0x1b38994205234c6dull, 0x8086d193a6f2b568ull, 0x21c6e26639ac2c65ull, 0xd9dccac414d23c6full,
    0x91cd642057e00235ull, 0x77fc607dc6589373ull, 0x05b8abe26dd3aee7ull, 0x12f6436ac376cc66ull,
    0x64952424897b2307ull, 0xee8c2baf6343e5c3ull, 0xdc4c613d9eba2304ull, 0x3505b7796bd1a506ull,
    0x8176daf800a05f50ull, 0x8bd8ff7a0385cdbcull, 0x1a764a3cd78101daull, 0xbe4d15bf6ca266acull,
    0xa85e1f38bb2dc749ull, 0x56759a968493cd8cull, 0xf3a9bce7336bd182ull, 0x365b15013741519bull,
    0x1f7a44a6b109ac94ull, 0x3521d628813cb177ull, 0x6a77afab0f7c9370ull, 0x179642d8cde95015ull,
    0x5ef102a8fb354461ull, 0xf51c504764ed82f2ull, 0xc58427f041ce6808ull, 0xfad8fc45c9643c37ull,
    0xcf8682f9a70fa9c0ull, 0x7e1b3b75a4005729ull, 0x992dd867927b52d8ull, 0x7fbd5db142f6791full,
    0x370595aacab4adaeull, 0xb1392dbdc5ab61d6ull, 0x9fea7dfc79d452d9ull, 0x40b12b120085641cull,
    0xa192afe3157c85d0ull, 0xc847729f4e08f3a3ull, 0x6f1384a306c41fc2ull, 0x12d05c4045a39c19ull,
    0x9899202fd20f0841ull, 0xe9c7191857e774b8ull, 0x4eead809af5b0cc3ull, 0xe809acafa23864a4ull,
    0x4da1edaba1d0f7bdull, 0x846eb9673349f8e4ull, 0x87bae55b86039fe8ull, 0x7f367b8bd953eff2ull,
    0x3884700f650d04e1ull, 0xbfe4b2ab46980cadull, 0xc5fc89075299106cull, 0x37b2fa361adea7cdull,
    0x7d75d813f04895b4ull, 0x702f5b393f62c0e0ull, 0x0a3fc775f4ecf37full, 0xe4b23787a352437full,
    0xf83fa245c34d6363ull, 0xb99bcf040786cf50ull, 0x38b6ea0a0e6c9d8aull, 0x093fdc76776e37e1ull,
    0x1a75e6f76ba7eee8ull, 0x442cdcfee9660c62ull, 0x22d58d35116b5e0bull, 0x87d4a5180f6a3645ull,
    0x589fb216bd82131bull, 0x91d031cad319aec0ull, 0xabecf76a553d320bull, 0xb8686cb347612dcfull,
    0xfcab66337c0a77f5ull, 0xac318214381ec437ull, 0x6eb7f0fca24494aeull, 0xcf42861dcdc895a9ull,
    0x4abad7a1586d7a91ull, 0xc21b318dc2f49745ull, 0xd49474dc2acbd1f0ull, 0xb1d4873747c1c8e1ull,
    0x5434dc8c7d015bf6ull, 0xe1c486287511b6a9ull, 0xa8616df62e89a193ull, 0x31ce6319498d8347ull,
    0xafd0b486123d6faaull, 0xe6495f5d102301ebull, 0x0dc51ced17a43c52ull, 0x8bcbcde81355ef2dull,
    0x2412af73fdee7cfcull, 0xc8d589e486e29eedull, 0x23390e8664517f89ull, 0x251ade58e8a6849dull,
    0xf8555dbd2e8f9cb0ull, 0xcb417c3eef54f7c3ull, 0x8028f8e1aac3a919ull, 0x10e31052acf748a0ull,
    0x2d886c073b1e1b78ull, 0x972974d90df9faeeull, 0xbc1b7b38796893baull, 0x1958ed432070e652ull,
    0xca5f297197a12dccull, 0xe025a27375704f28ull, 0x418010a570a924fbull, 0x9828e2941bfc419cull,
    0x4fbacd2f52b85c1full, 0x33dd5b756211cc67ull, 0x23c8dfdd1db57ff0ull, 0x32f81801a1a8e901ull,
    0x26884eac5ada36daull, 0xcaa82f9bb42e37d4ull, 0x19fb1a7491d6a7d1ull, 0x5aa0243aa357f38eull,
    0xb31d917809e447f0ull, 0x3f9c197225215be0ull, 0xdc3c315a1e33c095ull, 0x3dd399ad533e80acull,
    0x566f32cce8301d95ull, 0xc880188083d9ba21ull, 0xb9cc357f3b0e7d2eull, 0x0237d2123a8a8d6cull,
    0xbf636e9aa7cbf6bdull, 0xd7bd4284c4e2a6a7ull, 0xda2ebb47d50577a9ull, 0x90ba1c11b539087dull,
    0x44993d31552b4f57ull, 0x32c2d6f80a8a8898ull, 0x450583ed7fb54b19ull, 0xec2b0b09e50ef3efull,
    0xd918a0b6e2efd65cull, 0xe37a868d9785f572ull, 0x7d1a6118f2b0f37aull, 0x9e2e3cc13b343439ull,
    0xefd82c11212e37e8ull, 0xaf89c05cd4fc75edull, 0x55bc16bb9697108eull, 0x6c4701fa5db69beeull,
    0x9237338441daf445ull, 0x248cf0831e81a5fcull, 0xacc13557e77de273ull, 0x520970c25e06513aull,
    0x657329cb02987cabull, 0xa9b0b3366a4e55a8ull, 0xc4d06ca2f39acdd4ull, 0x5dce37d68170cde1ull,
    0x5f1e44e77e1854c9ull, 0x6883d452d55df899ull, 0x05c5bd62f1067032ull, 0xe680b683ce60fab0ull,
    0x5dc9da3f286d18b1ull, 0x94b4bf3ab85ed6d8ull, 0xce65f449e3acc5a3ull, 0x34b0209642cea639ull,
    0xc14c3c771d904827ull, 0x6addcee2bd9cdee5ull, 0xe24eed137ffbb613ull, 0x75dd58ef79963d1bull,
    0xfdb83ecf6cc24920ull, 0x7a1d0057c57169fbull, 0x339200f4feb62d07ull, 0xd33f4d4ac88469f4ull,
    0x8226f234e68dfee4ull, 0x320def4f2a105536ull, 0x7786f3b13aefc159ull, 0xb28225ac9df63ee2ull,
    0x781b9d0376cc6044ull, 0x05bd0115226c6ab6ull, 0xd302230207bdfdabull, 0xdb898abd8e0d2933ull,
    0x9e79a397ba00b9ccull, 0x89df84a5f0003ee8ull, 0x011f04f2a75fb9beull, 0x5a5832bb47bcf19eull
};

__device__ __forceinline__ unsigned long long finalize(unsigned long long d, int length)
{
    unsigned long long x = d ^ ((unsigned long long)length << 32);
    for (int round = 0; round < 4; ++round) {
        x ^= x >> 31;
        x *= 0x7fb5d329728ea185ull;
        x = (x << 27) | (x >> 37);
        x += 0x9e3779b97f4a7c15ull;
    }
    return x;
}

extern "C" __global__ void storegpu_chunk(const unsigned char* __restrict__ buf, int n_bytes,
                                          int segment, int min_chunk, unsigned long long mask,
                                          unsigned char* __restrict__ boundary,
                                          int* __restrict__ chunk_count,
                                          unsigned long long* __restrict__ digest,
                                          int* __restrict__ total)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    int begin = t * segment;
    if (begin >= n_bytes)
        return;
    int end = min(begin + segment, n_bytes);
    unsigned long long h = 0;
    for (int i = max(0, begin - (WINDOW - 1)); i < begin; ++i)  // warm the window up
        h = (h << 1) + gear[buf[i]];

    unsigned long long d = FNV_OFFSET, acc = 0;
    int length = 0, count = 0;
    for (int i = begin; i < end; ++i) {
        unsigned char b = buf[i];
        h = (h << 1) + gear[b];
        d = (d ^ b) * FNV_PRIME;
        ++length;
        if (length >= min_chunk && (h & mask) == 0) {  // content-defined cut point
            boundary[i] = 1;
            acc ^= finalize(d, length);
            ++count;
            d = FNV_OFFSET;
            length = 0;
        }
    }
    if (length > 0)  // the tail of the segment is a chunk of its own
        acc ^= finalize(d, length);
    chunk_count[t] = count;
    digest[t] = acc;
    atomicAdd(total, count);
}
