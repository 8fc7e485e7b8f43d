"""rotate on the GPU: warp_affine's sampling kernel with the rotation's inverse map."""

from __future__ import annotations

from ndd_triton.kernels import register
from ndd_triton.kernels.gpu._tables import GpuBatch, GpuRun
from ndd_triton.kernels.gpu.warp_affine import affine_sample_gpu
from ndd_triton.ops import rotate
from ndd_triton.ops.schema import Call


@register(rotate.schema, "gpu", replay=True)
def rotate_gpu(run: GpuRun, out: GpuBatch, inp: GpuBatch, call: Call) -> None:
    """One launch for the batch through `call.affine_matrix` (built by rotate's infer)."""
    affine_sample_gpu(run, out, inp, call)
