"""coord_flip: mirror point coordinates about a centre (DALI `coord_flip`).

Input: float32 points `(N, D)`, D = 1..3, one point per row. `layout` names the meaning of the
columns (`"x"`, `"xy"`, `"xyz"` by default, e.g. `"yx"` or `"zyx"`); a flipped coordinate
becomes `2 * center - c` (float32), the others are copied. Flags and centres are per sample.
"""

from __future__ import annotations

import numpy as np

from ndd_triton.core.dtype import float32
from ndd_triton.ops._bbox import BoxTypeError, BoxValueError
from ndd_triton.ops.schema import Arg, Call, Input, OpSchema, OutputSpec

_AXES = "xyz"


def _infer(call: Call) -> OutputSpec:
    meta = call.inputs[0]
    if meta.dtype != float32:
        raise call.error(f"input 0 must be float32 points; got {meta.dtype} (Input is expected "
                         "to be float)", BoxTypeError)  # fmt: skip
    if meta.ndim != 2:
        raise call.error(f"input 0 must be 2-D points (N, D) with D = 1..3; got {meta.ndim}-D "
                         "samples", BoxValueError)  # fmt: skip
    dims = np.unique(meta.shapes[:, 1]) if len(meta.shapes) else np.array([2])
    if dims.size > 1 or not 1 <= int(dims[0]) <= 3:
        raise call.error(f"input 0 must be points (N, D) with D = 1..3, the same D for every "
                         f"sample; got D = {sorted(set(dims.tolist()))}", BoxValueError)
    ndim = int(dims[0])
    layout = call.layout or _AXES[:ndim]
    column = []  # which coordinate column holds x, y, z
    for name in _AXES[:ndim]:
        pos = layout.find(name)
        if not 0 <= pos < ndim:
            raise call.error(f"argument 'layout': dimension {name!r} not found among the first "
                             f"{ndim} letters of {layout!r} (points have {ndim} coordinates; "
                             f"use e.g. {_AXES[:ndim]!r})", BoxValueError)  # fmt: skip
        column.append(pos)
    n = call.batch_size
    flips = np.zeros((n, ndim), np.int64)
    centers = np.zeros((n, ndim), np.float32)
    for axis, pos in enumerate(column):
        flips[:, pos] = np.asarray(call.values[f"flip_{_AXES[axis]}"]).reshape(n) != 0
        centers[:, pos] = np.asarray(call.values[f"center_{_AXES[axis]}"], np.float32).reshape(n)
    call.derive("column_flip", flips, per_sample=True)
    call.derive("column_center", centers, per_sample=True)
    return OutputSpec(meta.dtype, meta.shapes.copy(), meta.layout)


schema = OpSchema(
    name="coord_flip",
    doc="Flips point coordinates (x, y, z) about per-sample centres.",
    inputs=(Input("input", doc="float32 points (N, D), D = 1..3."),),
    args=(
        Arg("flip_x", "int", default=1, per_sample=True, doc="Flip the x coordinate when nonzero."),
        Arg("flip_y", "int", default=0, per_sample=True, doc="Flip the y coordinate when nonzero."),
        Arg("flip_z", "int", default=0, per_sample=True, doc="Flip the z coordinate when nonzero."),
        Arg("center_x", "float", default=0.5, per_sample=True, doc="Flip centre on x."),
        Arg("center_y", "float", default=0.5, per_sample=True, doc="Flip centre on y."),
        Arg("center_z", "float", default=0.5, per_sample=True, doc="Flip centre on z."),
        Arg("layout", "str", default="",
            doc="Order of the coordinates (e.g. 'yx'); empty: 'x', 'xy' or 'xyz' by D."),
    ),
    infer=_infer,
    examples="`coord_flip([[0.1, 0.2], [0.7, 0.9]])` -> `[[0.9, 0.2], [0.3, 0.9]]`.",
)  # fmt: skip
