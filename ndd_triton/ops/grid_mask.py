"""grid_mask: zero square cells on a rotated, shifted grid (DALI `grid_mask`).

For integer pixel coordinates `(x, y)`: `qx = cos(a) x - sin(a) y - shift_x`,
`qy = sin(a) x + cos(a) y - shift_y`; the pixel (all channels) becomes 0 iff
`qx mod tile < ratio * tile` and `qy mod tile < ratio * tile` (floor modulo). The layout is
ignored: samples are HW or HWC by ndim, as in DALI. float32 math on both backends.
"""

from __future__ import annotations

import numpy as np

from ndd_triton.schema import Arg, Call, Input, OpSchema, OutputSpec, same_as_input


def _infer(call: Call) -> OutputSpec:
    if call.inputs[0].ndim not in (2, 3):
        raise call.error(
            f"input 0 must be HW or HWC (2 or 3 dimensions); got {call.inputs[0].ndim} dimensions"
        )
    tile = np.asarray(call.tile, np.int64).reshape(-1)
    bad = np.flatnonzero(tile <= 0)
    if bad.size:
        raise call.error(
            f"argument 'tile' sample {int(bad[0])}: must be positive; got {int(tile[bad[0]])}",
            RuntimeError,
        )
    angle = np.asarray(call.angle, np.float64).reshape(-1)
    params = np.stack(
        [
            np.cos(angle),
            np.sin(angle),
            np.asarray(call.shift_x).reshape(-1),
            np.asarray(call.shift_y).reshape(-1),
            tile,
            np.asarray(call.ratio).reshape(-1) * tile,
        ],
        axis=1,
    ).astype(np.float32)
    call.derive("grid_params", params, per_sample=True)  # cos sin sx sy tile black
    return same_as_input(call)


schema = OpSchema(
    name="grid_mask",
    doc="Zeroes the cells of a (rotated, shifted) square grid in each image.",
    inputs=(Input("input"),),
    args=(
        Arg("tile", "int", default=100, per_sample=True, doc="Grid period in pixels (> 0)."),
        Arg("ratio", "float", default=0.5, per_sample=True,
            doc="Side of the zeroed square / tile (1 or more zeroes everything)."),
        Arg("angle", "float", default=0.0, per_sample=True, doc="Grid rotation in radians."),
        Arg("shift_x", "float", default=0.0, per_sample=True, doc="Grid shift along x."),
        Arg("shift_y", "float", default=0.0, per_sample=True, doc="Grid shift along y."),
    ),
    infer=_infer,
)  # fmt: skip
