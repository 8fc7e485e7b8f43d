"""zeros, ones, full and the `_like` forms on the CPU."""

from __future__ import annotations

import numpy as np

from ndd_triton.core.convert import convert_numpy
from ndd_triton.kernels import register
from ndd_triton.ops import constants
from ndd_triton.ops.schema import SampleArgs


@register(constants.zeros, "cpu")
@register(constants.zeros_like, "cpu")
def zeros_cpu(out: np.ndarray, *rest: object) -> None:
    """Fill one sample with 0 (any inputs only provide metadata)."""
    out[...] = 0


@register(constants.ones, "cpu")
@register(constants.ones_like, "cpu")
def ones_cpu(out: np.ndarray, *rest: object) -> None:
    """Fill one sample with 1."""
    out[...] = 1


@register(constants.full, "cpu")
def full_cpu(out: np.ndarray, fill: np.ndarray, arg: SampleArgs) -> None:
    """Broadcast the fill value to the sample's shape."""
    out[...] = np.broadcast_to(fill, out.shape)


@register(constants.full_like, "cpu")
def full_like_cpu(out: np.ndarray, like: np.ndarray, fill: np.ndarray, arg: SampleArgs) -> None:
    """Broadcast the fill value, converted to the output dtype (round, saturate)."""
    with np.errstate(all="ignore"):  # out-of-range fills saturate by design
        convert_numpy(np.broadcast_to(fill, out.shape), out.dtype, out=out)
