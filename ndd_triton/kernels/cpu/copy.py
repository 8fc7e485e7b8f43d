"""copy on the CPU."""

from __future__ import annotations

import numpy as np

from ndd_triton.kernels import register
from ndd_triton.ops import copy
from ndd_triton.ops.schema import SampleArgs


@register(copy.schema, "cpu")
def copy_cpu(out: np.ndarray, inp: np.ndarray, arg: SampleArgs) -> None:
    """Copy one sample."""
    out[...] = inp
