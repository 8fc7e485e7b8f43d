"""mfcc on the CPU: the (liftered) DCT matrix times the transformed axis."""

from __future__ import annotations

import numpy as np

from ndd_triton.kernels import register
from ndd_triton.kernels.cpu._audio_matrix import apply_along_axis
from ndd_triton.ops import mfcc
from ndd_triton.ops.schema import SampleArgs


@register(mfcc.schema, "cpu")
def mfcc_cpu(out: np.ndarray, inp: np.ndarray, arg: SampleArgs) -> None:
    """Cepstral coefficients of one sample."""
    apply_along_axis(out, inp, arg)
