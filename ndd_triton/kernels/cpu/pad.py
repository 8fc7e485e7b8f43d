"""pad on the CPU: fill the output, then copy the sample into its leading corner."""

from __future__ import annotations

import numpy as np

from ndd_triton.kernels import register
from ndd_triton.ops import pad
from ndd_triton.ops.schema import SampleArgs


@register(pad.schema, "cpu")
def pad_cpu(out: np.ndarray, inp: np.ndarray, arg: SampleArgs) -> None:
    """Write `inp` at the start of every axis of `out` and `arg.fill` everywhere else."""
    out[...] = arg.fill
    out[tuple(slice(0, extent) for extent in inp.shape)] = inp
