"""laplacian on the GPU: the separable terms summed into one dense kernel, one launch."""

from __future__ import annotations

import numpy as np

from ndd_triton.kernels import register
from ndd_triton.kernels._conv_tables import spatial_span
from ndd_triton.kernels._laplacian_terms import laplacian_terms
from ndd_triton.kernels.gpu._conv import launch_correlate, pack_dense
from ndd_triton.kernels.gpu._tables import GpuBatch, GpuRun
from ndd_triton.ops import laplacian
from ndd_triton.ops.schema import Call, SampleArgs


def _dense(terms: list[tuple[float, list[np.ndarray]]], count: int) -> np.ndarray:
    size = [1] * (3 - count) + [max(len(w[k]) for _, w in terms) for k in range(count)]
    dense = np.zeros(size)
    for scale, windows in terms:
        term = np.ones((1, 1, 1)) * scale
        for k, taps in enumerate(windows):
            pad = (size[3 - count + k] - len(taps)) // 2  # centre smaller windows
            shape = [1, 1, 1]
            shape[3 - count + k] = size[3 - count + k]
            term = term * np.pad(taps, pad).reshape(shape)
        dense += term
    return dense


@register(laplacian.schema, "gpu")
def laplacian_gpu(run: GpuRun, out: GpuBatch, inp: GpuBatch, arg: Call) -> None:
    """Expand each sample's terms into a dense kernel and correlate (reflect-101)."""
    span = spatial_span(inp.layout, inp.shapes.shape[1])
    kernels = [_dense(laplacian_terms(SampleArgs(arg, i, inp.layout), span[1]), span[1])
               for i in range(inp.batch_size)]  # fmt: skip
    flat, offsets, dims = pack_dense(kernels)
    launch_correlate(run, out, inp, span, flat, offsets, dims, dims // 2)
