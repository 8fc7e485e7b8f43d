"""transpose on the CPU: a NumPy transposed view copied into the output."""

from __future__ import annotations

import numpy as np

from ndd_triton.kernels import register
from ndd_triton.ops import transpose
from ndd_triton.ops.schema import SampleArgs


@register(transpose.schema, "cpu", dense=True)
def transpose_cpu(out: np.ndarray, inp: np.ndarray, arg: SampleArgs) -> None:
    """Copy the transposed sample (or a dense `(N, ...)` batch: the batch axis stays first)."""
    perm = tuple(int(p) for p in arg.resolved_perm)
    if inp.ndim == len(perm) + 1:
        perm = (0, *(p + 1 for p in perm))
    out[...] = inp.transpose(perm)
