"""Host-side tables shared by the filter ops (gaussian_blur, laplacian, filter) on both backends.

Every sample is seen as a 5-D view `[outer, D, H, W, inner]`: `outer` collects the axes before
the spatial ones (frames, channel-first `C`), `inner` those after (channel-last `C`), and the
spatial extents are left-padded with 1 to three axes. Kernels then correlate over D, H, W only.
Also here: the 1-D windows (Gaussian, Laplacian derivative and smoothing) and border index maps.
"""

from __future__ import annotations

import math

import numpy as np

from ndd_triton.ops._filter_common import per_axis, spatial_span

__all__ = ["BORDERS", "binomial", "border_index", "gaussian_taps", "per_axis", "second_derivative",
           "spatial_span", "view_5d"]

BORDERS = {"reflect_101": 0, "reflect_1001": 1, "wrap": 2, "clamp": 3, "constant": 4}


def view_5d(shape: tuple[int, ...] | np.ndarray, first: int, count: int) -> tuple[int, ...]:
    """`(outer, D, H, W, inner)` of one sample shape."""
    dims = [int(s) for s in shape]
    outer = math.prod(dims[:first])
    inner = math.prod(dims[first + count:])
    spatial = [1] * (3 - count) + dims[first:first + count]
    return (outer, *spatial, inner)


def gaussian_taps(sigma: float, window: int) -> np.ndarray:
    """Normalised sampled Gaussian (DALI: window `2·ceil(3·sigma)+1`, or sigma from the window)."""
    if window == 0:
        window = 2 * math.ceil(3 * sigma) + 1
    if sigma == 0:
        sigma = ((window - 1) / 2 - 1) * 0.3 + 0.8
    sigma = max(sigma, 1e-3)  # (the same taps for any smaller sigma: exp underflows to 0)
    x = np.arange(window, dtype=np.float64) - (window - 1) / 2
    with np.errstate(over="ignore", under="ignore"):  # a tiny sigma: [0, ..., 1, ..., 0]
        taps = np.exp(-(x * x) / (2.0 * sigma * sigma))
    return taps / taps.sum()  # type: ignore[no-any-return]


def binomial(size: int) -> np.ndarray:
    """Binomial smoothing window `[1, 1]^(size-1)` (size 1 is `[1]`)."""
    taps = np.ones(1)
    for _ in range(size - 1):
        taps = np.convolve(taps, [1.0, 1.0])
    return taps


def second_derivative(size: int) -> np.ndarray:
    """Laplacian derivative window `[1, -2, 1] * [1, 1]^(size-3)` (size 5 is `[1,0,-2,0,1]`)."""
    return np.convolve([1.0, -2.0, 1.0], binomial(size - 2))


def border_index(n: int, before: int, after: int, border: str) -> np.ndarray:
    """Source index of each padded position `-before .. n+after-1` (-1 = constant fill)."""
    p = np.arange(-before, n + after, dtype=np.int64)
    if border == "reflect_101":
        period = max(2 * n - 2, 1)
        p = np.abs(p) % period
        return np.where(p >= n, period - p, p)
    if border == "reflect_1001":
        p = p % (2 * n)
        return np.where(p >= n, 2 * n - 1 - p, p)
    if border == "wrap":
        return p % n
    if border == "clamp":
        return np.clip(p, 0, n - 1)
    return np.where((p >= 0) & (p < n), p, -1)
