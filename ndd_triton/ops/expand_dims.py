"""expand_dims: insert size-1 axes at the given output positions (ops.md §4.5)."""

from __future__ import annotations

import numpy as np

from ndd_triton.ops._tensor_args import insert_letters
from ndd_triton.ops.schema import REQUIRED, Arg, Call, Input, OpSchema, OutputSpec


def _infer(call: Call) -> OutputSpec:
    inp = call.inputs[0]
    axes = [int(a) for a in call.axes]
    out_ndim = inp.ndim + len(axes)
    for a in axes:
        if a < 0:
            raise call.error(f"argument 'axes': Axis value can't be negative; got {axes}",
                             RuntimeError)  # fmt: skip
        if a >= out_ndim:
            raise call.error(
                f"argument 'axes': axis {a} is out of range for a {out_ndim}-D "
                f"result (expected 0..{out_ndim - 1}); got {axes}",
                RuntimeError,
            )
    if len(set(axes)) != len(axes):
        raise call.error(f"argument 'axes' has repeated values: {axes}", RuntimeError)
    names = call.new_axis_names or ""
    if names and len(names) != len(axes):
        raise call.error(f"argument 'new_axis_names' {names!r} has {len(names)} letters; "
                         f"expected one per new axis ({len(axes)})", RuntimeError)  # fmt: skip
    keep = [d for d in range(out_ndim) if d not in axes]
    shapes = np.ones((call.batch_size, out_ndim), dtype=np.int64)
    shapes[:, keep] = inp.shapes
    return OutputSpec(inp.dtype, shapes, insert_letters(inp.layout, inp.ndim, axes, names))


schema = OpSchema(
    name="expand_dims",
    doc="Inserts size-1 axes at output positions `axes` (the data is unchanged).",
    inputs=(Input("data"),),
    args=(
        Arg(
            "axes",
            "int",
            default=REQUIRED,
            vector=True,
            doc="Output positions of the new axes (non-negative).",
        ),
        Arg(
            "new_axis_names",
            "layout",
            default="",
            doc="One layout letter per new axis; empty clears the output layout.",
        ),
    ),
    infer=_infer,
)
