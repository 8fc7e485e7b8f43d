"""cat, stack: join the inputs sample by sample along an existing or a new axis (ops.md §4.9).

Inputs are separate positionals (`cat(a, b, c)`); a Tensor among Batches is broadcast. All inputs
must share dtype and ndim; `cat` inputs may differ only in the joined axis, `stack` inputs must
have equal shapes. `cat` keeps the first input's layout; `stack` gets a layout only when
`axis_name` names the new axis.
"""

from __future__ import annotations

import numpy as np

from ndd_triton.ops._tensor_args import insert_letters
from ndd_triton.ops.schema import Arg, Call, Input, InputMeta, OpSchema, OutputSpec


def _check_same_kind(call: Call) -> list[InputMeta]:
    metas = [m for m in call.inputs if m is not None]
    first = metas[0]
    for k, m in enumerate(metas[1:], 1):
        if m.dtype != first.dtype or m.ndim != first.ndim:
            raise call.error(f"All inputs must have the same type and number of dimensions; "
                             f"input 0 is {first.ndim}-D {first.dtype}, input {k} is "
                             f"{m.ndim}-D {m.dtype}", RuntimeError)  # fmt: skip
    return metas


def _axis(call: Call, ndim: int, new_axis: bool) -> int:
    low, high = (-ndim, ndim) if new_axis else (-ndim, ndim - 1)
    axis = int(call.axis)
    if not low <= axis <= high:
        raise call.error(f"argument 'axis' {axis} is out of range for {ndim}-D inputs "
                         f"(expected {low}..{high})", RuntimeError)  # fmt: skip
    return axis + (ndim + 1 if new_axis else ndim) if axis < 0 else axis


def _infer_cat(call: Call) -> OutputSpec:
    metas = _check_same_kind(call)
    first = metas[0]
    if call.axis_name is not None:
        layout = first.layout or ""
        if len(call.axis_name) != 1 or call.axis_name not in layout:
            raise call.error(f"argument 'axis_name' {call.axis_name!r} is not an axis of the "
                             f"input layout {layout!r}", RuntimeError)  # fmt: skip
        axis = layout.index(call.axis_name)
    else:
        axis = _axis(call, first.ndim, new_axis=False)
    others = [d for d in range(first.ndim) if d != axis]
    for k, m in enumerate(metas[1:], 1):
        bad = np.flatnonzero((m.shapes[:, others] != first.shapes[:, others]).any(axis=1))
        if len(bad):
            i = int(bad[0])
            raise call.error(f"Concatenated tensors can differ in size only in the "
                             f"concatenation axis ({axis}); sample {i}: input 0 has shape "
                             f"{tuple(int(v) for v in first.shapes[i])}, input {k} has "
                             f"{tuple(int(v) for v in m.shapes[i])}", RuntimeError)  # fmt: skip
    call.derive("resolved_axis", axis)
    shapes = first.shapes.copy()
    shapes[:, axis] = sum(m.shapes[:, axis] for m in metas)
    return OutputSpec(first.dtype, shapes, first.layout)


def _infer_stack(call: Call) -> OutputSpec:
    metas = _check_same_kind(call)
    first = metas[0]
    axis = _axis(call, first.ndim, new_axis=True)
    for k, m in enumerate(metas[1:], 1):
        bad = np.flatnonzero((m.shapes != first.shapes).any(axis=1))
        if len(bad):
            i = int(bad[0])
            raise call.error(f"stacked tensors must have equal shapes; sample {i}: input 0 has "
                             f"shape {tuple(int(v) for v in first.shapes[i])}, input {k} has "
                             f"{tuple(int(v) for v in m.shapes[i])}", RuntimeError)  # fmt: skip
    if call.axis_name is not None and len(call.axis_name) != 1:
        raise call.error(f"argument 'axis_name' must be one letter; got {call.axis_name!r}",
                         RuntimeError)  # fmt: skip
    call.derive("resolved_axis", axis)
    shapes = np.insert(first.shapes, axis, len(metas), axis=1).astype(np.int64)
    layout = insert_letters(first.layout, first.ndim, [axis], call.axis_name or "")
    return OutputSpec(first.dtype, shapes, layout)


_INPUTS = (
    Input("input_0", doc="First input."),
    Input("inputs", variadic=True, doc="More inputs, as separate positionals."),
)

cat = OpSchema(
    name="cat",
    doc="Concatenates the inputs sample by sample along an existing axis.",
    inputs=_INPUTS,
    args=(
        Arg("axis", "int", default=0, doc="Axis to join along (negative counts from the end)."),
        Arg("axis_name", "layout", doc="Layout letter of the axis (instead of `axis`)."),
    ),
    infer=_infer_cat,
    module="concat",
)

stack = OpSchema(
    name="stack",
    doc="Stacks the inputs sample by sample along a new axis inserted at `axis`.",
    inputs=_INPUTS,
    args=(
        Arg("axis", "int", default=0, doc="Position of the new axis (-1: last)."),
        Arg(
            "axis_name",
            "layout",
            doc="Layout letter of the new axis (the output has no layout without it).",
        ),
    ),
    infer=_infer_stack,
    module="concat",
)

schemas = [cat, stack]
