"""roi_random_crop on the CPU: infer drew the starts; write them."""

from __future__ import annotations

from typing import Any

import numpy as np

from ndd_triton.kernels import register
from ndd_triton.ops import roi_random_crop
from ndd_triton.ops.schema import SampleArgs


@register(roi_random_crop.schema, "cpu")
def roi_random_crop_cpu(out: np.ndarray, *rest: Any) -> None:
    """`out` = this sample's window start (the optional data input is not read)."""
    arg: SampleArgs = rest[-1]
    out[...] = arg.roi_crop_start
