"""laplacian: sum over spatial axes of separable second-derivative filters (DALI semantics).

The term of axis `a` correlates with the derivative window `[1,-2,1]*[1,1]^(w-3)` along `a` and
binomial smoothing windows along the other spatial axes, times `scale[a]`; `normalized_kernel`
uses `2^-(Σ window sizes - ndim - 2)` instead (spec ops.md §3.2). Border: reflect-101.
"""

from __future__ import annotations

import numpy as np

from ndd_triton.ops._filter_common import filter_span, float_or_input_dtype, per_axis_table
from ndd_triton.ops.schema import Arg, Call, Input, OpSchema, OutputSpec

MAX_WINDOW = 31


def _check_windows(call: Call, name: str, table: np.ndarray, smallest: int) -> None:
    for i, row in enumerate(table):
        for w in row:
            if w % 2 == 0 or not smallest <= w <= MAX_WINDOW:
                raise call.error(f"argument '{name}' sample {i}: expected an odd window size in "
                                 f"{smallest}..{MAX_WINDOW}; got {int(w)}")


def _infer(call: Call) -> OutputSpec:
    inp = call.inputs[0]
    _, count = filter_span(call)
    windows = per_axis_table(call, "window_size", count, np.int64)
    _check_windows(call, "window_size", windows, 3)
    if call.smoothing_size is None:
        smoothing = windows.copy()
    else:
        smoothing = per_axis_table(call, "smoothing_size", count, np.int64)
        _check_windows(call, "smoothing_size", smoothing, 1)
    if call.normalized_kernel:
        if "scale" in call.given:
            raise call.error("argument 'scale' cannot be combined with normalized_kernel=True "
                             "(it sets the scale itself)")
        # term of axis a: window sizes window[a] and smoothing[b] for b != a
        total = windows + smoothing.sum(axis=1, keepdims=True) - smoothing
        scales = np.exp2(-(total - count - 2).astype(np.float64))
    else:
        scales = per_axis_table(call, "scale", count, np.float64)
    call.derive("lap_windows", windows, per_sample=True)
    call.derive("lap_smoothing", smoothing, per_sample=True)
    call.derive("lap_scales", scales, per_sample=True)
    return OutputSpec(float_or_input_dtype(call), inp.shapes.copy(), inp.layout)


schema = OpSchema(
    name="laplacian",
    doc="Sum of the second derivatives over the spatial axes (separable Sobel-type windows).",
    inputs=(Input("input"),),
    args=(
        Arg("window_size", "int", default=3, per_sample=True, vector=True, per_frame=True,
            doc="Derivative window (odd, 3..31): one value or one per spatial axis."),
        Arg("smoothing_size", "int", per_sample=True, vector=True, per_frame=True,
            doc="Smoothing window (odd, 1..31) along the other axes; default: window_size."),
        Arg("scale", "float", default=1.0, per_sample=True, vector=True, per_frame=True,
            doc="Factor of each axis' partial derivative: one value or one per axis."),
        Arg("normalized_kernel", "bool", default=False,
            doc="Scale each term by 2^-(sum of its window sizes - ndim - 2); excludes scale."),
        Arg("dtype", "dtype", doc="Output type: the input type (default) or float32."),
    ),
    infer=_infer,
)
