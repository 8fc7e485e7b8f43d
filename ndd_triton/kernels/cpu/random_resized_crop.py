"""random_resized_crop on the CPU: the resize kernel, with the source mapping set up by infer."""

from __future__ import annotations

from ndd_triton.kernels import register
from ndd_triton.kernels.cpu.resize import resize_cpu
from ndd_triton.ops import random_resized_crop

register(random_resized_crop.schema, "cpu")(resize_cpu)
