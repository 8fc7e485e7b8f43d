"""bbox_paste on the CPU: `p * (1 / ratio) + pos * ((ratio - 1) / ratio)` in float32.

That association (and `w * (1 / ratio)` for sizes) reproduces DALI 2.4's float32 results bit
for bit (checked on random boxes against the DALI CPU operator).
"""

from __future__ import annotations

import numpy as np

from ndd_triton.kernels import register
from ndd_triton.ops import bbox_paste
from ndd_triton.ops._bbox import check_box_values
from ndd_triton.ops.schema import SampleArgs

_ONE = np.float32(1)


@register(bbox_paste.schema, "cpu")
def bbox_paste_cpu(out: np.ndarray, inp: np.ndarray, arg: SampleArgs) -> None:
    """Corners move toward the paste position; sizes shrink by the ratio."""
    boxes = inp.reshape(-1, 4)
    check_box_values("bbox_paste", boxes, arg.index, ends=bool(arg.ltrb))
    ratio = np.float32(arg.ratio)
    inv = _ONE / ratio
    margin = np.array([arg.paste_x, arg.paste_y], np.float32) * ((ratio - _ONE) / ratio)
    result = out.reshape(-1, 4)
    result[:, :2] = boxes[:, :2] * inv + margin
    result[:, 2:] = boxes[:, 2:] * inv + margin if arg.ltrb else boxes[:, 2:] * inv
