"""cast, cast_like on the CPU: DALI's round + saturate rules (`_convert.convert_numpy`).

float32/float16 to integers of at most 16 bits takes a float32 fast path (about 4x faster than
the general float64 one): truncation plus a +-1 correction for |fraction| >= 0.5 is exact in the
input precision, and every bound of such a target is exactly representable in float32.
"""

from __future__ import annotations

import numpy as np

from ndd_triton.core.convert import convert_numpy
from ndd_triton.kernels import register
from ndd_triton.ops import cast
from ndd_triton.ops.schema import SampleArgs


def _narrow_int_from_float32(inp: np.ndarray, out: np.ndarray) -> None:
    """Round half away from zero, saturate, NaN -> 0, all in float32."""
    info = np.iinfo(out.dtype)
    rounded = np.trunc(inp, dtype=np.float32)
    fraction = np.subtract(inp, rounded, dtype=np.float32)
    rounded += fraction >= 0.5
    rounded -= fraction <= -0.5
    np.clip(rounded, info.min, info.max, out=rounded)
    rounded[np.isnan(rounded)] = 0
    out[...] = rounded


def _convert(out: np.ndarray, inp: np.ndarray) -> None:
    if out.dtype.kind == "f" and inp.dtype.kind in "biu" and out.itemsize >= 4:
        out[...] = inp  # exact or correctly rounded, never overflows: nothing to police
        return
    # Overflow to inf (f16 targets) and NaN handling are intended: no NumPy warnings.
    with np.errstate(all="ignore"):
        if inp.dtype.kind == "f" and inp.itemsize <= 4 and out.dtype.kind in "iu" and \
                out.itemsize <= 2:  # fmt: skip
            _narrow_int_from_float32(inp, out)
        else:
            convert_numpy(inp, out.dtype, out=out)


@register(cast.cast, "cpu", dense=True)  # elementwise: a uniform batch is one call
def cast_cpu(out: np.ndarray, inp: np.ndarray, arg: SampleArgs) -> None:
    """Convert one sample into `out` (whose dtype is the target)."""
    _convert(out, inp)


@register(cast.cast_like, "cpu", dense=True)
def cast_like_cpu(out: np.ndarray, inp: np.ndarray, like: np.ndarray, arg: SampleArgs) -> None:
    """Convert one sample to the dtype of `like` (already the dtype of `out`)."""
    _convert(out, inp)
