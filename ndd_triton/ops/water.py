"""water: sinusoidal displacement of each image (DALI `water`).

Output pixel `(x, y)` (integer pixel coordinates) samples the input at
`(x + ampl_x * sin(freq_x * y + phase_x), y + ampl_y * cos(freq_y * x + phase_y))`: NN takes the
floor, LINEAR blends the four neighbours; points outside read `fill_value`. `mask=0` passes a
sample through unchanged (a scalar mask is honoured, unlike DALI 2.4's quirk).
"""

from __future__ import annotations

import math

from ndd_triton.core.dtype import float32, uint8
from ndd_triton.ops.schema import Arg, Call, Input, OpSchema, OutputSpec, same_as_input

REMAP_DTYPES = (uint8, float32)
# DALI documents the default frequency as 0.049087; it is 2 pi / 128 exactly (the difference flips
# floor() where a wave crosses zero, e.g. at x = 32: checked against DALI 2.4).
_FREQ = 2 * math.pi / 128


def remap_args() -> tuple[Arg, ...]:
    """fill_value / interp_type / mask, shared by water and sphere."""
    return (
        Arg("fill_value", "float", default=0.0, doc="Value for source points outside the image."),
        Arg("interp_type", "enum", default=0, choices=tuple(range(6)),
            doc="INTERP_NN (default) or INTERP_LINEAR."),
        Arg("mask", "int", default=1, per_sample=True,
            doc="0 passes the sample through unchanged."),
    )  # fmt: skip


def check_remap(call: Call) -> OutputSpec:
    """Validate the interpolation; output = input metadata."""
    if int(call.interp_type) not in (0, 1):
        raise call.error(
            f"argument 'interp_type': only INTERP_NN (0) and INTERP_LINEAR (1) "
            f"are supported; got {int(call.interp_type)}"
        )
    return same_as_input(call)


schema = OpSchema(
    name="water",
    doc="Displaces pixels along sine waves in x and y (an underwater look).",
    inputs=(Input("input", layouts=("HWC",), dtypes=REMAP_DTYPES),),
    args=(
        Arg("ampl_x", "float", default=10.0, doc="Amplitude of the x displacement (pixels)."),
        Arg("ampl_y", "float", default=10.0, doc="Amplitude of the y displacement (pixels)."),
        Arg("freq_x", "float", default=_FREQ, doc="Frequency of the x wave (rad / pixel)."),
        Arg("freq_y", "float", default=_FREQ, doc="Frequency of the y wave (rad / pixel)."),
        Arg("phase_x", "float", default=0.0, doc="Phase of the x wave (rad)."),
        Arg("phase_y", "float", default=0.0, doc="Phase of the y wave (rad)."),
        *remap_args(),
    ),
    infer=check_remap,
)
