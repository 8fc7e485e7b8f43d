"""The equalisation look-up table, shared by the CPU kernel and the tests' understanding."""

from __future__ import annotations

import numpy as np


def planes_view(shape: tuple[int, ...], layout: str) -> tuple[int, int, int]:
    """`(outer, pixels, inner)`: frames/channel-first before H·W, channel-last after."""
    first = layout.index("H")
    outer = int(np.prod(shape[:first], dtype=np.int64))
    pixels = int(shape[first]) * int(shape[first + 1])
    inner = int(np.prod(shape[first + 2:], dtype=np.int64))
    return outer, pixels, inner


def equalize_luts(hist: np.ndarray) -> np.ndarray:
    """`[P, 256]` uint8 LUTs from `[P, 256]` histograms (OpenCV equalizeHist arithmetic)."""
    total = hist.sum(axis=1, keepdims=True)
    cdf = np.cumsum(hist, axis=1)
    first = np.argmax(hist > 0, axis=1)[:, None]
    cdf_min = np.take_along_axis(cdf, first, axis=1)
    denom = np.maximum(total - cdf_min, 1).astype(np.float32)
    scale = np.float32(255.0) / denom
    values = (cdf - cdf_min).astype(np.float32) * scale
    lut = np.clip(np.rint(values), 0, 255).astype(np.uint8)
    constant = (total == cdf_min)[:, 0]
    lut[constant] = np.arange(256, dtype=np.uint8)  # a constant channel stays unchanged
    return lut  # type: ignore[no-any-return]
