"""coord_transform on the CPU: float32 `sum_j M[:, j] * v_j` left to right, then `+ T`.

That order reproduces DALI 2.4's float32 results bit for bit (checked against the DALI CPU
operator on random 3 -> 2 transforms); integer outputs round half away from zero and saturate.
"""

from __future__ import annotations

import numpy as np

from ndd_triton.core.convert import convert_numpy
from ndd_triton.kernels import register
from ndd_triton.ops import coord_transform
from ndd_triton.ops.schema import SampleArgs


@register(coord_transform.schema, "cpu")
def coord_transform_cpu(out: np.ndarray, inp: np.ndarray, arg: SampleArgs) -> None:
    """One sample: rows of n values -> rows of m values."""
    mat = np.asarray(arg.matrix, np.float32)
    n = mat.shape[1]
    rows = inp.reshape(-1, n).astype(np.float32, copy=False)
    acc = np.zeros((rows.shape[0], mat.shape[0]), np.float32)
    for j in range(n):
        acc += rows[:, j:j + 1] * mat[:, j]
    acc += np.asarray(arg.translation, np.float32)
    convert_numpy(acc, out.dtype, out=out.reshape(acc.shape))
