"""gaussian_blur on the GPU: dense outer-product weights per sample, one correlation launch."""

from __future__ import annotations

import numpy as np

from ndd_triton.kernels import register
from ndd_triton.kernels._conv_tables import gaussian_taps, spatial_span
from ndd_triton.kernels.gpu._conv import launch_correlate, pack_dense
from ndd_triton.kernels.gpu._tables import GpuBatch, GpuRun
from ndd_triton.ops import gaussian_blur
from ndd_triton.ops.schema import Call


@register(gaussian_blur.schema, "gpu")
def gaussian_blur_gpu(run: GpuRun, out: GpuBatch, inp: GpuBatch, arg: Call) -> None:
    """Build each sample's separable window as a dense 3-D kernel and correlate."""
    span = spatial_span(inp.layout, inp.shapes.shape[1])
    kernels = []
    for i in range(inp.batch_size):
        dense = np.ones((1, 1, 1))
        for k in range(span[1]):
            taps = gaussian_taps(float(arg.sigmas[i][k]), int(arg.windows[i][k]))
            shape = [1, 1, 1]
            shape[3 - span[1] + k] = len(taps)
            dense = dense * taps.reshape(shape)
        kernels.append(dense)
    flat, offsets, dims = pack_dense(kernels)
    launch_correlate(run, out, inp, span, flat, offsets, dims, dims // 2)
