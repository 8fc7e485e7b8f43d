"""gaussian_blur: separable Gaussian over the spatial axes, reflect-101 border (DALI semantics).

Per spatial axis (outermost first): only sigma -> window `2·ceil(3·sigma)+1`; only window_size ->
`sigma = ((window-1)/2 - 1)·0.3 + 0.8`; the taps are the sampled Gaussian normalised to sum 1
(spec ops.md §3.1, golden README "Geometry"). Frames (F) and channels (C) are not filtered.
"""

from __future__ import annotations

import numpy as np

from ndd_triton.ops._filter_common import filter_span, float_or_input_dtype, per_axis_table
from ndd_triton.ops.limits import check_window
from ndd_triton.ops.schema import Arg, Call, Input, OpSchema, OutputSpec


def _infer(call: Call) -> OutputSpec:
    inp = call.inputs[0]
    _, count = filter_span(call)
    sigma = per_axis_table(call, "sigma", count, np.float64)
    window = per_axis_table(call, "window_size", count, np.int64)
    bad = (sigma < 0) | (window < 0) | ((sigma == 0) & (window == 0)) | \
        ((window % 2 == 0) & (window != 0))  # fmt: skip
    for i in np.flatnonzero(bad.any(axis=1))[:1].tolist():  # the first bad sample says why
        for axis in range(count):
            s, w = sigma[i, axis], window[i, axis]
            if s < 0 or w < 0:
                raise call.error(f"argument '{'sigma' if s < 0 else 'window_size'}' sample {i}: "
                                 f"must not be negative; got {s if s < 0 else w}")
            if s == 0 and w == 0:
                raise call.error(f"argument 'sigma' sample {i}: sigma and window_size are both 0 "
                                 f"for spatial axis {axis}; give at least one of them")
            if w % 2 == 0 and w != 0:
                raise call.error(f"argument 'window_size' sample {i}: the window must have an "
                                 f"odd length; got {w}")
    # the window each axis will use (from sigma where window_size is 0), before it is built
    taps = np.where(window > 0, window, 2 * np.ceil(3 * sigma) + 1)
    check_window(call, "sigma" if (window == 0).any() and (taps > window).any() else
                 "window_size", taps, "Gaussian window")  # fmt: skip
    call.derive("sigmas", sigma, per_sample=True)
    call.derive("windows", window, per_sample=True)
    return OutputSpec(float_or_input_dtype(call), inp.shapes.copy(), inp.layout)


schema = OpSchema(
    name="gaussian_blur",
    doc="Blurs each sample with a separable Gaussian over its spatial axes (reflect-101 border).",
    inputs=(Input("input"),),
    args=(
        Arg("sigma", "float", default=0.0, per_sample=True, vector=True, per_frame=True,
            doc="Standard deviation: one value, or one per spatial axis (outermost first)."),
        Arg("window_size", "int", default=0, per_sample=True, vector=True, per_frame=True,
            doc="Odd kernel diameter: one value, or one per spatial axis; 0 = from sigma."),
        Arg("dtype", "dtype", doc="Output type: the input type (default) or float32."),
    ),
    infer=_infer,
)
