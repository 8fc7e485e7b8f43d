"""preemphasis_filter on the CPU: one vectorised NumPy pass in float64."""

from __future__ import annotations

import numpy as np

from ndd_triton.core.convert import convert_numpy
from ndd_triton.kernels import register
from ndd_triton.ops import preemphasis_filter
from ndd_triton.ops.schema import SampleArgs


@register(preemphasis_filter.schema, "cpu")
def preemphasis_filter_cpu(out: np.ndarray, inp: np.ndarray, arg: SampleArgs) -> None:
    """out[t] = x[t] - c * x[t - 1] over the flattened sample (border value before t = 0)."""
    x = inp.reshape(-1).astype(np.float64)
    if not x.size:
        return
    prev = np.empty_like(x)
    prev[1:] = x[:-1]
    prev[0] = (0.0, x[0], x[1] if x.size > 1 else x[0])[arg.border_code]
    y = x - float(np.float32(arg.preemph_coeff)) * prev
    out.reshape(-1)[...] = convert_numpy(y, out.dtype)
