"""transpose on the CPU: a NumPy transposed view copied into the output."""

from __future__ import annotations

import numpy as np

from ndd_triton.kernels import register
from ndd_triton.ops import transpose
from ndd_triton.schema import SampleArgs


@register(transpose.schema, "cpu")
def transpose_cpu(out: np.ndarray, inp: np.ndarray, arg: SampleArgs) -> None:
    """Copy the transposed sample."""
    out[...] = np.transpose(inp, arg.resolved_perm)
