"""Broadcast geometry for elementwise kernels: collapsed axes and division by invariant integers.

The host collapses each sample's (output shape, operand strides) to the fewest axes: extent-1
axes are dropped and neighbours whose strides chain (`stride[i] == stride[i+1] * extent[i+1]`
for every broadcast operand) are merged, so `(H, W, 3) * (3,)` becomes `(H*W, 3)` with operand
strides `(0, 1)`. Collapsed axes are right-aligned in 6 columns; R (constexpr) is the most any
sample needs. In the kernel an element's coordinates come from R - 1 divisions by the collapsed
extents, each an int32 multiply-high and shift with a host-computed multiplier (Granlund &
Montgomery, "Division by invariant integers using multiplication", PLDI 1994): for
0 <= x < 2**31 and d >= 1, with l = ceil(log2 d), m = ceil(2**(31 + l) / d) (< 2**32),
x // d == (x * m) >> (31 + l) exactly.
"""

from __future__ import annotations

import numpy as np
import triton
import triton.language as tl

MAX_RANK = 6
INT32_LIMIT = 2**31


def magic_numbers(extents: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(multiplier, shift) int64 arrays for dividing int32 values >= 0 by `extents` (>= 1)."""
    d = np.maximum(np.asarray(extents, np.int64), 1)
    if d.size and int(d.max()) >= INT32_LIMIT:
        raise ValueError("magic_numbers: divisors must be below 2**31")
    log = np.zeros(d.shape, np.int64)  # ceil(log2 d) = bit length of d - 1
    rest = d - 1
    while np.any(rest):
        log += rest > 0
        rest >>= 1
    shift = 31 + log
    mul = ((np.int64(1) << shift) + d - 1) // d
    return mul, shift


def contiguous_strides(shapes: np.ndarray) -> np.ndarray:
    """Row-major element strides of `[N, 6]` shapes, 0 on extent-1 axes (they broadcast)."""
    strides = np.ones_like(shapes)
    strides[:, :-1] = np.cumprod(shapes[:, :0:-1], axis=1)[:, ::-1]
    return np.where(shapes == 1, 0, strides)


def collapse(extents: np.ndarray, strides: list[np.ndarray]
             ) -> tuple[np.ndarray, list[np.ndarray], int]:  # fmt: skip
    """Collapse `[N, 6]` output extents and operand strides; returns them right-aligned and R."""
    ext = np.array(extents, np.int64)
    strides = [np.array(s, np.int64) for s in strides]
    n = len(ext)
    rows = np.arange(n)
    cur = np.full(n, MAX_RANK - 1)  # the innermost kept axis so far, per sample
    for i in range(MAX_RANK - 2, -1, -1):  # a loop over axes, vectorised over samples
        e = ext[:, i]
        inner = ext[rows, cur]
        merge = (inner > 1) & (e > 1)
        for s in strides:
            merge &= s[:, i] == s[rows, cur] * inner
        ext[rows[merge], cur[merge]] *= e[merge]
        ext[merge, i] = 1
        for s in strides:
            s[merge | (e == 1), i] = 0
        cur = np.where((e > 1) & ~merge, i, cur)
    keep = ext > 1
    order = np.argsort(keep, axis=1, kind="stable")  # kept axes last, in order
    ext = np.where(np.take_along_axis(keep, order, 1), np.take_along_axis(ext, order, 1), 1)
    kept = np.take_along_axis(keep, order, 1)
    strides = [np.where(kept, np.take_along_axis(s, order, 1), 0) for s in strides]
    rank = max(int(keep.sum(axis=1).max()) if n else 1, 1)
    return ext, strides, rank


@triton.jit
def _helper_magic_div(x, mul, shift):
    """x // d for int32 0 <= x < 2**31, with d's (multiplier, shift) from `magic_numbers`."""
    wide = x.to(tl.uint32).to(tl.uint64) * mul.to(tl.uint32).to(tl.uint64)
    return (wide >> shift.to(tl.uint64)).to(tl.int32)


@triton.jit
def _helper_axis_step(row, rem, axis, EXT: tl.constexpr, MUL: tl.constexpr,
                      SHIFT: tl.constexpr, WIDE: tl.constexpr):  # fmt: skip
    """(coordinate along collapsed `axis`, rest of the index) of element indices `rem`."""
    ext = tl.load(row + EXT + axis)
    if WIDE:
        q = rem // ext
    else:
        q = _helper_magic_div(rem, tl.load(row + MUL + axis), tl.load(row + SHIFT + axis))
        ext = ext.to(tl.int32)
    return rem - q * ext, q
