"""gaussian_blur on the CPU: one separable torch pass per spatial axis, float32 math."""

from __future__ import annotations

import numpy as np
import torch

from ndd_triton.kernels import register
from ndd_triton.kernels._conv_tables import gaussian_taps, spatial_span, view_5d
from ndd_triton.kernels.cpu._conv import correlate_axis
from ndd_triton.kernels.cpu.color import store_rounded
from ndd_triton.ops import gaussian_blur
from ndd_triton.schema import SampleArgs


@register(gaussian_blur.schema, "cpu")
def gaussian_blur_cpu(out: np.ndarray, inp: np.ndarray, arg: SampleArgs) -> None:
    """Blur one sample: axes D, H, W of its `[outer, D, H, W, inner]` view, in turn."""
    first, count = spatial_span(arg.layout, inp.ndim)
    x = torch.from_numpy(inp).reshape(view_5d(inp.shape, first, count)).to(torch.float32)
    for k in range(count):
        taps = gaussian_taps(float(arg.sigmas[k]), int(arg.windows[k]))
        x = correlate_axis(x, 4 - count + k, taps, len(taps) // 2)
    store_rounded(out, x, finite=inp.dtype.kind in "iu")
