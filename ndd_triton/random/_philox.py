"""Philox-4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC'11) in NumPy.

Draw `j` of a stream with key `k` is lane `j % 4` of philox(k, counter=j // 4): every value is a
pure function of (key, index), so any backend or thread split reproduces the same numbers.
"""

from __future__ import annotations

import threading

import numpy as np

_M0 = np.uint64(0xD2511F53)
_M1 = np.uint64(0xCD9E8D57)
_LOW = np.uint64(0xFFFFFFFF)
_SHIFT = np.uint64(32)
_DRAW_SPACE = 1 << 64


_CHUNK = 8192  # blocks per pass: the working set stays in cache (about 3x faster than one pass)


_SMALL = 12  # blocks up to which Python integers beat NumPy's fixed cost (~90 us a call)


# A stream read forward (an RNG's offset only grows: each call's blocks start where the last
# call's ended) has its blocks computed ahead in runs of _AHEAD, kept per key (`_ahead`). A call
# of the RN50 recipe draws 64-1280 blocks, and each NumPy pass has a fixed cost of ~80 µs (50
# small calls) that one run of 8192 blocks pays for several batches. Requests that do not
# follow the last one (per-call noise keys 2**40 draws apart) are computed as they come.
_AHEAD = 8192
_SPAN = 1 << 16  # requests spanning more blocks than this are computed as they come
_FOLLOWS = 16  # blocks between one request's end and the next's start of a forward read
# key -> (first block of the run, its [count, 4] uint32 words or None, end of the last request)
_ahead: dict[int, tuple[int, np.ndarray | None, int]] = {}
_ahead_lock = threading.Lock()


def philox4x32(counter: np.ndarray, key: int) -> np.ndarray:
    """`[n, 4]` uint32 outputs for 64-bit block counters `counter` (uint64) and a 64-bit key."""
    ctr = np.asarray(counter, dtype=np.uint64).reshape(-1)
    if len(ctr) <= _SMALL:
        return np.array([_philox_block(int(c), key) for c in ctr.tolist()],
                        dtype=np.uint32).reshape(len(ctr), 4)  # fmt: skip
    lo, hi = int(ctr.min()), int(ctr.max())
    if hi - lo >= _SPAN:
        return _philox_blocks(ctr, key)
    with _ahead_lock:
        first, words, end = _ahead.get(key, (0, None, -1))
    if words is None or lo < first or hi >= first + len(words):
        count = max(_AHEAD, hi - lo + 1)
        if not 0 <= lo - end <= _FOLLOWS or lo + count > _DRAW_SPACE // 4:
            with _ahead_lock:  # not a forward read (or at the end of the counter space)
                _set_ahead(key, (0, None, hi + 1))
            return _philox_blocks(ctr, key)
        first, words = lo, _philox_blocks(np.arange(lo, lo + count, dtype=np.uint64), key)
    with _ahead_lock:
        _set_ahead(key, (first, words, hi + 1))
    return words[(ctr - np.uint64(first)).astype(np.intp)]


def _set_ahead(key: int, entry: tuple[int, np.ndarray | None, int]) -> None:
    if key not in _ahead and len(_ahead) >= 8:
        _ahead.clear()
    _ahead[key] = entry


def _philox_blocks(ctr: np.ndarray, key: int) -> np.ndarray:
    """`philox4x32` of every counter, computed now (in cache-sized chunks)."""
    out = np.empty((len(ctr), 4), dtype=np.uint32)
    for start in range(0, len(ctr), _CHUNK):
        _philox_chunk(ctr[start:start + _CHUNK], key, out[start:start + _CHUNK])
    return out


