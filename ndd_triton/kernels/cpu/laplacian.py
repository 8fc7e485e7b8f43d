"""laplacian on the CPU: per derivative axis, separable torch passes; terms summed in float32."""

from __future__ import annotations

import numpy as np
import torch

from ndd_triton.kernels import register
from ndd_triton.kernels._conv_tables import spatial_span, view_5d
from ndd_triton.kernels._laplacian_terms import laplacian_terms
from ndd_triton.kernels.cpu._conv import correlate_axis
from ndd_triton.kernels.cpu.color import store_rounded
from ndd_triton.ops import laplacian
from ndd_triton.schema import SampleArgs


@register(laplacian.schema, "cpu")
def laplacian_cpu(out: np.ndarray, inp: np.ndarray, arg: SampleArgs) -> None:
    """Sum of `scale · (derivative ⊗ smoothing ...)` correlations, reflect-101 border."""
    first, count = spatial_span(arg.layout, inp.ndim)
    x = torch.from_numpy(inp).reshape(view_5d(inp.shape, first, count)).to(torch.float32)
    total = None
    for scale, windows in laplacian_terms(arg, count):
        term = x
        for k, taps in enumerate(windows):
            term = correlate_axis(term, 4 - count + k, taps, len(taps) // 2)
        total = term.mul_(scale) if total is None else total.add_(term, alpha=scale)
    assert total is not None  # count >= 1: infer checked the layout
    store_rounded(out, total, finite=inp.dtype.kind in "iu")
