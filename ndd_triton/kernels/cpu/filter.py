"""filter on the CPU: OpenCV's float32 `filter2D` over row bands for 2-D planes, else torch.

`cv2.filter2D` correlates (no kernel flip) with an anchor, as DALI's filter does. Same-type
uint8/uint16/int16/float32 output is written by OpenCV itself (float32 accumulation,
ties-to-even rounding, saturation: DALI's rule, see `_direct_ok`); other cases run float32
bands (OpenCV's uint8 -> float32 path has no SIMD and is 5x slower) and `store_rounded` rounds
ties to even. Kernels of 50+ taps stay on the torch path because OpenCV switches to a DFT
there, which is not float32-exact. Border mapping: reflect_101 ->
BORDER_REFLECT_101, reflect_1001 -> BORDER_REFLECT, clamp -> BORDER_REPLICATE, constant with
fill 0 -> BORDER_CONSTANT; wrap and constant with another fill pad the plane first
(`copyMakeBorder`) and filter it in mode "valid".
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from ndd_triton.kernels import register
from ndd_triton.kernels._conv_tables import spatial_span, view_5d
from ndd_triton.kernels.cpu._conv import correlate_dense, pad_axis
from ndd_triton.kernels.cpu._opencv import border_code, cv2_module, plane_view, run_banded
from ndd_triton.kernels.cpu.color import store_rounded
from ndd_triton.ops import filter as filter_op
from ndd_triton.ops.schema import SampleArgs

DFT_TAPS = 50  # OpenCV's filter2D takes a DFT from this kernel area up (x86: 130 for some types)
FILL_CHANNELS = 4  # copyMakeBorder's fill is a 4-element Scalar


def filter_planes_cv2(out: np.ndarray, planes: np.ndarray, kernel: np.ndarray,
                      anchors: tuple[int, int], border: str, fill: float,
                      valid: bool) -> None:  # fmt: skip
    """Correlate `[P, H, W(, C)]` planes with a 2-D kernel (`anchors` = (y, x)) into `out`."""
    cv2 = cv2_module()
    kh, kw = kernel.shape
    weights = np.ascontiguousarray(kernel, np.float32)
    padded = not valid and (border == "wrap" or (border == "constant" and fill != 0))
    if valid or padded:
        anchor, halo, code = (0, 0), (0, kh - 1), cv2.BORDER_REFLECT_101  # border never read
    else:
        anchor, halo = (anchors[1], anchors[0]), (anchors[0], kh - 1 - anchors[0])
        code = border_code(border)
    if not (valid or padded) and _direct_ok(planes.dtype, out.dtype, weights):
        for p in range(planes.shape[0]):
            target = out[p]
            result = cv2.filter2D(planes[p], -1, weights, dst=target, anchor=anchor,
                                  borderType=code)  # fmt: skip
            if result is not target:
                target[...] = np.asarray(result).reshape(target.shape)
        return
    out_w = out.shape[2]
    spare: list[np.ndarray] = []  # float32 copy of the band's input rows, reused

    def filt(rows: np.ndarray, scratch: np.ndarray) -> Any:
        if rows.dtype != np.float32:
            if not spare or spare[0].shape[0] < len(rows):
                spare[:] = [np.empty(scratch.shape, np.float32)]
            converted = spare[0][:len(rows)]
            np.copyto(converted, rows, casting="unsafe")
            rows = converted
        return cv2.filter2D(rows, cv2.CV_32F, weights, dst=scratch, anchor=anchor,
                            borderType=code)  # fmt: skip

    def store(dst: np.ndarray, values: np.ndarray) -> None:
        store_rounded(dst, values[:, :out_w], ties_to_even=True)

    for p in range(planes.shape[0]):
        src = planes[p]
        if padded:
            before_y, before_x = anchors
            src = cv2.copyMakeBorder(src, before_y, kh - 1 - before_y, before_x,
                                     kw - 1 - before_x, border_code(border),
                                     value=(fill,) * FILL_CHANNELS)  # fmt: skip
            src = np.asarray(src).reshape(src.shape[0], src.shape[1], *planes.shape[3:])
        run_banded(out[p], src, halo, filt, store)


DIRECT_DTYPES = tuple(np.dtype(t) for t in (np.uint8, np.uint16, np.int16, np.float32))


def _direct_ok(in_dtype: np.dtype[Any], out_dtype: np.dtype[Any], weights: np.ndarray) -> bool:
    """True when `filter2D` may write `out_dtype` itself: same depth, no int32 overflow.

    OpenCV's same-depth integer filter accumulates in float32 and converts with `cvRound` +
    saturation, i.e. DALI's ties-to-even rounding; `cvRound` wraps beyond the int32 range, so
    the kernel's absolute sum bounds the result first (checked equal to the float32 path on
    random kernels, ties included).
    """
    if in_dtype != out_dtype or in_dtype not in DIRECT_DTYPES:
        return False
    if in_dtype.kind == "f":
        return True
    total = float(np.abs(weights, dtype=np.float64).sum())
    return np.isfinite(total) and total * float(np.iinfo(in_dtype).max + 1) < 2.0**31


def _cv2_planes(out: np.ndarray, data: np.ndarray, kernel: np.ndarray, first: int, count: int,
                channels_ok: bool) -> tuple[np.ndarray, np.ndarray] | None:  # fmt: skip
    """In/out planes when OpenCV can take this sample, else None."""
    if count != 2 or kernel.size >= DFT_TAPS or not data.size or not out.size or not channels_ok:
        return None
    planes = plane_view(data, view_5d(data.shape, first, count))
    targets = plane_view(out, view_5d(out.shape, first, count))
    return None if planes is None or targets is None else (planes, targets)


@register(filter_op.schema, "cpu")
def filter_cpu(out: np.ndarray, data: np.ndarray, kernel: np.ndarray, fill: np.ndarray | None,
               arg: SampleArgs) -> None:  # fmt: skip
    """Correlate one sample with its kernel; integer outputs round ties to even."""
    first, count = spatial_span(arg.layout, data.ndim)
    fill_value = float(np.asarray(fill).reshape(-1)[0]) if fill is not None else 0.0
    inner = view_5d(data.shape, first, count)[4]
    needs_fill = arg.mode == "same" and arg.border == "constant" and fill_value != 0
    cv = _cv2_planes(out, data, kernel, first, count, inner <= FILL_CHANNELS or not needs_fill)
    if cv is not None:
        filter_planes_cv2(cv[1], cv[0], kernel, (int(arg.anchors[0]), int(arg.anchors[1])),
                          arg.border, fill_value,
                          arg.mode == "valid")  # fmt: skip
        return
    x = torch.from_numpy(data).reshape(view_5d(data.shape, first, count)).to(torch.float32)
    weights = kernel.reshape((1,) * (3 - count) + kernel.shape)
    if arg.mode == "same":
        anchors = [0] * (3 - count) + [int(a) for a in arg.anchors]
        for axis in range(3):
            k, a = weights.shape[axis], anchors[axis]
            x = pad_axis(x, axis + 1, a, k - 1 - a, arg.border, fill_value)
    _, od, oh, ow, _ = view_5d(out.shape, first, count)
    store_rounded(out, correlate_dense(x, weights, (od, oh, ow)), ties_to_even=True)
