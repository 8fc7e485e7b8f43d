"""to_decibels on the CPU: float32 NumPy."""

from __future__ import annotations

import numpy as np

from ndd_triton.kernels import register
from ndd_triton.ops import to_decibels
from ndd_triton.ops.schema import SampleArgs


@register(to_decibels.schema, "cpu")
def to_decibels_cpu(out: np.ndarray, inp: np.ndarray, arg: SampleArgs) -> None:
    """multiplier * log10(max(floor, x / reference)), reference 0 = the sample's maximum."""
    if not inp.size:
        return
    reference = float(arg.reference) or float(inp.max())
    mult = float(arg.multiplier)
    floor = 10.0 ** (float(arg.cutoff_db) / mult)
    inv = 1.0 / reference if reference > 0 else 0.0  # all-zero sample: every value -> floor
    with np.errstate(divide="ignore"):
        ratio = np.maximum(inp.astype(np.float32) * np.float32(inv), np.float32(floor))
        out[...] = np.float32(mult) * np.log10(ratio)
