"""Philox-4x32-10 in Triton, bit-exact with `ndd_triton.random._philox` (the NumPy version).

Draw `d` of the stream with 64-bit key `k` is lane `d % 4` of `philox(k, counter=d // 4)`, the
counter's high 64 bits being zero. Kernels get the key as two uint32 halves and draw indices as
uint64 (`base + k * element + j`, bases reserved by `RNG.reserve` in prepare), so every random
value is a pure function of (key, draw index) on either backend.

Helpers (all `@triton.jit`, usable from any kernel; `_helper_` names tell the compile check
that they are only called from kernels):
  `_helper_philox4x32_10(c0, c1, c2, c3, k0, k1)`  one block (uint32 in, 4 x uint32 out)
  `_helper_philox_draw(k0, k1, index)`        the uint32 draw at uint64 `index`
  `_helper_philox_draw2(k0, k1, index)`       draws `index`, `index + 1` (index even), one block
  `_helper_unit_f32(u)`, `_helper_unit_open_f32(u)`  top 24 bits -> [0, 1) / (0, 1] float32
  `_helper_unit_f64(u_hi, u_lo)`              two draws -> [0, 1) float64, 53 random bits
  `_helper_mulhi64(a, b)`                     high 64 bits of a uint64 x uint64 product
  `_helper_position(key_lo, key_hi, off_lo, off_hi)`  a call's RNG position from its int32
                                              words: key halves (uint32), offset (uint64)
"""

from __future__ import annotations

import triton
import triton.language as tl

PHILOX_M0: tl.constexpr = tl.constexpr(0xD2511F53)
PHILOX_M1: tl.constexpr = tl.constexpr(0xCD9E8D57)
PHILOX_W0: tl.constexpr = tl.constexpr(0x9E3779B9)
PHILOX_W1: tl.constexpr = tl.constexpr(0xBB67AE85)
LOW32: tl.constexpr = tl.constexpr(0xFFFFFFFF)
INV_2_24: tl.constexpr = tl.constexpr(1.0 / 16777216.0)
INV_2_53: tl.constexpr = tl.constexpr(1.0 / 9007199254740992.0)
TWO_26: tl.constexpr = tl.constexpr(67108864.0)


@triton.jit
def _helper_philox4x32_10(c0, c1, c2, c3, k0, k1):
    """Ten Philox-4x32 rounds on uint32 counter words with key (k0, k1); returns 4 uint32."""
    for _ in tl.static_range(10):
        hi0 = tl.umulhi(c0, PHILOX_M0)
        lo0 = tl.mul(c0, PHILOX_M0, sanitize_overflow=False)
        hi1 = tl.umulhi(c2, PHILOX_M1)
        lo1 = tl.mul(c2, PHILOX_M1, sanitize_overflow=False)
        c0, c1, c2, c3 = hi1 ^ c1 ^ k0, lo1, hi0 ^ c3 ^ k1, lo0
        k0 = tl.add(k0, PHILOX_W0, sanitize_overflow=False)
        k1 = tl.add(k1, PHILOX_W1, sanitize_overflow=False)
    return c0, c1, c2, c3


@triton.jit
def _helper_block(k0, k1, index):
    """The Philox block holding draw `index` (uint64)."""
    block = index >> 2
    c0 = (block & LOW32).to(tl.uint32)
    c1 = (block >> 32).to(tl.uint32)
    zero = tl.zeros_like(c0)
    kk0 = zero + k0
    kk1 = zero + k1
    return _helper_philox4x32_10(c0, c1, zero, zero, kk0, kk1)


@triton.jit
def _helper_philox_draw(k0, k1, index):
    """uint32 draw number `index` (uint64 tensor) of the stream keyed (k0, k1)."""
    r0, r1, r2, r3 = _helper_block(k0, k1, index)
    lane = index & 3
    return tl.where(lane == 0, r0, tl.where(lane == 1, r1, tl.where(lane == 2, r2, r3)))


@triton.jit
def _helper_philox_draw2(k0, k1, index):
    """Draws `index` and `index + 1` (index even, so both lie in one block)."""
    r0, r1, r2, r3 = _helper_block(k0, k1, index)
    upper = (index & 2) != 0
    return tl.where(upper, r2, r0), tl.where(upper, r3, r1)


@triton.jit
def _helper_unit_f32(u):
    """uint32 -> float32 in [0, 1) from the top 24 bits (exact)."""
    return (u >> 8).to(tl.float32) * INV_2_24


@triton.jit
def _helper_unit_open_f32(u):
    """uint32 -> float32 in (0, 1] from the top 24 bits (exact; safe for log)."""
    return ((u >> 8) + 1).to(tl.float32) * INV_2_24


@triton.jit
def _helper_unit_f64(u_hi, u_lo):
    """Two uint32 draws -> float64 in [0, 1) with 53 random bits (exact)."""
    a = (u_hi >> 5).to(tl.float64)
    b = (u_lo >> 6).to(tl.float64)
    return (a * TWO_26 + b) * INV_2_53


@triton.jit
def _helper_mulhi64(a, b):
    """High 64 bits of the 128-bit product of uint64 tensors `a` and `b`."""
    a_lo = a & LOW32
    a_hi = a >> 32
    b_lo = b & LOW32
    b_hi = b >> 32
    ll = a_lo * b_lo
    lh = a_lo * b_hi
    hl = a_hi * b_lo
    hh = a_hi * b_hi
    mid = (ll >> 32) + (lh & LOW32) + (hl & LOW32)
    return hh + (lh >> 32) + (hl >> 32) + (mid >> 32)


@triton.jit
def _helper_position(key_lo, key_hi, off_lo, off_hi):
    """A call's RNG position from its four int32 words (`_tables.draw_words`, what
    `GpuRun.launch_drawing` passes a drawing kernel first): the key's uint32 halves and the
    uint64 draw offset. (Each word is int32 as launched; `.to(tl.int32)` first also accepts
    one typed wider, as the kernel compile check types integer arguments.)"""
    k0 = key_lo.to(tl.int32).to(tl.uint32, bitcast=True)
    k1 = key_hi.to(tl.int32).to(tl.uint32, bitcast=True)
    lo = off_lo.to(tl.int32).to(tl.uint32, bitcast=True).to(tl.uint64)
    hi = off_hi.to(tl.int32).to(tl.uint32, bitcast=True).to(tl.uint64)
    return k0, k1, (hi << 32) | lo
