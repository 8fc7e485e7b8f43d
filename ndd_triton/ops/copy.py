"""copy: a deep copy of the input (core.md §18)."""

from __future__ import annotations

from ndd_triton.ops.schema import Input, OpSchema, same_as_input

schema = OpSchema(
    name="copy",
    doc="Returns a deep copy of the input (same dtype, shapes and layout).",
    inputs=(Input("input"),),
    args=(),
    infer=same_as_input,
)
