"""equalize on the CPU: one bincount for all channel planes of a sample, then a LUT gather."""

from __future__ import annotations

import numpy as np

from ndd_triton.kernels import register
from ndd_triton.kernels._equalize_tables import equalize_luts, planes_view
from ndd_triton.ops import equalize
from ndd_triton.ops.schema import SampleArgs


@register(equalize.schema, "cpu")
def equalize_cpu(out: np.ndarray, inp: np.ndarray, arg: SampleArgs) -> None:
    """Equalise each (frame, channel) plane of one sample."""
    outer, pixels, inner = planes_view(inp.shape, arg.layout or "HW")
    if inp.size == 0:
        return
    planes = outer * inner
    data = inp.reshape(outer, pixels, inner)
    plane = (np.arange(outer)[:, None, None] * inner + np.arange(inner)[None, None, :])
    code = plane.astype(np.int64) * 256 + data
    hist = np.bincount(code.reshape(-1), minlength=planes * 256).reshape(planes, 256)
    out.reshape(outer, pixels, inner)[...] = equalize_luts(hist).reshape(-1)[code]