def _philox_chunk(ctr: np.ndarray, key: int, out: np.ndarray) -> None:
    """Ten rounds on 32-bit words held in uint64 lanes (products of two words fit exactly).

    The two multiplied words (c0, c2) and the two others (c1, c3) are stacked into `[2, n]`
    arrays, so a round is five NumPy calls instead of ten: the same operations on the same
    values (a small batch's Philox pass is NumPy call overhead; ~2x faster at 64 blocks)."""
    n = len(ctr)
    mul = np.empty((2, n), dtype=np.uint64)  # (c0, c2), then (c0 * M0, c2 * M1)
    mul[0] = ctr & _LOW
    mul[1] = 0
    other = np.empty((2, n), dtype=np.uint64)  # (c1, c3)
    other[0] = ctr >> _SHIFT
    other[1] = 0
    high = np.empty((2, n), dtype=np.uint64)
    spare = np.empty((2, n), dtype=np.uint64)
    for keys in _round_keys(key):
        np.multiply(mul, _MULTIPLIERS, out=mul)
        np.right_shift(mul, _SHIFT, out=high)
        np.bitwise_and(mul, _LOW, out=mul)
        # c0' = hi(c2 * M1) ^ c1 ^ k0, c2' = hi(c0 * M0) ^ c3 ^ k1; c1' = lo(c2 * M1), c3' =
        # lo(c0 * M0): the new multiplied words from `high` swapped, the others from `mul`
        np.bitwise_xor(high[::-1], other, out=spare)
        np.bitwise_xor(spare, keys, out=spare)
        other, mul, spare = mul[::-1], spare, other  # no buffer is both read and written
    out[:, 0] = mul[0]
    out[:, 1] = other[0]
    out[:, 2] = mul[1]
    out[:, 3] = other[1]


_MULTIPLIERS = np.array([[0xD2511F53], [0xCD9E8D57]], dtype=np.uint64)
_round_keys_cache: dict[int, list[np.ndarray]] = {}


def _round_keys(key: int) -> list[np.ndarray]:
    """The ten rounds' `[[k0], [k1]]` key columns of a 64-bit key (a few keys are in use)."""
    keys = _round_keys_cache.get(key)
    if keys is None:
        k0, k1, keys = key & 0xFFFFFFFF, (key >> 32) & 0xFFFFFFFF, []
        for _ in range(10):
            keys.append(np.array([[k0], [k1]], dtype=np.uint64))
            k0 = (k0 + 0x9E3779B9) & 0xFFFFFFFF
            k1 = (k1 + 0xBB67AE85) & 0xFFFFFFFF
        if len(_round_keys_cache) > 256:
            _round_keys_cache.clear()
        _round_keys_cache[key] = keys
    return keys


def _philox_block(ctr: int, key: int) -> tuple[int, int, int, int]:
    """One block, the rounds of `_philox_chunk` on Python integers (a few draws' worth)."""
    c0, c1, c2, c3 = ctr & 0xFFFFFFFF, ctr >> 32, 0, 0
    k0, k1 = key & 0xFFFFFFFF, (key >> 32) & 0xFFFFFFFF
    for _ in range(10):
        p0 = c0 * 0xD2511F53
        p1 = c2 * 0xCD9E8D57
        c0, c1, c2, c3 = (p1 >> 32) ^ c1 ^ k0, p1 & 0xFFFFFFFF, (p0 >> 32) ^ c3 ^ k1, \
            p0 & 0xFFFFFFFF  # fmt: skip
        k0 = (k0 + 0x9E3779B9) & 0xFFFFFFFF
        k1 = (k1 + 0xBB67AE85) & 0xFFFFFFFF
    return c0, c1, c2, c3


def draws_u32(key: int, offset: int, count: int) -> np.ndarray:
    """`count` uint32 values of stream `key`, starting at draw index `offset`.

    Draw indices wrap modulo 2**64, as in the kernels' uint64 arithmetic.
    """
    if count <= 0:
        return np.zeros(0, dtype=np.uint32)
    offset %= _DRAW_SPACE
    if offset + count > _DRAW_SPACE:
        head = _DRAW_SPACE - offset
        return np.concatenate([draws_u32(key, offset, head), draws_u32(key, 0, count - head)])
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


def to_unit_open_float32(u: np.ndarray) -> np.ndarray:
    """uint32 -> float32 in (0, 1] using the top 24 bits (safe for log)."""
    return ((u >> np.uint32(8)).astype(np.float32) + np.float32(1)) * np.float32(1.0 / (1 << 24))


