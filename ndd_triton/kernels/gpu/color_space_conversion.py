"""color_space_conversion on the GPU: the shared one-launch affine colour kernel."""

from __future__ import annotations

import numpy as np

from ndd_triton.kernels import register
from ndd_triton.kernels.gpu._tables import GpuBatch, GpuRun
from ndd_triton.kernels.gpu.color import launch_affine
from ndd_triton.ops import color_space_conversion
from ndd_triton.ops.schema import Call


@register(color_space_conversion.schema, "gpu", replay=True)
def color_space_conversion_gpu(run: GpuRun, out: GpuBatch, inp: GpuBatch, arg: Call) -> None:
    """Apply the per-sample conversion matrices in one launch."""
    launch_affine(run, out, inp, np.asarray(arg.color_matrix), np.asarray(arg.color_offset))
