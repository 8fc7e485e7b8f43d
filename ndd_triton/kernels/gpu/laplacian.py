"""laplacian on the GPU: the separable terms, one multi-term pass per spatial axis.

Every pass carries all terms (one per derivative axis), so a 2-D sample takes two launches and
a volume three (kernels/gpu/_separable.py). As the CPU kernel: planes (2-D, at most 512
channels) as OpenCV's `sepFilter2D` per term (W window, then H window times the term's scale,
the +0.5 of unsigned outputs in the first term's `delta`), the terms added in float32; 1-D and
3-D data as the torch passes (D, H, W), then `Σ scale · term`.
"""

from __future__ import annotations

import numpy as np

from ndd_triton.kernels import register
from ndd_triton.kernels._conv_tables import binomial, second_derivative, spatial_span
from ndd_triton.kernels.gpu._conv import round_mode, view_table
from ndd_triton.kernels.gpu._separable import SYM, Pass, TapBook, run_separable
from ndd_triton.kernels.gpu._tables import GpuBatch, GpuRun
from ndd_triton.kernels.gpu.gaussian_blur import MAX_PLANE_CHANNELS, plane_plan
from ndd_triton.ops import laplacian
from ndd_triton.ops.schema import Call


def _window(book: TapBook, sizes: np.ndarray, derivative: bool,
            scales: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """Per-sample derivative or smoothing windows of `sizes`, times `scales` if given."""
    make = second_derivative if derivative else binomial
    factor = np.ones(len(sizes)) if scales is None else scales
    return book.per_sample(np.stack([sizes, factor], axis=1),
                           lambda key: key[1] * make(int(key[0])))  # fmt: skip


@register(laplacian.schema, "gpu", replay=True)
def laplacian_gpu(run: GpuRun, out: GpuBatch, inp: GpuBatch, arg: Call) -> None:
    """Sum over the spatial axes of `scale · (derivative ⊗ smoothing ...)`, reflect-101."""
    span = spatial_span(inp.layout, inp.shapes.shape[1])
    count, n = span[1], inp.batch_size
    windows, smoothing, scales = (np.asarray(v, dtype=np.float64).reshape(n, count) for v in
                                  (arg.lap_windows, arg.lap_smoothing, arg.lap_scales))
    book = TapBook()
    planes = count == 2 and int(view_table(inp.shapes, *span)[:, 4].max(initial=1)) \
        <= MAX_PLANE_CHANNELS  # fmt: skip
    if planes:  # term a: derivative along axis a; H windows carry the scale (OpenCV's ky)
        row_order, bias, rounding = plane_plan(inp.dtype.numpy_dtype, out.dtype.numpy_dtype)
        passes = [Pass(3, [_window(book, smoothing[:, 1], False),
                           _window(book, windows[:, 1], True)], row_order),
                  Pass(2, [_window(book, windows[:, 0], True, scales[:, 0]),
                           _window(book, smoothing[:, 0], False, scales[:, 1])], SYM, bias)]
        run_separable(run, out, inp, span, passes, book, rounding)
        return
    passes = [Pass(4 - count + b, [_window(book, windows[:, b] if a == b else smoothing[:, b],
                                           a == b) for a in range(count)])
              for b in range(count)]  # fmt: skip
    scale_off, _ = book.per_sample(scales, lambda key: key)
    run_separable(run, out, inp, span, passes, book, round_mode(out.dtype.numpy_dtype), scale_off)
