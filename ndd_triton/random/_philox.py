"""Philox-4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC'11) in NumPy.

Draw `j` of a stream with key `k` is lane `j % 4` of philox(k, counter=j // 4): every value is a
pure function of (key, index), so any backend or thread split reproduces the same numbers.
"""

from __future__ import annotations

import numpy as np

_M0 = np.uint64(0xD2511F53)
_M1 = np.uint64(0xCD9E8D57)
_W0 = np.uint32(0x9E3779B9)
_W1 = np.uint32(0xBB67AE85)
_LOW = np.uint64(0xFFFFFFFF)
_SHIFT = np.uint64(32)


def philox4x32(counter: np.ndarray, key: int) -> np.ndarray:
    """`[n, 4]` uint32 outputs for 64-bit block counters `counter` (uint64) and a 64-bit key."""
    ctr = np.asarray(counter, dtype=np.uint64)
    c0 = (ctr & _LOW).astype(np.uint32)
    c1 = (ctr >> _SHIFT).astype(np.uint32)
    c2 = np.zeros_like(c0)
    c3 = np.zeros_like(c0)
    k0 = np.uint32(key & 0xFFFFFFFF)
    k1 = np.uint32((key >> 32) & 0xFFFFFFFF)
    with np.errstate(over="ignore"):
        for _ in range(10):
            p0 = _M0 * c0.astype(np.uint64)
            p1 = _M1 * c2.astype(np.uint64)
            hi0, lo0 = (p0 >> _SHIFT).astype(np.uint32), (p0 & _LOW).astype(np.uint32)
            hi1, lo1 = (p1 >> _SHIFT).astype(np.uint32), (p1 & _LOW).astype(np.uint32)
            c0, c1, c2, c3 = hi1 ^ c1 ^ k0, lo1, hi0 ^ c3 ^ k1, lo0
            k0 = np.uint32(k0 + _W0)
            k1 = np.uint32(k1 + _W1)
    return np.stack([c0, c1, c2, c3], axis=-1)


def draws_u32(key: int, offset: int, count: int) -> np.ndarray:
    """`count` uint32 values of stream `key`, starting at draw index `offset`."""
    if count <= 0:
        return np.zeros(0, dtype=np.uint32)
    first_block = offset // 4
    last_block = (offset + count - 1) // 4
    blocks = np.arange(first_block, last_block + 1, dtype=np.uint64)
    flat = philox4x32(blocks, key).reshape(-1)
    start = offset - first_block * 4
    return flat[start:start + count]


def to_unit_float32(u: np.ndarray) -> np.ndarray:
    """uint32 -> float32 in [0, 1) using the top 24 bits (exactly representable)."""
    return (u >> np.uint32(8)).astype(np.float32) * np.float32(1.0 / (1 << 24))


def to_unit_float64(u_hi: np.ndarray, u_lo: np.ndarray) -> np.ndarray:
    """Two uint32 streams -> float64 in [0, 1) with 53 random bits."""
    a = (u_hi >> np.uint32(5)).astype(np.float64)
    b = (u_lo >> np.uint32(6)).astype(np.float64)
    return (a * 67108864.0 + b) * (1.0 / 9007199254740992.0)
