"""grid_mask: zero square cells on a rotated, shifted grid (DALI `grid_mask`).

For integer pixel coordinates `(x, y)`, in grid units: `u = (cos a / tile) x - (sin a / tile) y
- shift_x / tile`, `v = (sin a / tile) x + (cos a / tile) y - shift_y / tile`; the pixel (all
channels) becomes 0 iff `frac(u) < ratio` and `frac(v) < ratio`. float32 arithmetic with the
coefficients rounded from double, as DALI 2.4 (its masks at integer shifts are not periodic:
(27 - 2) / 25 lands just below 1). The layout is ignored: samples are HW or HWC by ndim, as in
DALI.
"""

from __future__ import annotations

import numpy as np

from ndd_triton.ops.schema import Arg, Call, Input, OpSchema, OutputSpec, same_as_input


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
    # DALI's float32 map to grid units, recorded (600 random cases): a = cos/tile, b = sin/tile
    # and the shifts / tile rounded from double; u = a x - b y - sx/tile in float32
    params = np.stack(
        [
            np.cos(angle) / tile,
            np.sin(angle) / tile,
            np.asarray(call.shift_x, np.float64).reshape(-1) / tile,
            np.asarray(call.shift_y, np.float64).reshape(-1) / tile,
            np.asarray(call.ratio, np.float32).reshape(-1),
        ],
        axis=1,
    ).astype(np.float32)
    call.derive("grid_params", params, per_sample=True)  # a b tx ty ratio
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
