"""squeeze: remove size-1 axes given by index or by layout letter (ops.md §4.6).

Negative `axes` count from the end as in NumPy (DALI 2.4 silently ignores `axes=[-1]`; the spec
asks for NumPy semantics).
"""

from __future__ import annotations

import numpy as np

from ndd_triton.ops._tensor_args import sample_rows
from ndd_triton.ops.schema import Arg, Call, Input, OpSchema, OutputSpec


def _axes_of(call: Call, ndim: int) -> list[list[int]]:
    """Per-sample sorted axes to remove, from `axes` or `axis_names`."""
    inp = call.inputs[0]
    if (call.axes is None) == (call.axis_names is None):
        raise call.error(
            "give exactly one of 'axes' and 'axis_names'; got "
            f"{'both' if call.axes is not None else 'neither'}",
            RuntimeError,
        )
    if call.axis_names is not None:
        layout = inp.layout or ""
        missing = [c for c in call.axis_names if c not in layout]
        if missing:
            raise call.error(f"argument 'axis_names' {call.axis_names!r}: axis "
                             f"{''.join(missing)!r} is not in the input layout {layout!r}",
                             RuntimeError)  # fmt: skip
        return [sorted({layout.index(c) for c in call.axis_names})] * call.batch_size
    per_sample = []
    for i, row in enumerate(sample_rows(call.axes, call.batch_size)):
        axes = set()
        for a in (int(v) for v in row):
            if not -ndim <= a < ndim:
                raise call.error(f"argument 'axes' sample {i}: axis {a} is out of range for "
                                 f"{ndim}-D input", RuntimeError)  # fmt: skip
            axes.add(a % ndim)
        per_sample.append(sorted(axes))
    return per_sample


def _infer(call: Call) -> OutputSpec:
    inp = call.inputs[0]
    per_sample = _axes_of(call, inp.ndim)
    if len({len(a) for a in per_sample}) > 1:
        raise call.error("argument 'axes' must remove the same number of axes from every "
                         "sample", RuntimeError)  # fmt: skip
    rows = []
    for i, axes in enumerate(per_sample):
        shape = inp.shapes[i]
        empty = int(np.prod(shape, dtype=np.int64)) == 0
        for a in axes:
            if shape[a] != 1 and not empty:
                raise call.error(f"sample {i}: cannot remove axis {a} of extent {int(shape[a])}"
                                 f" (shape {tuple(int(v) for v in shape)}); only size-1 axes "
                                 "can be squeezed", RuntimeError)  # fmt: skip
        rows.append([int(v) for d, v in enumerate(shape) if d not in axes])
    out_ndim = inp.ndim - (len(per_sample[0]) if per_sample else 0)
    shapes = np.array(rows, dtype=np.int64).reshape(call.batch_size, out_ndim)
    layout = None
    if inp.layout and per_sample and all(a == per_sample[0] for a in per_sample):
        layout = "".join(c for d, c in enumerate(inp.layout) if d not in per_sample[0]) or None
    return OutputSpec(inp.dtype, shapes, layout)


schema = OpSchema(
    name="squeeze",
    doc="Removes size-1 axes given by index (`axes`) or by layout letter (`axis_names`).",
    inputs=(Input("data"),),
    args=(
        Arg(
            "axes",
            "int",
            vector=True,
            per_sample=True,
            doc="Axes to remove; negative values count from the end (NumPy).",
        ),
        Arg("axis_names", "layout", doc="Layout letters of the axes to remove."),
    ),
    infer=_infer,
)
