"""random_resized_crop on the GPU: the resize passes (one launch per axis)."""

from __future__ import annotations

from ndd_triton.kernels import register
from ndd_triton.kernels.gpu.resize import resize_gpu
from ndd_triton.ops import random_resized_crop

register(random_resized_crop.schema, "gpu")(resize_gpu)
