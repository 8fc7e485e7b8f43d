"""resize_crop_mirror: resize, crop and horizontal flip fused into one resampling
(DALI `resize_crop_mirror`).

The crop window is placed in resized coordinates with the crop rule, and only the window is
computed: the source mapping of the resize is shifted by the window start (and mirrored), so
the kernels are the resize kernels. Windows reaching outside the resized image repeat the
border pixels.
"""

from __future__ import annotations

import numpy as np

from ndd_triton.ops import _resize_params as rp
from ndd_triton.ops.crop import crop_args, crop_windows
from ndd_triton.ops.resize import RESIZE_DTYPES, RESIZE_LAYOUTS
from ndd_triton.ops.schema import Arg, Call, Input, OpSchema, OutputSpec


def _infer(call: Call) -> OutputSpec:
    layout = call.inputs[0].layout or "HWC"
    extents = rp.spatial_extents(call, layout)
    resized, origin, step = rp.resize_geometry(call, extents)
    start, size = crop_windows(call, layout, resized, policy="edge")
    if size.size and (size == 0).any():
        i = int(np.flatnonzero((size == 0).any(axis=1))[0])
        raise call.error(f"arguments 'crop'/'crop_h'/'crop_w' give an empty window for sample "
                         f"{i}: {size[i].tolist()}")  # fmt: skip
    origin = origin + start * step
    letters = rp.spatial_letters(layout)
    if "W" in letters:
        w = letters.index("W")
        flip = np.asarray(call.mirror).reshape(-1) != 0
        origin[flip, w] += size[flip, w] * step[flip, w]
        step[flip, w] = -step[flip, w]
    rp.derive_plan(call, layout, extents, size, origin, step)
    shapes = call.inputs[0].shapes.copy()
    for k, letter in enumerate(letters):
        shapes[:, layout.index(letter)] = size[:, k]
    return OutputSpec(rp.output_dtype(call), shapes, layout)


schema = OpSchema(
    name="resize_crop_mirror",
    doc="Resizes, crops and optionally mirrors each sample horizontally in one resampling pass.",
    inputs=(Input("input", layouts=RESIZE_LAYOUTS, dtypes=RESIZE_DTYPES),),
    args=(*rp.size_args(), *rp.filter_args(), *crop_args(),
          Arg("mirror", "int", default=0, per_sample=True,
              doc="Nonzero: flip the output horizontally.")),
    infer=_infer,
)  # fmt: skip
