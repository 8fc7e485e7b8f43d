"""to_decibels on the CPU: float32 torch ops in place."""

from __future__ import annotations

import numpy as np
import torch

from ndd_triton.kernels import register
from ndd_triton.ops import to_decibels
from ndd_triton.ops.schema import SampleArgs


@register(to_decibels.schema, "cpu")
def to_decibels_cpu(out: np.ndarray, inp: np.ndarray, arg: SampleArgs) -> None:
    """multiplier * log10(max(floor, x / reference)), reference 0 = the sample's maximum.

    torch's float32 log10 (6x NumPy's here), in place in `out`.
    """
    if not inp.size:
        return
    x = torch.from_numpy(np.ascontiguousarray(inp))
    reference = float(arg.reference) or float(x.max())
    mult = float(arg.multiplier)
    floor = 10.0 ** (float(arg.cutoff_db) / mult) if mult else 1.0  # multiplier 0: zeros
    inv = 1.0 / reference if reference > 0 else 0.0  # all-zero sample: every value -> floor
    dst = torch.from_numpy(out)
    torch.mul(x, inv, out=dst)
    dst.clamp_(min=floor).log10_().mul_(mult)
