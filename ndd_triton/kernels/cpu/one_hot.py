"""one_hot on the CPU: compare truncated class ids with `arange(num_classes)` on the new axis."""

from __future__ import annotations

import numpy as np

from ndd_triton.kernels import register
from ndd_triton.ops import one_hot
from ndd_triton.ops.schema import SampleArgs


@register(one_hot.schema, "cpu")
def one_hot_cpu(out: np.ndarray, inp: np.ndarray, arg: SampleArgs) -> None:
    """Write on_value where the class matches, off_value elsewhere."""
    ids = inp.reshape(tuple(int(v) for v in arg.sample_shapes))
    if ids.dtype.kind == "f":
        ids = np.trunc(ids)  # 1.7 -> class 1; NaN matches nothing
    pos = arg.position
    grid = [1] * out.ndim
    grid[pos] = out.shape[pos]
    hot = np.expand_dims(ids, pos) == np.arange(out.shape[pos]).reshape(grid)
    on, off = arg.on_off  # converted as DALI does (ops/one_hot.py)
    out[...] = np.where(hot, on, off)
