"""mel_filter_bank on the CPU: the filter matrix times the `f` axis (float32 matmul)."""

from __future__ import annotations

import numpy as np

from ndd_triton.kernels import register
from ndd_triton.kernels.cpu._audio_matrix import apply_along_axis
from ndd_triton.ops import mel_filter_bank
from ndd_triton.ops.schema import SampleArgs


@register(mel_filter_bank.schema, "cpu")
def mel_filter_bank_cpu(out: np.ndarray, inp: np.ndarray, arg: SampleArgs) -> None:
    """Mel bands of one sample."""
    apply_along_axis(out, inp, arg)
