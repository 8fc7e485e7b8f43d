"""CPU correlation helpers on torch float32 views `[outer, D, H, W, inner]` (see _conv_tables).

Separable passes accumulate one slice of the sample per tap (interior from the sample itself,
borders from small gathered strips); dense kernels loop over their nonzero taps of a padded copy.
torch's CPU elementwise ops run these passes faster than NumPy and than torch's own conv2d,
which has no fast path for single-channel 1-D windows (perf/bench_color.py).
"""

from __future__ import annotations

import math

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


def accumulate(src: torch.Tensor, taps: np.ndarray, count: int, out: torch.Tensor) -> None:
    """`out[:, p] = Σ taps[i] · src[:, p + i]` for `count` positions of `(pre, n, post)` data."""
    started = False
    for i, t in enumerate(taps):
        if t == 0 and (started or i < len(taps) - 1):
            continue
        part = src.narrow(1, i, count)
        if started:
            out.add_(part, alpha=float(t))
        else:
            torch.mul(part, float(t), out=out)
            started = True


def correlate_axis(x: torch.Tensor, axis: int, taps: np.ndarray, anchor: int,
                   border: str = "reflect_101") -> torch.Tensor:  # fmt: skip
    """1-D correlation along `axis`: `out[p] = Σ taps[i] · x[p - anchor + i]` (float32 result).

    The interior is computed from slices of `x` itself (no padded copy; integer `x` is converted
    on the fly); only the `k - 1` border positions go through a small gathered strip.
    """
    k, n = len(taps), x.shape[axis]
    pre, post = math.prod(x.shape[:axis]), math.prod(x.shape[axis + 1:])
    src = x.reshape(pre, n, post)
    out = torch.empty((pre, n, post), dtype=torch.float32)
    interior = n - k + 1
    if interior < k:  # small extent: pad the whole axis
        accumulate(pad_axis(src, 1, anchor, k - 1 - anchor, border), taps, n, out)
        return out.reshape(x.shape)
    accumulate(src, taps, interior, out.narrow(1, anchor, interior))
    index = torch.from_numpy(border_index(n, anchor, k - 1 - anchor, border))
    if anchor:  # outputs 0 .. anchor-1 read padded positions 0 .. anchor+k-2
        strip = src.index_select(1, index[:anchor + k - 1])
        accumulate(strip, taps, anchor, out.narrow(1, 0, anchor))
    after = k - 1 - anchor
    if after:
        strip = src.index_select(1, index[len(index) - after - k + 1:])
        accumulate(strip, taps, after, out.narrow(1, n - after, after))
    return out.reshape(x.shape)


def correlate_dense(x: torch.Tensor, weights: np.ndarray, out_size: tuple[int, int, int]
                    ) -> torch.Tensor:  # fmt: skip
    """`out[z, y, x] = Σ w[i, j, l] · xp[z + i, y + j, x + l]` over an already padded `x`."""
    od, oh, ow = out_size
    acc = torch.zeros((x.shape[0], od, oh, ow, x.shape[4]), dtype=torch.float32)
    for (i, j, k), w in np.ndenumerate(weights):
        if w != 0:
            acc.add_(x[:, i:i + od, j:j + oh, k:k + ow, :], alpha=float(w))
    return acc
