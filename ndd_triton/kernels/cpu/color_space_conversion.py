"""color_space_conversion on the CPU: the shared affine colour kernel, `[C_out, C_in]` matrix."""

from __future__ import annotations

import numpy as np

from ndd_triton.kernels import register
from ndd_triton.kernels.cpu.color import apply_affine
from ndd_triton.ops import color_space_conversion
from ndd_triton.ops.schema import SampleArgs


@register(color_space_conversion.schema, "cpu")
def color_space_conversion_cpu(out: np.ndarray, inp: np.ndarray, arg: SampleArgs) -> None:
    """Apply the conversion matrix built by infer."""
    apply_affine(out, inp, arg.color_matrix, arg.color_offset)
