"""cast, cast_like on the GPU: one flat gather launch converting with DALI's rules in Triton."""

from __future__ import annotations

from ndd_triton.kernels import register
from ndd_triton.kernels.gpu._tables import GpuBatch, GpuRun
from ndd_triton.kernels.gpu._tensor_copy import gather
from ndd_triton.ops import cast
from ndd_triton.ops.schema import Call


@register(cast.cast, "gpu")
def cast_gpu(run: GpuRun, out: GpuBatch, inp: GpuBatch, arg: Call) -> None:
    """Convert the whole batch in one launch."""
    gather(run, out, inp.data, inp.offsets, inp.dtype)


@register(cast.cast_like, "gpu")
def cast_like_gpu(run: GpuRun, out: GpuBatch, inp: GpuBatch, like: GpuBatch, arg: Call) -> None:
    """Convert the whole batch to the dtype of `like` in one launch."""
    gather(run, out, inp.data, inp.offsets, inp.dtype)
