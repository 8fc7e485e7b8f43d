"""resize_crop_mirror on the GPU: the resize passes (one launch per axis)."""

from __future__ import annotations

from ndd_triton.kernels import register
from ndd_triton.kernels.gpu.resize import resize_gpu
from ndd_triton.ops import resize_crop_mirror

register(resize_crop_mirror.schema, "gpu",
         replay=lambda call: not call.values.get("save_attrs"))(resize_gpu)
