"""bb_flip: mirror bounding boxes in relative coordinates (DALI `bb_flip`).

Boxes are float32 rows of 4 coordinates, `[x, y, w, h]` (default) or `[l, t, r, b]` with `ltrb`,
relative to the image (`[0, 1]`). A horizontal flip maps `l, r` to `1 - r, 1 - l`, a vertical
one `t, b` to `1 - b, 1 - t`. As in DALI, `[x, y, w, h]` boxes go through their corners
(`r = x + w`, then `w' = r' - l'`), which decides the last bit of the result; values are not
clamped. Any sample shape whose last extent is 4 is accepted (`(4,)`, `(K, 4)`, `(F, K, 4)`).
"""

from __future__ import annotations

from ndd_triton.ops._bbox import check_box_width, check_float_boxes
from ndd_triton.ops.schema import Arg, Call, Input, OpSchema, OutputSpec


def _infer(call: Call) -> OutputSpec:
    meta = check_float_boxes(call, 0)
    check_box_width(call, 0, (4,))
    return OutputSpec(meta.dtype, meta.shapes.copy(), meta.layout)


schema = OpSchema(
    name="bb_flip",
    doc="Flips bounding boxes horizontally and/or vertically (relative coordinates).",
    inputs=(Input("input", doc="float32 boxes, 4 coordinates per box (last dimension)."),),
    args=(
        Arg("horizontal", "int", default=1, per_sample=True,
            doc="Flip horizontally (x) when nonzero."),
        Arg("vertical", "int", default=0, per_sample=True,
            doc="Flip vertically (y) when nonzero."),
        Arg("ltrb", "bool", default=False,
            doc="True: boxes are [l, t, r, b]; False: [x, y, w, h]."),
    ),
    infer=_infer,
    examples="`bb_flip([[0.1, 0.2, 0.3, 0.4]])` -> `[[0.6, 0.2, 0.3, 0.4]]`; with `ltrb=True` -> "
             "`[[0.7, 0.2, 0.9, 0.4]]`.",
)  # fmt: skip
