"""bb_flip on the CPU: one sample's boxes through their corners, vectorised over the boxes."""

from __future__ import annotations

import numpy as np

from ndd_triton.kernels import register
from ndd_triton.ops import bb_flip
from ndd_triton.ops._bbox import check_box_values
from ndd_triton.ops.schema import SampleArgs

_ONE = np.float32(1)


@register(bb_flip.schema, "cpu")
def bb_flip_cpu(out: np.ndarray, inp: np.ndarray, arg: SampleArgs) -> None:
    """`l, r -> 1 - r, 1 - l` (and `t, b`) in float32; `[x, y, w, h]` via `r = x + w`."""
    boxes = inp.reshape(-1, 4)
    check_box_values("bb_flip", boxes, arg.index, ends=bool(arg.ltrb))
    lo = boxes[:, :2]
    hi = boxes[:, 2:] if arg.ltrb else lo + boxes[:, 2:]
    flip = np.array([arg.horizontal != 0, arg.vertical != 0])
    new_lo = np.where(flip, _ONE - hi, lo)
    new_hi = np.where(flip, _ONE - lo, hi)
    result = out.reshape(-1, 4)
    result[:, :2] = new_lo
    result[:, 2:] = new_hi if arg.ltrb else new_hi - new_lo
