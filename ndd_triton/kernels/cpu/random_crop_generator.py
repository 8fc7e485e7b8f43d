"""random_crop_generator on the CPU: infer drew the windows; write anchor and shape."""

from __future__ import annotations

import numpy as np

from ndd_triton.kernels import register
from ndd_triton.ops import random_crop_generator
from ndd_triton.ops.schema import SampleArgs


@register(random_crop_generator.schema, "cpu")
def random_crop_generator_cpu(out: tuple[np.ndarray, np.ndarray], inp: np.ndarray,
                              arg: SampleArgs) -> None:  # fmt: skip
    """(anchor, shape) = this sample's window."""
    out[0][...] = arg.crop_window[:2]
    out[1][...] = arg.crop_window[2:]
