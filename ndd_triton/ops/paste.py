"""paste: put each image on a larger constant-colour canvas (DALI `paste`).

Canvas extents are `trunc(ratio * extent)` (float32 product), raised to at least
`min_canvas_size`; the image's top-left corner lands at `trunc(paste_pos * (canvas - extent))`
(checked against tests/golden).
"""

from __future__ import annotations

import numpy as np

from ndd_triton.core.dtype import uint8
from ndd_triton.ops import limits
from ndd_triton.ops.schema import REQUIRED, Arg, Call, Input, OpSchema, OutputSpec


def _infer(call: Call) -> OutputSpec:
    inp = call.inputs[0]
    n = call.batch_size
    channels = inp.shapes[:, 2]
    fill = np.asarray(call.fill_value, np.int64).reshape(-1)
    bad = np.flatnonzero(channels != fill.size)
    if bad.size:
        i = int(bad[0])
        raise call.error(
            f"argument 'fill_value' has {fill.size} values; expected one per "
            f"channel ({int(channels[i])} for sample {i})"
        )
    if call.n_channels != fill.size:
        raise call.error(
            f"argument 'n_channels' is {call.n_channels} but 'fill_value' has "
            f"{fill.size} values (one per channel)"
        )
    ratio = np.asarray(call.ratio, np.float64).reshape(n)
    bad = np.flatnonzero(~(ratio >= 1))
    if bad.size:
        i = int(bad[0])
        raise call.error(
            f"argument 'ratio' sample {i}: ratio of less than 1 is not supported; got {ratio[i]:g}",
            RuntimeError,
        )
    hw = inp.shapes[:, :2]
    min_size = np.asarray(call.min_canvas_size, np.float64).reshape(n, 1)
    limits.check_count(call, "min_canvas_size", min_size**2)
    # the product in float32, as DALI (recorded: 10 x 2.3 -> 23, where float64 gives 22)
    limits.check_count(call, "ratio", (ratio[:, None] * hw).prod(axis=1) if n else 0)
    scaled = ratio.astype(np.float32)[:, None] * hw.astype(np.float32)
    canvas = np.maximum(np.trunc(scaled), np.trunc(min_size)).astype(np.int64)
    pos = np.stack(
        [
            np.asarray(call.paste_y, np.float64).reshape(n),
            np.asarray(call.paste_x, np.float64).reshape(n),
        ],
        axis=1,
    )
    bad = np.flatnonzero(((pos < 0) | (pos > 1)).any(axis=1))
    if bad.size:
        i = int(bad[0])
        raise call.error(
            f"sample {i}: paste_x and paste_y must be in [0, 1]; got ({pos[i, 1]:g}, {pos[i, 0]:g})"
        )
    call.derive("paste_anchor", np.trunc(pos * (canvas - hw)).astype(np.int64), per_sample=True)
    call.derive("paste_fill", fill.astype(np.uint8))
    shapes = np.concatenate([canvas, channels[:, None]], axis=1)
    return OutputSpec(inp.dtype, shapes, "HWC")


schema = OpSchema(
    name="paste",
    doc="Places each image on a larger canvas filled with a constant colour.",
    inputs=(Input("input", layouts=("HWC",), dtypes=(uint8,)),),
    args=(
        Arg("ratio", "float", default=REQUIRED, per_sample=True,
            doc="Canvas size / image size (>= 1)."),
        Arg("fill_value", "int", default=REQUIRED, vector=True,
            doc="Canvas colour, one value per channel."),
        Arg("n_channels", "int", default=3, doc="Number of channels of the input."),
        Arg("paste_x", "float", default=0.5, per_sample=True,
            doc="Horizontal position in [0, 1]: offset = paste_x * (canvas_w - w)."),
        Arg("paste_y", "float", default=0.5, per_sample=True,
            doc="Vertical position in [0, 1]."),
        Arg("min_canvas_size", "float", default=0.0, per_sample=True,
            doc="Minimum canvas extent after scaling."),
    ),
    infer=_infer,
)  # fmt: skip
