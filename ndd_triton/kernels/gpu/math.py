"""`ndd.math.*` on the GPU: the generic elementwise kernels, one launch per call."""

from __future__ import annotations

from ndd_triton.kernels import register
from ndd_triton.kernels.gpu.arithmetic import make_gpu_kernel
from ndd_triton.ops import math

for _schema in math.schemas:
    register(_schema, "gpu", replay=True)(make_gpu_kernel(_schema, _schema.short_name))
