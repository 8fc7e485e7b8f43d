"""CPU correlation helpers on torch float32 views `[outer, D, H, W, inner]` (see _conv_tables).

Separable passes slice the border-padded sample once per tap and accumulate (symmetric windows
add mirrored slices first, halving the multiplies); dense kernels loop over their nonzero taps.
torch's CPU elementwise ops run these passes faster than NumPy and than torch's own conv2d,
which has no fast path for single-channel 1-D windows (perf/bench_color.py).
"""

from __future__ import annotations

import numpy as np
import torch

from ndd_triton.kernels._conv_tables import border_index


def pad_axis(x: torch.Tensor, axis: int, before: int, after: int, border: str,
             fill: float = 0.0) -> torch.Tensor:  # fmt: skip
    """`x` extended by `before`/`after` positions on `axis` following the border rule."""
    if before == 0 and after == 0:
        return x
    n = x.shape[axis]
    if border == "constant":
        def slab(size: int) -> torch.Tensor:
            shape = list(x.shape)
            shape[axis] = size
            return torch.full(shape, fill, dtype=x.dtype)
        return torch.cat([slab(before), x, slab(after)], dim=axis)
    index = torch.from_numpy(border_index(n, before, after, border))
    return x.index_select(axis, index)


def correlate_axis(x: torch.Tensor, axis: int, taps: np.ndarray, anchor: int,
                   border: str = "reflect_101") -> torch.Tensor:  # fmt: skip
    """1-D correlation of `x` along `axis`: `out[p] = Σ taps[i] · x[p - anchor + i]`."""
    k = len(taps)
    if k == 1:
        return x * float(taps[0])
    n = x.shape[axis]
    padded = pad_axis(x, axis, anchor, k - 1 - anchor, border)
    symmetric = k % 2 == 1 and anchor == k // 2 and np.array_equal(taps, taps[::-1])
    acc = padded.narrow(axis, k // 2, n) * float(taps[k // 2]) if symmetric else None
    for i in range(k // 2 if symmetric else k):
        if taps[i] == 0:
            continue
        part = padded.narrow(axis, i, n)
        if symmetric:
            part = part + padded.narrow(axis, k - 1 - i, n)
        acc = part * float(taps[i]) if acc is None else acc.add_(part, alpha=float(taps[i]))
    return acc if acc is not None else torch.zeros_like(x)


def correlate_dense(x: torch.Tensor, weights: np.ndarray, out_size: tuple[int, int, int]
                    ) -> torch.Tensor:  # fmt: skip
    """`out[z, y, x] = Σ w[i, j, l] · xp[z + i, y + j, x + l]` over an already padded `x`."""
    od, oh, ow = out_size
    acc = torch.zeros((x.shape[0], od, oh, ow, x.shape[4]), dtype=torch.float32)
    for (i, j, l), w in np.ndenumerate(weights):
        if w != 0:
            acc.add_(x[:, i:i + od, j:j + oh, l:l + ow, :], alpha=float(w))
    return acc
