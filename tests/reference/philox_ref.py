"""Independent scalar Philox-4x32-10 (Salmon et al., SC'11) in plain Python integers.

Checked against the Random123 known-answer vectors in tests/core/test_rng.py; the product code
(NumPy and Triton) is checked against it.
"""

from __future__ import annotations

MASK32 = 0xFFFFFFFF


def philox4x32_10(counter: tuple[int, int, int, int], key: tuple[int, int]) -> tuple[int, ...]:
    """One Philox-4x32-10 block: 4 counter words and 2 key words -> 4 output words."""
    c0, c1, c2, c3 = counter
    k0, k1 = key
    for _ in range(10):
        p0 = 0xD2511F53 * c0
        p1 = 0xCD9E8D57 * c2
        c0, c1, c2, c3 = ((p1 >> 32) ^ c1 ^ k0) & MASK32, p1 & MASK32, \
            ((p0 >> 32) ^ c3 ^ k1) & MASK32, p0 & MASK32  # fmt: skip
        k0 = (k0 + 0x9E3779B9) & MASK32
        k1 = (k1 + 0xBB67AE85) & MASK32
    return c0, c1, c2, c3


def draw(key: int, index: int) -> int:
    """Draw `index` of the stream `key`: lane index % 4 of the block with counter index // 4."""
    block = index // 4
    words = philox4x32_10((block & MASK32, block >> 32, 0, 0), (key & MASK32, key >> 32))
    return words[index % 4]
