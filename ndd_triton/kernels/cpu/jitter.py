"""jitter on the CPU: the GPU kernel's Philox offsets, gathered with NumPy (same bytes)."""

from __future__ import annotations

import numpy as np

from ndd_triton.core.convert import convert_numpy
from ndd_triton.kernels import register
from ndd_triton.ops import jitter
from ndd_triton.ops.schema import SampleArgs
from ndd_triton.random._philox import pair_draws


def offsets(key: int, base: int, count: int, degree: int) -> tuple[np.ndarray, np.ndarray]:
    """int64 `(dx, dy)` of `count` pixels: draws `base + 2p`, `base + 2p + 1`."""
    index = np.uint64(base) + np.uint64(2) * np.arange(count, dtype=np.uint64)
    u0, u1 = pair_draws(key, index)
    span, half = np.uint64(degree + 1), degree // 2
    dx = ((u0.astype(np.uint64) >> np.uint64(8)) * span >> np.uint64(24)).astype(np.int64)
    dy = ((u1.astype(np.uint64) >> np.uint64(8)) * span >> np.uint64(24)).astype(np.int64)
    return dx - half, dy - half


@register(jitter.schema, "cpu")
def jitter_cpu(out: np.ndarray, inp: np.ndarray, arg: SampleArgs) -> None:
    """Gather each pixel from its random neighbour; fill outside."""
    h, w = inp.shape[:2]
    if not arg.mask or out.size == 0:
        out[...] = inp
        return
    dx, dy = offsets(arg.rng_key, int(arg.rng_base), h * w, int(arg.nDegree))
    x = np.tile(np.arange(w), h) + dx
    y = np.repeat(np.arange(h), w) + dy
    inside = (x >= 0) & (x < w) & (y >= 0) & (y < h)
    flat = inp.reshape(h * w, -1)
    res = flat[np.clip(y, 0, h - 1) * w + np.clip(x, 0, w - 1)]
    fill = convert_numpy(np.array([arg.fill_value], np.float64), out.dtype)[0]
    res[~inside] = fill
    out.reshape(h * w, -1)[...] = res
