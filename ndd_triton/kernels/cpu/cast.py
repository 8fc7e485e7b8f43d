"""cast, cast_like on the CPU: `_convert.convert_numpy` (DALI's round + saturate rules)."""

from __future__ import annotations

import numpy as np

from ndd_triton._convert import convert_numpy
from ndd_triton.kernels import register
from ndd_triton.ops import cast
from ndd_triton.schema import SampleArgs


@register(cast.cast, "cpu")
def cast_cpu(out: np.ndarray, inp: np.ndarray, arg: SampleArgs) -> None:
    """Convert one sample into `out` (whose dtype is the target)."""
    with np.errstate(all="ignore"):  # overflow to inf (f16) and NaN casts are intended
        convert_numpy(inp, out.dtype, out=out)


@register(cast.cast_like, "cpu")
def cast_like_cpu(out: np.ndarray, inp: np.ndarray, like: np.ndarray, arg: SampleArgs) -> None:
    """Convert one sample to the dtype of `like` (already the dtype of `out`)."""
    with np.errstate(all="ignore"):
        convert_numpy(inp, out.dtype, out=out)
