"""audio_resample on the CPU: vectorised windowed-sinc taps (`ops/_audio.resample`)."""

from __future__ import annotations

import numpy as np

from ndd_triton.kernels import register
from ndd_triton.ops import audio_resample
from ndd_triton.ops._audio import resample
from ndd_triton.ops.schema import SampleArgs


def to_unit_float(x: np.ndarray) -> np.ndarray:
    """Integer audio as fractions of full scale (signed: x / max; unsigned: 2 x / max - 1)."""
    if x.dtype.kind == "f":
        return x.astype(np.float32, copy=False)
    top = float(np.iinfo(x.dtype).max)
    if x.dtype.kind == "i":
        return (x.astype(np.float64) / top).astype(np.float32)
    return (x.astype(np.float64) * (2.0 / top) - 1.0).astype(np.float32)


def from_unit_float(x: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Inverse of `to_unit_float` (signed rounds half away, unsigned truncates; saturating)."""
    if dtype.kind == "f":
        return x.astype(dtype, copy=False)
    info = np.iinfo(dtype)
    if dtype.kind == "i":
        v = x.astype(np.float64) * info.max
        v = np.where(v < 0, np.ceil(v - 0.5), np.floor(v + 0.5))
    else:
        v = np.floor((x.astype(np.float64) + 1.0) * (info.max / 2.0))
    return np.clip(np.nan_to_num(v), info.min, info.max).astype(dtype)


@register(audio_resample.schema, "cpu")
def audio_resample_cpu(out: np.ndarray, inp: np.ndarray, arg: SampleArgs) -> None:
    """Resample one `(n,)` or `(n, channels)` signal to `out.shape[0]` samples."""
    if not out.size:
        return
    if inp.shape[0] == 0:
        out[...] = from_unit_float(np.zeros(out.shape, np.float32), out.dtype)
        return
    y = resample(to_unit_float(inp), out.shape[0], float(arg.step), int(arg.lobes))
    out[...] = from_unit_float(y, out.dtype)
