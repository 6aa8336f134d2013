"""AES-128 ECB encryption (Jin 2012 §5.3, AES).

The S-box is computed here from its definition (multiplicative inverse in GF(2^8) followed by
the affine map), the key schedule is expanded on the host, and the numpy reference encrypts all
blocks at once with the textbook round structure written as matrix operations on
(n_blocks, 4 rows, 4 columns) byte arrays: a different formulation from the kernel's.  The tests
check it against the FIPS-197 Appendix C.1 known-answer vector.
"""

from __future__ import annotations

import numpy as np

from simt_fast.workloads import LaunchSpec, Workload, fill

SIZES = {"tiny": (256 * 16, 128), "default": (256 * 256, 128), "thesis": (256 * 256, 128)}  # plaintext bytes (an image), block


def gf_mul(a: int, b: int) -> int:
    """Product in GF(2^8) modulo x^8 + x^4 + x^3 + x + 1."""
    p = 0
    while b:
        if b & 1:
            p ^= a
        a = ((a << 1) ^ 0x11B) if a & 0x80 else (a << 1)
        b >>= 1
    return p


def sbox() -> np.ndarray:
    inv = [0] * 256
    for a in range(1, 256):
        inv[a] = next(b for b in range(1, 256) if gf_mul(a, b) == 1)
    out = np.zeros(256, np.uint8)
    for a in range(256):
        x = inv[a]
        y = x
        for shift in range(1, 5):  # affine map: x ^ rotl(x,1) ^ ... ^ rotl(x,4) ^ 0x63
            y ^= ((x << shift) | (x >> (8 - shift))) & 0xFF
        out[a] = y ^ 0x63
    return out


_SBOX = sbox()


def expand_key(key: bytes) -> np.ndarray:
    """FIPS-197 key expansion for a 128-bit key: 11 round keys of 16 bytes."""
    words = [list(key[4 * i:4 * i + 4]) for i in range(4)]
    rcon = 1
    for i in range(4, 44):
        w = list(words[i - 1])
        if i % 4 == 0:
            w = [int(_SBOX[b]) for b in w[1:] + w[:1]]
            w[0] ^= rcon
            rcon = gf_mul(rcon, 2)
        words.append([a ^ b for a, b in zip(words[i - 4], w)])
    return np.array(words, np.uint8).reshape(176)


def encrypt(plain: np.ndarray, round_keys: np.ndarray) -> np.ndarray:
    """Encrypt uint8[n*16] block-wise; state[b, r, c] = byte 4c + r of block b."""
    state = plain.reshape(-1, 4, 4).transpose(0, 2, 1).copy()
    keys = round_keys.reshape(11, 4, 4).transpose(0, 2, 1)
    mul2 = np.array([gf_mul(a, 2) for a in range(256)], np.uint8)
    mul3 = np.array([gf_mul(a, 3) for a in range(256)], np.uint8)
    state ^= keys[0]
    for rnd in range(1, 11):
        state = _SBOX[state]
        state = np.stack([np.roll(state[:, r, :], -r, axis=1) for r in range(4)], axis=1)
        if rnd < 10:  # MixColumns: the circulant matrix (2 3 1 1) over each column
            a = state
            state = np.stack([mul2[a[:, r]] ^ mul3[a[:, (r + 1) % 4]] ^ a[:, (r + 2) % 4] ^ a[:, (r + 3) % 4]
                              for r in range(4)], axis=1)
        state ^= keys[rnd]
    return state.transpose(0, 2, 1).reshape(-1).copy()


def make(size: str, rng: np.random.Generator) -> LaunchSpec:
    n_bytes, block = SIZES[size]
    n_blocks = n_bytes // 16
    key = rng.integers(0, 256, 16, dtype=np.uint8).tobytes()
    # A smooth "image" (gradients plus noise), as the thesis encrypts a picture.
    y, x = np.divmod(np.arange(n_bytes), 256)
    image = ((x + 2 * y + rng.integers(0, 16, n_bytes)) % 256).astype(np.uint8)
    args = [_SBOX.copy(), expand_key(key), image, fill(n_bytes, np.uint8, 0), np.int32(n_blocks)]
    names = ("sbox_table", "round_keys", "plaintext", "ciphertext", "n_blocks")
    return LaunchSpec((n_blocks + block - 1) // block, block, args, outputs=(3,), arg_names=names)


def reference(spec: LaunchSpec) -> dict:
    return {"ciphertext": encrypt(spec.arg("plaintext"), spec.arg("round_keys"))}


WORKLOAD = Workload(
    name="aes",
    description="AES-128 ECB, S-box and key schedule in shared memory, rounds loop (Jin 2012 §5.3 AES)",
    kernel="aes128_encrypt",
    make=make,
    sizes=tuple(SIZES),
    reference=reference,
    features=("shared memory + __syncthreads", "byte table lookups", "rounds loop"),
)
