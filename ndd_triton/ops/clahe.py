"""clahe: contrast-limited adaptive histogram equalisation of uint8 images (OpenCV algorithm).

Per tile of a `tiles_y x tiles_x` grid: a histogram clipped at `clip_limit · tile_area / bins`
with the excess spread evenly (remainder to every `bins // remainder`-th bin), its cumulative
LUT scaled by `255 / tile_area`; pixels blend the four nearest tile LUTs bilinearly (tile
centres), as OpenCV's `createCLAHE` (4.x) does, including its reflect-101 padding when the
image size is not a multiple of the grid. RGB with `luma_only=True` equalises the luma
`0.299R + 0.587G + 0.114B` and scales the three channels by the luma gain.
"""

from __future__ import annotations

import numpy as np

from ndd_triton.core import dtype as _dtype
from ndd_triton.ops import limits
from ndd_triton.ops.schema import REQUIRED, Arg, Call, Input, OpSchema, OutputSpec


def _positive(value: object) -> str | None:
    return None if isinstance(value, int) and value > 0 else f"must be > 0; got {value}"


def _infer(call: Call) -> OutputSpec:
    inp = call.inputs[0]
    if inp.dtype != _dtype.uint8:
        raise call.error(f"input 0 has dtype {inp.dtype}; only uint8 is supported", TypeError)
    channels = inp.shapes[:, 2]
    bad = np.flatnonzero((channels != 1) & (channels != 3))
    if len(bad):
        i = int(bad[0])
        raise call.error(f"input 0 sample {i}: expected 1 or 3 channels; got {int(channels[i])}")
    # the tile histograms (tiles_x=10**9 asked for 7 GiB; more tiles than pixels is valid:
    # OpenCV pads the image to a multiple of the grid)
    limits.check_count(call, "tiles_x", float(call.tiles_x) * call.tiles_y * call.bins,
                       "histogram bins")  # fmt: skip
    if call.device == "gpu":
        if call.bins != 256:
            raise call.error(f"argument 'bins' must be 256 on the gpu; got {call.bins} (other "
                             "bin counts run on the cpu)")
        if call.luma_only and len(np.unique(channels)) > 1:
            raise call.error("a batch mixing 1- and 3-channel samples with luma_only=True runs "
                             "on the cpu only; split the batch or use device='cpu'")
    return OutputSpec(inp.dtype, inp.shapes.copy(), inp.layout)


schema = OpSchema(
    name="clahe",
    doc="Contrast-limited adaptive histogram equalisation (OpenCV-compatible) of uint8 images.",
    inputs=(Input("input", layouts=("HWC",)),),
    args=(
        Arg("tiles_x", "int", default=REQUIRED, check=_positive, doc="Tiles across the width."),
        Arg("tiles_y", "int", default=REQUIRED, check=_positive, doc="Tiles across the height."),
        Arg("clip_limit", "float", default=REQUIRED,
            check=lambda v: None if v >= 0 else f"must be >= 0; got {v}",
            doc="Relative clip limit: the histogram cap is clip_limit · tile_area / bins."),
        Arg("bins", "int", default=256,
            check=lambda v: None if 2 <= v <= 256 else f"must be in 2..256; got {v}",
            doc="Histogram bins (256 = OpenCV's; fewer bins group intensities)."),
        Arg("luma_only", "bool", default=True,
            doc="RGB: equalise the luma and scale the channels; False: each channel alone."),
    ),
    infer=_infer,
)
