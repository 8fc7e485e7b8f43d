"""OpenCV building blocks of the CPU filter and colour kernels (imported lazily, on first use).

OpenCV's row/column filters, `filter2D` and `transform` run 3-10x faster than the equivalent
torch passes on one thread (perf/bench_color.py, perf/color.md). For float and 16/32-bit outputs
they are used only where they compute the same float32 arithmetic as DALI: float32 taps and
float32 accumulation, with the rounding done by `store_rounded` (or, where DALI rounds ties to
even, by OpenCV's own `saturate_cast`). uint8 -> uint8 colour and blur kernels may use OpenCV
paths whose result is within 1 of the exact float result for every input (precision contract,
the golden tolerance of those ops): float32 straight to uint8 with ties to even
(`gaussian_blur.blur_planes_u8`) and the fixed-point `transform`/`cvtColor` of `_color_u8`,
each with its error bound proved in its docstring and checked against OpenCV by a one-time
probe. OpenCV's 8-bit-weight smoothing (`GaussianBlur` on u8) has no such bound: never used.

Samples are handed to OpenCV as 2-D planes: `[H, W]` or `[H, W, channels]` with at most
`MAX_CHANNELS` channels (OpenCV's CV_CN_MAX); other shapes take the torch paths.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

MAX_CHANNELS = 512  # CV_CN_MAX: most channels one OpenCV Mat can hold
# depths OpenCV's float filters read directly; other inputs are converted to float32 first
NATIVE_DEPTHS = (np.dtype(np.uint8), np.dtype(np.uint16), np.dtype(np.int16),
                 np.dtype(np.float32))  # fmt: skip


@functools.cache
def cv2_module() -> Any:
    """The `cv2` module, imported on first use so `import ndd_triton` stays fast.

    Also sets OpenCV to one thread (`cv2.setNumThreads(1)`, process-wide): the CPU thread pool
    is the parallelism, one sample per worker. `sepFilter2D`, `filter2D` and `LUT` otherwise
    fan out to OpenCV's own pool inside every worker (measured on 2 cores: process CPU time =
    2x wall time), oversubscribing the cores and ignoring `num_threads=1`. Code that wants
    OpenCV's threads for its own calls can call `cv2.setNumThreads` again afterwards.
    """
    import cv2

    cv2.setNumThreads(1)
    return cv2


def border_code(border: str) -> int:
    """OpenCV border constant of a DALI border name (filter2D rejects wrap: pad with it)."""
    cv2 = cv2_module()
    return {"reflect_101": cv2.BORDER_REFLECT_101, "reflect_1001": cv2.BORDER_REFLECT,
            "clamp": cv2.BORDER_REPLICATE, "constant": cv2.BORDER_CONSTANT,
            "wrap": cv2.BORDER_WRAP}[border]  # fmt: skip


def plane_view(x: np.ndarray, shape5: tuple[int, ...]) -> np.ndarray | None:
    """`[outer·D, H, W(, inner)]` planes of a contiguous sample; None if OpenCV can't hold them."""
    outer, d, h, w, inner = shape5
    if inner > MAX_CHANNELS or not x.flags.c_contiguous:
        return None
    planes = x.reshape(outer * d, h, w, inner)
    return planes[..., 0] if inner == 1 else planes


def readable(plane: np.ndarray) -> np.ndarray:
    """`plane` itself when OpenCV's float filters read its dtype, else a float32 copy."""
    return plane if plane.dtype in NATIVE_DEPTHS else plane.astype(np.float32)


def as_float32(x: np.ndarray) -> np.ndarray:
    """float32 copy (or `x` itself when already float32); `np.copyto` beats torch's `.float()`."""
    if x.dtype == np.float32:
        return x
    out = np.empty(x.shape, np.float32)
    np.copyto(out, x, casting="unsafe")
    return out


BAND_ELEMENTS = 262144  # float32 scratch per band (1 MiB): bands stay in L2, no fresh pages
MIN_BAND_ROWS = 16


def run_banded(dst: np.ndarray, src: np.ndarray, halo: tuple[int, int],
               filt: Callable[[np.ndarray, np.ndarray], Any],
               store: Callable[[np.ndarray, np.ndarray], None]) -> None:  # fmt: skip
    """Filter `src` (`[H, W(, C)]`) into `dst` band by band through a float32 scratch.

    `filt(rows, scratch)` filters a slice of `src` rows into `scratch` (same row count; OpenCV
    sees the slice as a whole image); `store(dst_rows, values)` rounds a band into `dst`.
    Output row `y` reads input rows `y - halo[0] .. y + halo[1]`, so each band's slice carries
    that many extra rows, whose results are dropped; a slice that meets the image's top or bottom
    also reaches `halo` rows inward, the rows a reflecting border reads there. Borders that read
    the far side (wrap) must be padded by the caller. Fresh full-size buffers would cost a page
    fault per 4 KiB (about 2 ms per 480x640x3 float32 image, measured), so the scratch is one band.
    """
    h, out_rows = src.shape[0], dst.shape[0]
    row = max(1, int(np.prod(src.shape[1:])))
    band = min(out_rows, max(MIN_BAND_ROWS, BAND_ELEMENTS // row))
    scratch = np.empty((min(h, band + sum(halo) + 1), *src.shape[1:]), np.float32)
    for y0 in range(0, out_rows, band):
        y1 = min(out_rows, y0 + band)
        first, last = max(0, y0 - halo[0]), min(h, y1 + halo[1])
        if last == h:  # the bottom border reflects rows h-1-halo[1] .. h-1
            first = max(0, min(first, h - 1 - halo[1]))
        if first == 0:  # the top border reflects rows 0 .. halo[0]
            last = min(h, max(last, halo[0] + 1))
        target = scratch[:last - first]
        result = filt(src[first:last], target)
        values = target if result is target else np.asarray(result).reshape(target.shape)
        store(dst[y0:y1], values[y0 - first:y1 - first])
