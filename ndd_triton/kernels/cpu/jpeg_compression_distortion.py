"""jpeg_compression_distortion on the CPU: Pillow encode + decode per frame."""

from __future__ import annotations

import numpy as np

from ndd_triton.kernels import register
from ndd_triton.kernels._jpeg_roundtrip import jpeg_roundtrip
from ndd_triton.ops import jpeg_compression_distortion
from ndd_triton.ops.schema import SampleArgs


@register(jpeg_compression_distortion.schema, "cpu")
def jpeg_compression_distortion_cpu(out: np.ndarray, inp: np.ndarray, arg: SampleArgs) -> None:
    """Round-trip every frame of the sample at its quality."""
    jpeg_roundtrip(inp, int(arg.qualities), out)
