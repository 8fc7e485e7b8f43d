"""copy on the GPU: one flat-copy launch for the whole batch."""

from __future__ import annotations

from ndd_triton.kernels import register
from ndd_triton.kernels.gpu._tables import GpuBatch, GpuRun
from ndd_triton.kernels.gpu._tensor_copy import copy_batch
from ndd_triton.ops import copy
from ndd_triton.ops.schema import Call


@register(copy.schema, "gpu", replay=True)
def copy_gpu(run: GpuRun, out: GpuBatch, inp: GpuBatch, arg: Call) -> None:
    """Copy every sample in one launch."""
    copy_batch(run, out, inp)
