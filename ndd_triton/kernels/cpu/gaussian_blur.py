"""gaussian_blur on the CPU: OpenCV's separable float32 filter (torch fallback).

2-D planes (`[H, W]` or `[H, W, C]`, C <= 512, after a torch pass along D for volumes) go to
`cv2.sepFilter2D` with DALI's taps in float32. uint8 -> uint8 planes are filtered straight to
uint8 (`blur_planes_u8`: 0.9 vs 1.3 CPU ms per 480x640x3 image, perf/color.md): float32 taps
and accumulation as in DALI, but OpenCV rounds half to even where DALI rounds half away from
zero, so an output differs from DALI's only where the float value is a tie (about 1e-5 of the
pixels), by 1: within the golden tolerance of uint8 blur (precision contract: uint8 outputs
within 1 of the exact float result). Other types go band by band through float32 scratch
(`_opencv.run_banded`) and `store_rounded`. OpenCV's own `GaussianBlur` on uint8 uses 8-bit
fixed-point weights (off by one on 6% of the pixels at sigma 1, no bound) and is not used.
1-D data and wider rows take the torch path: separable passes in float32, H and W fused in
row bands of about 512 KiB, so a band's vertical result is still in cache when the horizontal
pass and the rounding read it.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import torch

from ndd_triton.kernels import register
from ndd_triton.kernels._conv_tables import border_index, gaussian_taps, spatial_span, view_5d
from ndd_triton.kernels.cpu._conv import accumulate, correlate_axis
from ndd_triton.kernels.cpu._opencv import (
    as_float32,
    cv2_module,
    plane_view,
    readable,
    run_banded,
)
from ndd_triton.kernels.cpu.color import rounding_bias, store_rounded
from ndd_triton.ops import gaussian_blur
from ndd_triton.ops.schema import SampleArgs

BAND_ELEMENTS = 131072  # float32 elements per band (512 KiB, well inside a 2 MiB L2)


def blur_rows_banded(src: torch.Tensor, out: np.ndarray, taps_h: np.ndarray,
                     taps_w: np.ndarray, inner: int, finite: bool) -> None:  # fmt: skip
    """Blur `[P, H, W·inner]` planes along H then W, one band of output rows at a time."""
    planes, h, row = src.shape
    rh, rw = len(taps_h) // 2, len(taps_w) // 2
    band = int(np.clip(BAND_ELEMENTS // max(row, 1), 8, max(h, 8)))
    index = torch.from_numpy(border_index(h, rh, rh, "reflect_101"))
    vertical = torch.empty((1, band, row), dtype=torch.float32)
    for p in range(planes):
        for y0 in range(0, h, band):
            rows = min(band, h - y0)
            if y0 >= rh and y0 + rows + rh <= h:
                window = src[p, y0 - rh:y0 + rows + rh]
            else:
                window = src[p].index_select(0, index[y0:y0 + rows + 2 * rh])
            window = window.to(torch.float32).reshape(1, rows + 2 * rh, row)
            part = vertical[:, :rows]
            accumulate(window, taps_h, rows, part)
            blurred = correlate_axis(part.reshape(1, rows, row // inner, inner), 2, taps_w, rw)
            store_rounded(out[p, y0:y0 + rows], blurred, finite=finite)


def blur_planes_cv2(out: np.ndarray, planes: np.ndarray, taps_h: np.ndarray,
                    taps_w: np.ndarray, finite: bool) -> None:  # fmt: skip
    """Blur `[P, H, W(, C)]` planes with OpenCV's separable filter in float32, band by band.

    float32 taps and float32 accumulation, as the torch path; the +0.5 of half-away rounding
    rides in OpenCV's `delta` for unsigned outputs (`rounding_bias`).
    """
    cv2 = cv2_module()
    kx, ky = taps_w.astype(np.float32), taps_h.astype(np.float32)
    bias = rounding_bias(out.dtype)
    halo = (len(ky) // 2, len(ky) // 2)

    def filt(rows: np.ndarray, scratch: np.ndarray) -> Any:
        return cv2.sepFilter2D(readable(rows), cv2.CV_32F, kx, ky, dst=scratch, delta=bias,
                               borderType=cv2.BORDER_REFLECT_101)  # fmt: skip

    def store(dst: np.ndarray, values: np.ndarray) -> None:
        store_rounded(dst, values, finite=finite, biased=bias != 0)

    for p in range(planes.shape[0]):
        run_banded(out[p], planes[p], halo, filt, store)


def _u8_kernels(taps_h: np.ndarray, taps_w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """float32 (row, column) kernels for OpenCV's uint8 -> uint8 `sepFilter2D`, scaled x2, x1/2.

    OpenCV applies kernels it classifies as smoothing (positive, sum 1) to 8-bit data with 8-bit
    fixed-point weights; a row kernel summing to 2 and a column kernel summing to 1/2 keep it on
    the float path. Powers of two scale every float32 product and sum exactly, so the result is
    bit for bit that of the unscaled taps.
    """
    return taps_w.astype(np.float32) * np.float32(2), taps_h.astype(np.float32) * np.float32(0.5)


@functools.cache
def u8_blur_is_float() -> bool:
    """One-time probe: OpenCV's uint8 -> uint8 `sepFilter2D` equals its float32 result rounded.

    That is the float path the precision contract relies on; any other (a fixed-point one)
    turns `blur_planes_u8` off.
    """
    cv2 = cv2_module()
    image = np.random.default_rng(99).integers(0, 256, (40, 48, 3), dtype=np.uint8)
    for sigma, window in ((1.0, 7), (0.6, 3), (2.5, 15)):
        taps = np.asarray(gaussian_taps(sigma, window))
        kx, ky = _u8_kernels(taps, taps)
        as_u8 = cv2.sepFilter2D(image, cv2.CV_8U, kx, ky, borderType=cv2.BORDER_REFLECT_101)
        as_f32 = cv2.sepFilter2D(image, cv2.CV_32F, kx, ky, borderType=cv2.BORDER_REFLECT_101)
        if not np.array_equal(as_u8, np.clip(np.rint(as_f32), 0, 255).astype(np.uint8)):
            return False
    return True


def blur_planes_u8(out: np.ndarray, planes: np.ndarray, taps_h: np.ndarray,
                   taps_w: np.ndarray) -> None:  # fmt: skip
    """Blur uint8 `[P, H, W(, C)]` planes straight into uint8 (float32 inside, ties to even)."""
    cv2 = cv2_module()
    kx, ky = _u8_kernels(taps_h, taps_w)
    for plane, target in zip(planes, out, strict=True):
        result = cv2.sepFilter2D(plane, cv2.CV_8U, kx, ky, dst=target,
                                 borderType=cv2.BORDER_REFLECT_101)  # fmt: skip
        if result is not target:
            target[...] = np.asarray(result).reshape(target.shape)


@register(gaussian_blur.schema, "cpu")
def gaussian_blur_cpu(out: np.ndarray, inp: np.ndarray, arg: SampleArgs) -> None:
    """Blur one sample: axes D, H, W of its `[outer, D, H, W, inner]` view."""
    first, count = spatial_span(arg.layout, inp.ndim)
    shape5 = view_5d(inp.shape, first, count)
    outer, d, h, w, inner = shape5
    taps = [gaussian_taps(float(arg.sigmas[k]), int(arg.windows[k])) for k in range(count)]
    finite = inp.dtype.kind in "iu"
    x = torch.from_numpy(inp).reshape(outer, d, h, w, inner)
    if count == 1:
        store_rounded(out, correlate_axis(x.to(torch.float32), 3, taps[0], len(taps[0]) // 2),
                      finite=finite)  # fmt: skip
        return
    src = inp
    if count == 3:
        x = correlate_axis(torch.from_numpy(as_float32(inp)).reshape(shape5), 1, taps[0],
                           len(taps[0]) // 2)  # fmt: skip
        src = x.numpy()
    planes, targets = plane_view(src, shape5), plane_view(out, shape5)
    if inp.size and planes is not None and targets is not None:
        if src.dtype == out.dtype == np.uint8 and u8_blur_is_float():
            blur_planes_u8(targets, planes, taps[-2], taps[-1])
        else:
            blur_planes_cv2(targets, planes, taps[-2], taps[-1], finite)
        return
    blur_rows_banded(x.reshape(outer * d, h, w * inner), out.reshape(outer * d, h, w * inner),
                     taps[-2], taps[-1], inner, finite)  # fmt: skip
