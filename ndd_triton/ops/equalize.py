"""equalize: per-channel (and per-frame) histogram equalisation of uint8 images (DALI/OpenCV).

With the channel's histogram cdf and `cdf_min` the first nonzero cdf value,
`out(v) = rint(float32(cdf(v) - cdf_min) · float32(255 / (N - cdf_min)))`, ties to even (OpenCV's
equalizeHist rule, which reproduces DALI's observed `42.5 -> 42`); a constant channel is
returned unchanged (spec ops.md §2.10).
"""

from __future__ import annotations

from ndd_triton.core import dtype as _dtype
from ndd_triton.ops.schema import Call, Input, OpSchema, OutputSpec

EQUALIZE_LAYOUTS = ("HW", "HWC", "CHW", "FHW", "FHWC", "FCHW")


def _infer(call: Call) -> OutputSpec:
    inp = call.inputs[0]
    if inp.dtype != _dtype.uint8:
        raise call.error(f"input 0 has dtype {inp.dtype}; only uint8 is supported", TypeError)
    return OutputSpec(inp.dtype, inp.shapes.copy(), inp.layout)


schema = OpSchema(
    name="equalize",
    doc="Histogram-equalises every channel of every frame of uint8 images.",
    inputs=(Input("input", layouts=EQUALIZE_LAYOUTS),),
    args=(),
    infer=_infer,
)
