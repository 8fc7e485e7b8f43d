"""preemphasis_filter on the CPU: one vectorised NumPy pass in float64."""

from __future__ import annotations

import numpy as np

from ndd_triton.core.convert import convert_numpy
from ndd_triton.kernels import register
from ndd_triton.ops import preemphasis_filter
from ndd_triton.ops.schema import SampleArgs


# two passes over memory per sample: one thread up to 32 MiB (`KernelEntry.pool_min_bytes`)
@register(preemphasis_filter.schema, "cpu", pool_min_bytes=1 << 25)
def preemphasis_filter_cpu(out: np.ndarray, inp: np.ndarray, arg: SampleArgs) -> None:
    """out[t] = x[t] - c * x[t - 1] over the flattened sample (border value before t = 0).

    float32 in and out: float32 arithmetic, straight into `out` (DALI's precision); other
    types go through float64 and DALI's conversion.
    """
    x = inp.reshape(-1)
    if not x.size:
        return
    first = (0.0, x[0], x[1] if x.size > 1 else x[0])[arg.border_code]
    if x.dtype == np.float32 and out.dtype == np.float32:
        c = np.float32(arg.preemph_coeff)
        flat = out.reshape(-1)
        np.multiply(x[:-1], -c, out=flat[1:])
        flat[1:] += x[1:]
        flat[0] = x[0] - c * np.float32(first)
        return
    x = x.astype(np.float64)
    prev = np.empty_like(x)
    prev[1:] = x[:-1]
    prev[0] = first
    y = x - float(np.float32(arg.preemph_coeff)) * prev
    out.reshape(-1)[...] = convert_numpy(y, out.dtype)
