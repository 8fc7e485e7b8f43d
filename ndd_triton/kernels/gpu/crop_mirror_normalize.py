"""crop_mirror_normalize on the GPU: one `_window_kernel` launch for the whole batch."""

from __future__ import annotations

import numpy as np

from ndd_triton.kernels import register
from ndd_triton.kernels.gpu._tables import GpuBatch, GpuRun
from ndd_triton.kernels.gpu.crop import window_launch
from ndd_triton.ops import crop_mirror_normalize
from ndd_triton.ops.schema import Call


@register(crop_mirror_normalize.schema, "gpu", replay=True)
def crop_mirror_normalize_gpu(run: GpuRun, out: GpuBatch, inp: GpuBatch, call: Call) -> None:
    """Crop, mirror, normalise, convert and permute every sample in one launch."""
    floats = np.stack([call.gain, call.bias, call.fill], axis=1).astype(np.float32)
    window_launch(run, out, inp, call, call.out_layout, floats, call.mirror, affine=True)
