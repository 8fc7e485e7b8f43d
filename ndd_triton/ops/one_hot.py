"""one_hot: expand class indices into one-hot vectors along a new axis (ops.md §4.10).

Float inputs are truncated (1.7 is class 1); indices outside `[0, num_classes)` give all
`off_value`; on/off values are converted to `dtype` as DALI 2.4 does (C++ float -> int casts:
truncation toward zero, wrap-around into narrow types; NaN / out of int32 range -> INT32_MIN
first). DALI's legacy rule: when `axis` is not given and every sample holds exactly one element
with shape (1,), the samples are treated as scalars (result `(num_classes,)`); an explicit
`axis` (even -1) keeps the (1,) axis.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ndd_triton.core.dtype import bfloat16, float32
from ndd_triton.ops._tensor_args import cxx_cast, insert_letters
from ndd_triton.ops.schema import Arg, Call, Input, OpSchema, OutputSpec


def on_off_values(on: float, off: float, dtype: np.dtype[Any]) -> np.ndarray:
    """`[on, off]` converted like DALI 2.4 (`cxx_cast`: truncate, wrap; u8 300.7 -> 44)."""
    return cxx_cast([on, off], dtype)


def _infer(call: Call) -> OutputSpec:
    inp = call.inputs[0]
    classes = int(call.num_classes)
    if classes < 0:
        raise call.error(f"argument 'num_classes' must be non-negative; got {classes}")
    if call.dtype == bfloat16:
        raise call.error("argument 'dtype' is bfloat16; one_hot does not support it", TypeError)
    shapes = inp.shapes
    layout = inp.layout
    legacy = call.axis is None
    # DALI's legacy rule: without `axis`, samples that all hold one element (any rank, e.g.
    # (1,) or (1, 1)) count as scalars
    if legacy and inp.ndim >= 1 and len(shapes) and (shapes.prod(axis=1) == 1).all():
        shapes = shapes[:, :0]
        layout = None
    ndim = shapes.shape[1]
    axis = -1 if legacy else int(call.axis)
    if axis == -1:
        axis = ndim
    if not 0 <= axis <= ndim:
        raise call.error(f"argument 'axis' {axis} is out of range for {ndim}-D input "
                         f"(expected -1 or 0..{ndim})", RuntimeError)  # fmt: skip
    if call.axis_name is not None and len(call.axis_name) != 1:
        raise call.error(f"argument 'axis_name' must be one letter; got {call.axis_name!r}")
    call.derive("position", axis)
    call.derive("on_off", on_off_values(call.on_value, call.off_value, call.dtype.numpy_dtype))
    call.derive("sample_shapes", shapes, per_sample=True)
    out = np.insert(shapes, axis, classes, axis=1).astype(np.int64)
    return OutputSpec(call.dtype, out, insert_letters(layout, ndim, [axis],
                                                      call.axis_name or ""))  # fmt: skip


schema = OpSchema(
    name="one_hot",
    doc="One-hot encodes class indices along a new axis of length `num_classes`.",
    inputs=(Input("input"),),
    args=(
        Arg("num_classes", "int", default=0, doc="Length of the new axis (0: empty output)."),
        Arg("axis", "int", doc="Position of the new axis (-1 or absent: appended; absent also "
            "applies DALI's legacy rule: samples that all hold one element count as scalars)."),
        Arg("axis_name", "layout", doc="Layout letter of the new axis."),
        Arg("dtype", "dtype", default=float32, doc="Output data type."),
        Arg("on_value", "float", default=1.0, doc="Value at the class index (cast to dtype)."),
        Arg("off_value", "float", default=0.0, doc="Value elsewhere (cast to dtype)."),
    ),
    infer=_infer,
)
