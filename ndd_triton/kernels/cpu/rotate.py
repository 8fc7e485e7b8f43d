"""rotate on the CPU: warp_affine's sampling kernel with the rotation's inverse map."""

from __future__ import annotations

import numpy as np

from ndd_triton.kernels import register
from ndd_triton.kernels.cpu.warp_affine import affine_sample
from ndd_triton.ops import rotate
from ndd_triton.ops.schema import SampleArgs


@register(rotate.schema, "cpu")
def rotate_cpu(out: np.ndarray, inp: np.ndarray, arg: SampleArgs) -> None:
    """Sample through `arg.affine_matrix` (built by rotate's infer)."""
    affine_sample(out, inp, arg)
