"""filter: 2-D/3-D correlation of each sample with its own kernel (DALI `filter` semantics).

`out[p] = Σ_i k[i] · in[p - anchor + i]` over the spatial axes (the kernel is not flipped),
float32 math, integer outputs rounded ties-to-even and saturated (spec ops.md §3.3). Border
modes: reflect_101, reflect_1001, wrap, clamp, constant (third input = per-sample fill value,
default 0). mode="valid" shrinks the output by `k - 1` per axis and ignores the anchor.
"""

from __future__ import annotations

import numpy as np

from ndd_triton.core import dtype as _dtype
from ndd_triton.ops._filter_common import filter_span, float_or_input_dtype, per_axis_table
from ndd_triton.ops.schema import Arg, Call, Input, OpSchema, OutputSpec

DATA_DTYPES = (_dtype.uint8, _dtype.int8, _dtype.uint16, _dtype.int16, _dtype.float16,
               _dtype.float32)  # fmt: skip
BORDER_MODES = ("reflect_101", "reflect_1001", "wrap", "clamp", "constant")


def _check_fill(call: Call) -> None:
    data, fill = call.inputs[0], call.inputs[2]
    if fill is None:
        return
    if fill.dtype != data.dtype:
        raise call.error(f"input 2 (fill_value) has dtype {fill.dtype}; expected the data type "
                         f"{data.dtype}", TypeError)
    sizes = np.prod(fill.shapes, axis=1) if fill.ndim else np.ones(call.batch_size)
    bad = np.flatnonzero(sizes != 1)
    if len(bad):
        raise call.error(f"input 2 (fill_value) sample {int(bad[0])}: expected a scalar; got "
                         f"shape {tuple(int(s) for s in fill.shapes[bad[0]])}")


def _infer(call: Call) -> OutputSpec:
    data, filt = call.inputs[0], call.inputs[1]
    first, count = filter_span(call)
    if filt.ndim != count:
        raise call.error(f"input 1 (filter) has {filt.ndim} dimensions; expected {count} (one "
                         f"per spatial axis of data layout '{data.layout or ''}')")
    _check_fill(call)
    ksize = filt.shapes
    shapes = data.shapes.copy()
    spatial = shapes[:, first:first + count]
    if call.mode == "valid":
        anchors = np.zeros_like(ksize)
        small = np.argwhere(spatial < ksize)
        if len(small):
            i = int(small[0][0])
            raise call.error(f"input 1 (filter) sample {i}: kernel {tuple(ksize[i].tolist())} "
                             f"is larger than the data {tuple(spatial[i].tolist())} in "
                             "mode='valid'")
        shapes[:, first:first + count] = spatial - ksize + 1
    else:
        anchors = per_axis_table(call, "anchor", count, np.int64)
        anchors = np.where(anchors == -1, ksize // 2, anchors)
        bad = np.argwhere((anchors < 0) | (anchors >= ksize))
        if len(bad):
            i, a = (int(v) for v in bad[0])
            raise call.error(f"argument 'anchor' sample {i}: expected -1 or 0..{ksize[i][a] - 1} "
                             f"for spatial axis {a} (kernel extent {ksize[i][a]}); got "
                             f"{anchors[i][a]}")
    call.derive("anchors", anchors, per_sample=True)
    return OutputSpec(float_or_input_dtype(call), shapes, data.layout)


schema = OpSchema(
    name="filter",
    doc="Correlates each sample with a per-sample kernel over its spatial axes.",
    inputs=(
        Input("data", dtypes=DATA_DTYPES,
              doc="Images, videos or volumes; channel-first or -last, frames first."),
        Input("filter", dtypes=(_dtype.float32,),
              doc="float32 kernel with one dimension per spatial axis (per sample or shared)."),
        Input("fill_value", optional=True,
              doc="Scalar of the data type used by border='constant' (default 0)."),
    ),
    args=(
        Arg("anchor", "int", default=-1, per_sample=True, vector=True, per_frame=True,
            doc="Kernel position over the output pixel per axis; -1 = kernel extent // 2."),
        Arg("border", "str", default="reflect_101", choices=BORDER_MODES,
            doc="How out-of-range samples are read."),
        Arg("mode", "str", default="same", choices=("same", "valid"),
            doc="same: output size = input size; valid: only full overlaps (shrinks by k-1)."),
        Arg("dtype", "dtype", doc="Output type: the input type (default) or float32."),
    ),
    infer=_infer,
)