def element_draws(key: int, base: int, count: int, per_element: int) -> np.ndarray:
    """`[count, per_element]` uint32: element `e` gets draws `base + per_element*e + j`."""
    flat = draws_u32(key, int(base), count * per_element)
    return flat.reshape(count, per_element)


def single_draws(key: int, bases: np.ndarray) -> np.ndarray:
    """`draws_u32(key, bases[i], 1)[0]` for every i (uint64 `bases`), in one Philox pass."""
    bases = np.asarray(bases, dtype=np.uint64).reshape(-1)
    blocks = philox4x32(bases >> np.uint64(2), key)
    return blocks[np.arange(len(bases)), (bases & np.uint64(3)).astype(np.intp)]


def batch_draws(key: int, bases: list[int], counts: list[int]) -> list[np.ndarray]:
    """`draws_u32(key, bases[i], counts[i])` for every i, from one Philox pass over all blocks
    (per-sample passes are dominated by NumPy call overhead for small counts)."""
    if any(b % _DRAW_SPACE + c > _DRAW_SPACE for b, c in zip(bases, counts, strict=True)):
        return [draws_u32(key, b, c) for b, c in zip(bases, counts, strict=True)]
    offsets = np.array([b % _DRAW_SPACE for b in bases], dtype=object)
    first = [int(o) // 4 for o in offsets]
    last = [(int(o) + c - 1) // 4 for o, c in zip(offsets, counts, strict=True)]
    nblocks = [hi - lo + 1 if c > 0 else 0 for lo, hi, c in zip(first, last, counts, strict=True)]
    blocks = np.concatenate([np.arange(lo, lo + k, dtype=np.uint64)
                             for lo, k in zip(first, nblocks, strict=True)]) if bases else \
        np.zeros(0, np.uint64)  # fmt: skip
    flat = philox4x32(blocks, key).reshape(-1)
    result, at = [], 0
    for o, lo, k, c in zip(offsets, first, nblocks, counts, strict=True):
        start = at + int(o) - lo * 4
        result.append(flat[start:start + c] if c > 0 else np.zeros(0, dtype=np.uint32))
        at += 4 * k
    return result


def to_u64(u_hi: np.ndarray, u_lo: np.ndarray) -> np.ndarray:
    """Two uint32 draws -> one uint64 (`u_hi` in the high half)."""
    return (u_hi.astype(np.uint64) << np.uint64(32)) | u_lo.astype(np.uint64)


def mulhi64(a: np.ndarray, b: np.ndarray | np.uint64) -> np.ndarray:
    """High 64 bits of the 128-bit products `a * b` (uint64), as the Triton helper computes them."""
    a = np.asarray(a, dtype=np.uint64)
    b = np.asarray(b, dtype=np.uint64)
    a_lo, a_hi = a & _LOW, a >> _SHIFT
    b_lo, b_hi = b & _LOW, b >> _SHIFT
    with np.errstate(over="ignore"):
        ll, lh, hl, hh = a_lo * b_lo, a_lo * b_hi, a_hi * b_lo, a_hi * b_hi
        mid = (ll >> _SHIFT) + (lh & _LOW) + (hl & _LOW)
        return hh + (lh >> _SHIFT) + (hl >> _SHIFT) + (mid >> _SHIFT)


def bounded_index(u: np.ndarray, span: np.ndarray | np.uint64) -> np.ndarray:
    """Map uint64 draws to `[0, span]` (inclusive, uniform up to 2**-64 bias); span is uint64."""
    span = np.asarray(span, dtype=np.uint64)
    with np.errstate(over="ignore"):
        n = span + np.uint64(1)  # wraps to 0 for the full 64-bit range
    return np.where(n == 0, u, mulhi64(u, n))


def pair_draws(key: int, index: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Draws `index` and `index + 1` for even uint64 `index` (both in one block), any order."""
    index = np.asarray(index, dtype=np.uint64)
    words = philox4x32(index >> np.uint64(2), key)
    upper = (index & np.uint64(2)) != 0
    return np.where(upper, words[:, 2], words[:, 0]), np.where(upper, words[:, 3], words[:, 1])
