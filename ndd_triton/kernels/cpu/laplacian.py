"""laplacian on the CPU: per derivative axis, separable float32 passes; terms summed in float32.

2-D planes (`[H, W]` or `[H, W, C]`, C <= 512) go through `cv2.sepFilter2D` (float32 taps and
accumulation, each term's scale folded into its H taps) band by band (`_opencv.run_banded`),
or, when the result is an exact integer anyway, through one dense `cv2.filter2D` per plane
(`dense_integer_kernel`; default arguments on uint8): 3x and 10x faster than the torch passes
(perf/README.md). 1-D and 3-D data take the torch path.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from ndd_triton.kernels import register
from ndd_triton.kernels._conv_tables import spatial_span, view_5d
from ndd_triton.kernels._laplacian_terms import laplacian_terms
from ndd_triton.kernels.cpu._conv import correlate_axis
from ndd_triton.kernels.cpu._opencv import cv2_module, plane_view, readable, run_banded
from ndd_triton.kernels.cpu.color import rounding_bias, store_rounded
from ndd_triton.ops import laplacian
from ndd_triton.ops.schema import SampleArgs


def laplacian_planes_cv2(out: np.ndarray, planes: np.ndarray,
                         terms: list[tuple[float, list[np.ndarray]]],
                         finite: bool) -> None:  # fmt: skip
    """Sum of the two 2-D terms of `[P, H, W(, C)]` planes, one OpenCV call per term and band."""
    cv2 = cv2_module()
    kernels = [((scale * h).astype(np.float32), w.astype(np.float32)) for scale, (h, w) in terms]
    bias = rounding_bias(out.dtype)
    radius = max(len(ky) for ky, _ in kernels) // 2
    spare: list[np.ndarray] = []  # second scratch, reused across bands

    def filt(rows: np.ndarray, scratch: np.ndarray) -> Any:
        if not spare or len(spare[0]) < len(scratch):
            spare[:] = [np.empty_like(scratch)]
        other = spare[0][:len(scratch)]
        src = readable(rows)
        for k, (ky, kx) in enumerate(kernels):
            target = scratch if k == 0 else other
            result = cv2.sepFilter2D(src, cv2.CV_32F, kx, ky, dst=target,
                                     delta=bias if k == 0 else 0.0,
                                     borderType=cv2.BORDER_REFLECT_101)  # fmt: skip
            if result is not target:
                target[...] = np.asarray(result).reshape(target.shape)
        np.add(scratch, other, out=scratch)
        return scratch

    def store(dst: np.ndarray, values: np.ndarray) -> None:
        store_rounded(dst, values, finite=finite, biased=bias != 0)

    for p in range(planes.shape[0]):
        run_banded(out[p], planes[p], (radius, radius), filt, store)


EXACT_DTYPES = tuple(np.dtype(t) for t in (np.uint8, np.uint16, np.int16))
MAX_DENSE_TAPS = 49  # OpenCV's filter2D switches to a DFT from 50 taps


def dense_integer_kernel(terms: list[tuple[float, list[np.ndarray]]], dtype: np.dtype[Any]
                         ) -> np.ndarray | None:  # fmt: skip
    """The 2-D kernel `Σ scale · (h ⊗ w)` when one `filter2D` pass gives the exact result.

    With integer weights, integer samples and `max|x| · Σ|k| < 2^24`, every float32 partial sum
    is an exact integer, so any summation order (OpenCV's dense 3x3 filter, the separable
    passes, DALI's) yields the same integer and rounding never applies. Default arguments on
    uint8 qualify: the 3x3 kernel `[[2, 0, 2], [0, -8, 0], [2, 0, 2]]`, as `cv2.Laplacian`.
    """
    if dtype not in EXACT_DTYPES:
        return None
    kh = max(len(h) for _, (h, _) in terms)
    kw = max(len(w) for _, (_, w) in terms)
    kernel = np.zeros((kh, kw))
    for scale, (h, w) in terms:  # odd sizes, all centred on the same tap
        y, x = (kh - len(h)) // 2, (kw - len(w)) // 2
        kernel[y:y + len(h), x:x + len(w)] += scale * np.multiply.outer(h, w)
    info = np.iinfo(dtype)
    bound = np.abs(kernel).sum() * max(abs(int(info.min)), int(info.max))
    if kernel.size > MAX_DENSE_TAPS or np.any(kernel != np.round(kernel)) or bound >= 2**24:
        return None
    return kernel.astype(np.float32)


def laplacian_dense_cv2(out: np.ndarray, planes: np.ndarray, kernel: np.ndarray) -> None:
    """Exact integer Laplacian of `[P, H, W(, C)]` planes by one `cv2.filter2D` each."""
    cv2 = cv2_module()
    for p in range(planes.shape[0]):
        target = out[p]
        result = cv2.filter2D(planes[p], -1, kernel, dst=target,
                              borderType=cv2.BORDER_REFLECT_101)  # fmt: skip
        if result is not target:
            target[...] = np.asarray(result).reshape(target.shape)


@register(laplacian.schema, "cpu")
def laplacian_cpu(out: np.ndarray, inp: np.ndarray, arg: SampleArgs) -> None:
    """Sum of `scale · (derivative ⊗ smoothing ...)` correlations, reflect-101 border."""
    first, count = spatial_span(arg.layout, inp.ndim)
    shape5 = view_5d(inp.shape, first, count)
    finite = inp.dtype.kind in "iu"
    planes, targets = plane_view(inp, shape5), plane_view(out, shape5)
    if count == 2 and inp.size and planes is not None and targets is not None:
        terms = laplacian_terms(arg, count)
        dense = dense_integer_kernel(terms, inp.dtype) if out.dtype == inp.dtype else None
        if dense is not None:
            laplacian_dense_cv2(targets, planes, dense)
        else:
            laplacian_planes_cv2(targets, planes, terms, finite)
        return
    x = torch.from_numpy(inp).reshape(shape5).to(torch.float32)
    total = None
    for scale, windows in laplacian_terms(arg, count):
        term = x
        for k, taps in enumerate(windows):
            term = correlate_axis(term, 4 - count + k, taps, len(taps) // 2)
        total = term.mul_(scale) if total is None else total.add_(term, alpha=scale)
    assert total is not None  # count >= 1: infer checked the layout
    store_rounded(out, total, finite=finite)
