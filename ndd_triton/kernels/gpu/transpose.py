"""transpose on the GPU: one strided-gather launch; output axis i uses input stride perm[i]."""

from __future__ import annotations

from ndd_triton.kernels import register
from ndd_triton.kernels.gpu._tables import GpuBatch, GpuRun
from ndd_triton.kernels.gpu._tensor_copy import contiguous_strides, gather
from ndd_triton.ops import transpose
from ndd_triton.ops.schema import Call


@register(transpose.schema, "gpu", replay=True)
def transpose_gpu(run: GpuRun, out: GpuBatch, inp: GpuBatch, arg: Call) -> None:
    """Permute the input strides and gather the whole batch in one launch."""
    strides = contiguous_strides(inp.shapes)[:, arg.resolved_perm]
    gather(run, out, inp.data, inp.offsets, inp.dtype, strides)
