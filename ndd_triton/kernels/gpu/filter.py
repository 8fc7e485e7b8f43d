"""filter on the GPU: the shared one-launch correlation, weights read from the filter batch."""

from __future__ import annotations

import numpy as np

from ndd_triton.kernels import register
from ndd_triton.kernels._conv_tables import spatial_span
from ndd_triton.kernels.gpu._common import padded_shapes
from ndd_triton.kernels.gpu._conv import launch_correlate
from ndd_triton.kernels.gpu._tables import GpuBatch, GpuRun
from ndd_triton.ops import filter as filter_op
from ndd_triton.ops.schema import Call


@register(filter_op.schema, "gpu", replay=True)
def filter_gpu(run: GpuRun, out: GpuBatch, data: GpuBatch, kernel: GpuBatch,
               fill: GpuBatch | None, arg: Call) -> None:  # fmt: skip
    """Correlate every sample with its kernel (device float32 data) in one launch."""
    span = spatial_span(data.layout, data.shapes.shape[1])
    dims = padded_shapes(kernel.shapes, 3)
    anchors = padded_shapes(np.asarray(arg.anchors, dtype=np.int64), 3) - 1
    anchors[:, 3 - span[1]:] = np.asarray(arg.anchors, dtype=np.int64)
    launch_correlate(run, out, data, span, kernel.data, kernel.offsets.astype(np.int64), dims,
                     anchors, arg.border, fill, ties_to_even=True)
