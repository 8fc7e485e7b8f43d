"""sphere on the GPU: water's remap kernel with the radial map (MODE 1)."""

from __future__ import annotations

from ndd_triton.kernels import register
from ndd_triton.kernels.gpu._tables import GpuBatch, GpuRun
from ndd_triton.kernels.gpu.water import remap_gpu
from ndd_triton.ops import sphere
from ndd_triton.ops.schema import Call


@register(sphere.schema, "gpu", replay=True)
def sphere_gpu(run: GpuRun, out: GpuBatch, inp: GpuBatch, call: Call) -> None:
    """Radial remap; NN rounds half up."""
    remap_gpu(run, out, inp, call, 1)
