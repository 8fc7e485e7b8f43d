"""random_bbox_crop on the CPU: infer searched the windows; write its results."""

from __future__ import annotations

from typing import Any

import numpy as np

from ndd_triton.kernels import register
from ndd_triton.ops import random_bbox_crop
from ndd_triton.ops.schema import SampleArgs


@register(random_bbox_crop.schema, "cpu")
def random_bbox_crop_cpu(out: tuple[np.ndarray, ...], *rest: Any) -> None:
    """anchor, shape, boxes, [labels], [indices] of one sample (inputs were read in infer)."""
    arg: SampleArgs = rest[-1]
    labels = rest[1] if len(rest) > 2 else None
    out[0][...] = arg.crop_anchor
    out[1][...] = arg.crop_shape_out
    out[2][...] = arg.crop_boxes
    keep = np.asarray(arg.crop_indices, np.int64)
    k = 3
    if labels is not None:
        out[k][...] = labels.reshape(-1)[keep].reshape(out[k].shape)
        k += 1
    if k < len(out):
        out[k][...] = keep
