"""resize_crop_mirror on the CPU: the resize kernel, with the source mapping set up by infer."""

from __future__ import annotations

from ndd_triton.kernels import register
from ndd_triton.kernels.cpu.resize import resize_cpu
from ndd_triton.ops import resize_crop_mirror

register(resize_crop_mirror.schema, "cpu")(resize_cpu)
