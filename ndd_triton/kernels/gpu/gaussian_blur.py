"""gaussian_blur on the GPU: one separable pass per spatial axis (kernels/gpu/_separable.py).

The passes mirror the CPU kernel's arithmetic, so both backends round alike: planes (2-D, or the
H, W planes of a volume after its D pass, at most 512 channels) as OpenCV's `sepFilter2D` (W then
H, the +0.5 of unsigned outputs in H's `delta`; uint8 -> uint8 rounds ties to even, as OpenCV's
uint8 output does), 1-D data and wider rows as the torch passes (D, H, W, half away from zero).
"""

from __future__ import annotations

import numpy as np

from ndd_triton.kernels import register
from ndd_triton.kernels._conv_tables import gaussian_taps, spatial_span
from ndd_triton.kernels.gpu._conv import ROUND_BIASED, ROUND_EVEN, round_mode, view_table
from ndd_triton.kernels.gpu._separable import SEQ, SMALL, SYM, Pass, TapBook, run_separable
from ndd_triton.kernels.gpu._tables import GpuBatch, GpuRun
from ndd_triton.ops import gaussian_blur
from ndd_triton.ops.schema import Call

MAX_PLANE_CHANNELS = 512  # the CPU kernel's OpenCV path takes planes up to this many channels
# input types OpenCV's filters read as they are; others reach them as float32 (the SMALL order)
NATIVE_ROWS = (np.dtype(np.uint8), np.dtype(np.uint16), np.dtype(np.int16))


def plane_plan(plane_dtype: np.dtype, out_dtype: np.dtype, u8_direct: bool = False
               ) -> tuple[int, float, tuple[int, float, float]]:  # fmt: skip
    """`(W order, H bias, rounding)` of OpenCV-style passes over planes of `plane_dtype`.

    `u8_direct`: OpenCV writes uint8 itself (float32 sums, ties to even, no `delta`).
    """
    rounding = round_mode(out_dtype)
    if u8_direct:
        return SEQ, 0.0, (ROUND_EVEN, *rounding[1:])
    row_order = SEQ if plane_dtype in NATIVE_ROWS else SMALL
    if out_dtype.kind == "u" and out_dtype.itemsize < 4:
        return row_order, 0.5, (ROUND_BIASED, *rounding[1:])
    return row_order, 0.0, rounding


@register(gaussian_blur.schema, "gpu", replay=True)
def gaussian_blur_gpu(run: GpuRun, out: GpuBatch, inp: GpuBatch, arg: Call) -> None:
    """Blur every sample: one launch per spatial axis, float32 in between."""
    span = spatial_span(inp.layout, inp.shapes.shape[1])
    count, n = span[1], inp.batch_size
    sigmas = np.asarray(arg.sigmas, dtype=np.float64).reshape(n, count)
    windows = np.asarray(arg.windows, dtype=np.float64).reshape(n, count)
    book = TapBook()
    axes = [book.per_sample(np.stack([sigmas[:, k], windows[:, k]], axis=1),
                            lambda key: gaussian_taps(float(key[0]), int(key[1])))
            for k in range(count)]  # fmt: skip
    in_dtype, out_dtype = inp.dtype.numpy_dtype, out.dtype.numpy_dtype
    planes = count >= 2 and int(view_table(inp.shapes, *span)[:, 4].max(initial=1)) \
        <= MAX_PLANE_CHANNELS  # fmt: skip
    if not planes:  # torch passes, outermost axis first
        passes = [Pass(4 - count + k, [axes[k]]) for k in range(count)]
        run_separable(run, out, inp, span, passes, book, round_mode(out_dtype))
        return
    plane_dtype = in_dtype if count == 2 else np.dtype(np.float32)  # after a volume's D pass
    row_order, bias, rounding = plane_plan(plane_dtype, out_dtype,
                                           count == 2 and in_dtype == out_dtype == np.uint8)
    passes = [Pass(3, [axes[-1]], row_order), Pass(2, [axes[-2]], SYM, bias)]
    if count == 3:
        passes.insert(0, Pass(1, [axes[0]]))
    run_separable(run, out, inp, span, passes, book, rounding)
