"""sphere: radial "bulge" remap of each image (DALI `sphere`).

With centre `c = ((W - 1) / 2, (H - 1) / 2)` and `d = max(W, H) // 2` (integer division;
fitted to DALI 2.4's outputs; a 1x1 image gets the fill, or NaN with LINEAR), output pixel `p`
samples `c + (p - c) * |p - c| / d` (integer pixel coordinates): NN rounds half up, LINEAR
blends the neighbours; points outside read `fill_value`. `mask=0` passes a sample through.
"""

from __future__ import annotations

from ndd_triton.ops.schema import Input, OpSchema
from ndd_triton.ops.water import REMAP_DTYPES, check_remap, remap_args

schema = OpSchema(
    name="sphere",
    doc="Maps each image as if seen through a sphere: points move away from the centre by "
    "their distance.",
    inputs=(Input("input", layouts=("HWC",), dtypes=REMAP_DTYPES),),
    args=remap_args(),
    infer=check_remap,
)
