"""resize: separable resampling of the spatial axes (DALI `resize`)."""

from __future__ import annotations

import numpy as np

from ndd_triton.core.dtype import float32, int16, int32, uint8, uint16
from ndd_triton.ops import _resize_params as rp
from ndd_triton.ops.schema import Arg, Call, Input, OpSchema, OutputSpec

RESIZE_LAYOUTS = ("HWC", "FHWC", "CHW", "FCHW", "CFHW", "DHWC", "FDHWC", "CDHW", "FCDHW", "CFDHW")
RESIZE_DTYPES = (uint8, int16, uint16, float32)


def _infer(call: Call) -> list[OutputSpec]:
    layout = call.inputs[0].layout or "HWC"
    extents = rp.spatial_extents(call, layout)
    out, origin, step = rp.resize_geometry(call, extents)
    rp.derive_plan(call, layout, extents, out, origin, step)
    shapes = call.inputs[0].shapes.copy()
    for k, letter in enumerate(rp.spatial_letters(layout)):
        shapes[:, layout.index(letter)] = out[:, k]
    specs = [OutputSpec(rp.output_dtype(call), shapes, layout)]
    if call.save_attrs:
        attrs = np.full((call.batch_size, 1), extents.shape[1], dtype=np.int64)
        specs.append(OutputSpec(int32, attrs, None))
    return specs


schema = OpSchema(
    name="resize",
    doc="Resizes images or volumes with separable filters (NN, linear, cubic, Lanczos-3, "
        "triangular, Gaussian), optionally antialiased, to a size, an ROI or a scale rule.",
    inputs=(Input("input", layouts=RESIZE_LAYOUTS, dtypes=RESIZE_DTYPES),),
    args=(*rp.size_args(), *rp.filter_args(),
          Arg("save_attrs", "bool", default=False,
              doc="Also return the input spatial extents as int32 (second output).")),
    infer=_infer,
)  # fmt: skip
