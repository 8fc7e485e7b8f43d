"""filter on the CPU: border padding per axis, then a dense tap loop in float32 (torch)."""

from __future__ import annotations

import numpy as np
import torch

from ndd_triton.kernels import register
from ndd_triton.kernels._conv_tables import spatial_span, view_5d
from ndd_triton.kernels.cpu._conv import correlate_dense, pad_axis
from ndd_triton.kernels.cpu.color import store_rounded
from ndd_triton.ops import filter as filter_op
from ndd_triton.schema import SampleArgs


@register(filter_op.schema, "cpu")
def filter_cpu(out: np.ndarray, data: np.ndarray, kernel: np.ndarray, fill: np.ndarray | None,
               arg: SampleArgs) -> None:  # fmt: skip
    """Correlate one sample with its kernel; integer outputs round ties to even."""
    first, count = spatial_span(arg.layout, data.ndim)
    x = torch.from_numpy(data).reshape(view_5d(data.shape, first, count)).to(torch.float32)
    weights = kernel.reshape((1,) * (3 - count) + kernel.shape)
    fill_value = float(np.asarray(fill).reshape(-1)[0]) if fill is not None else 0.0
    if arg.mode == "same":
        anchors = [0] * (3 - count) + [int(a) for a in arg.anchors]
        for axis in range(3):
            k, a = weights.shape[axis], anchors[axis]
            x = pad_axis(x, axis + 1, a, k - 1 - a, arg.border, fill_value)
    _, od, oh, ow, _ = view_5d(out.shape, first, count)
    store_rounded(out, correlate_dense(x, weights, (od, oh, ow)), ties_to_even=True)
