"""bbox_paste: map boxes into the enlarged canvas of `paste` (DALI `bbox_paste`).

`paste` puts the image at `(paste_x, paste_y)` of a canvas `ratio` times larger; a relative
coordinate `p` of the image becomes `p / ratio + pos * (ratio - 1) / ratio` on the canvas, and a
size `w` becomes `w / ratio`. Boxes are float32 rows of 4 (`[x, y, w, h]`, or `[l, t, r, b]`
with `ltrb`). CPU only in DALI; here the GPU backend runs it too (one launch per batch).
"""

from __future__ import annotations

import numpy as np

from ndd_triton.ops._bbox import BoxValueError, check_box_width, check_float_boxes
from ndd_triton.ops.schema import REQUIRED, Arg, Call, Input, OpSchema, OutputSpec


def _infer(call: Call) -> OutputSpec:
    meta = check_float_boxes(call, 0)
    check_box_width(call, 0, (4,))
    ratio = np.asarray(call.ratio, np.float64).reshape(-1)
    # (in float32, as the kernel divides: a ratio of 1e-311 is 0 there)
    bad = np.flatnonzero(~(ratio.astype(np.float32) > 0) | ~np.isfinite(ratio))
    if bad.size:
        i = int(bad[0])
        raise call.error(f"argument 'ratio' sample {i}: expected a finite ratio > 0 (the canvas "
                         f"is ratio times the image, normally >= 1); got {ratio[i]}",
                         BoxValueError)  # fmt: skip
    return OutputSpec(meta.dtype, meta.shapes.copy(), meta.layout)


schema = OpSchema(
    name="bbox_paste",
    doc="Transforms bounding boxes so that they stay on the objects after `paste`.",
    inputs=(Input("input", doc="float32 boxes, 4 coordinates per box (last dimension)."),),
    args=(
        Arg("ratio", "float", default=REQUIRED, per_sample=True,
            doc="Canvas size relative to the image (as given to `paste`); below 1 is allowed, "
                "as in DALI, but it must be positive."),
        Arg("paste_x", "float", default=0.5, per_sample=True,
            doc="Horizontal position of the image on the canvas (0 = left, 1 = right)."),
        Arg("paste_y", "float", default=0.5, per_sample=True,
            doc="Vertical position of the image on the canvas (0 = top, 1 = bottom)."),
        Arg("ltrb", "bool", default=False,
            doc="True: boxes are [l, t, r, b]; False: [x, y, w, h]."),
    ),
    infer=_infer,
    examples="`bbox_paste([[0.1, 0.2, 0.3, 0.4]], ratio=2)` -> `[[0.3, 0.35, 0.15, 0.2]]`.",
)  # fmt: skip
