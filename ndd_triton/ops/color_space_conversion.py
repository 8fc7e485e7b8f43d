"""color_space_conversion: RGB/BGR/GRAY/YCbCr conversions of uint8 images (DALI semantics).

Every conversion is a per-sample affine transform `out = M · pixel + offset` with a
`[C_out, C_in]` matrix (BT.601 studio swing for YCbCr, spec ops.md §2.9), applied by the shared
colour kernels; results are rounded half away from zero and saturated.
"""

from __future__ import annotations

import numpy as np

from ndd_triton.core import dtype as _dtype
from ndd_triton.ops._color_matrix import conversion_matrix
from ndd_triton.ops.schema import REQUIRED, Arg, Call, Input, OpSchema, OutputSpec

_NAMES = {0: "RGB", 1: "BGR", 2: "GRAY", 3: "YCbCr", 4: "ANY_DATA"}
_CHANNELS = {"RGB": 3, "BGR": 3, "GRAY": 1, "YCbCr": 3}


def _infer(call: Call) -> OutputSpec:
    inp = call.inputs[0]
    if inp.dtype != _dtype.uint8:
        raise call.error(f"input 0 has dtype {inp.dtype}; only uint8 is supported", TypeError)
    src, dst = _NAMES[call.image_type], _NAMES[call.output_type]
    if "ANY_DATA" in (src, dst):
        raise call.error(f"conversion from {src} to {dst} is not supported; ANY_DATA has no "
                         "colour space")
    if src == dst:
        raise call.error(f"arguments 'image_type' and 'output_type': conversion from {src} to "
                         f"{dst} is not supported (same colour space)")
    layout = inp.layout or "HWC"
    axis = layout.index("C")
    channels = inp.shapes[:, axis]
    bad = np.flatnonzero(channels != _CHANNELS[src])
    if len(bad):
        i = int(bad[0])
        raise call.error(f"input 0 sample {i}: image_type {src} expects {_CHANNELS[src]} "
                         f"channel(s); got {int(channels[i])}")
    matrix, offset = conversion_matrix(src, dst)
    n = call.batch_size
    call.derive("color_matrix", np.broadcast_to(matrix, (n, *matrix.shape)).astype(np.float32),
                per_sample=True)  # fmt: skip
    call.derive("color_offset", np.broadcast_to(offset, (n, len(offset))).astype(np.float32),
                per_sample=True)  # fmt: skip
    shapes = inp.shapes.copy()
    shapes[:, axis] = matrix.shape[0]
    return OutputSpec(_dtype.uint8, shapes, inp.layout)


schema = OpSchema(
    name="color_space_conversion",
    doc="Converts uint8 images between RGB, BGR, GRAY and YCbCr (BT.601 studio swing).",
    inputs=(Input("input", layouts=("FDHWC", "FHWC", "DHWC", "HWC")),),
    args=(
        Arg("image_type", "enum", default=REQUIRED, choices=tuple(_NAMES),
            doc="Colour space of the input: RGB, BGR, GRAY or YCbCr."),
        Arg("output_type", "enum", default=REQUIRED, choices=tuple(_NAMES),
            doc="Colour space of the output: RGB, BGR, GRAY or YCbCr."),
    ),
    infer=_infer,
)
