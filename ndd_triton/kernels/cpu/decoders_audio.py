"""decoders.audio on the CPU: libsndfile decode, downmix, windowed-sinc resampling, convert."""

from __future__ import annotations

import math

import numpy as np

from ndd_triton.decoders import _audio, _sources
from ndd_triton.kernels import register
from ndd_triton.ops import decoders_audio
from ndd_triton.ops._audio import resample
from ndd_triton.ops.schema import SampleArgs


def _to_int(x: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Float samples in [-1, 1] to full-scale integers (x * 2^(bits-1), rounded, saturated)."""
    info = np.iinfo(dtype)
    v = np.rint(x.astype(np.float64) * (float(info.max) + 1.0))
    return np.clip(v, info.min, info.max).astype(dtype)


@register(decoders_audio.schema, "cpu", inline=False)
def audio_cpu(inp: np.ndarray, arg: SampleArgs) -> tuple[np.ndarray, np.ndarray]:
    """Decode one file; RuntimeError names the sample and its source."""
    out_dtype = arg.dtype.numpy_dtype
    target = float(arg.sample_rate)
    try:
        plain = not arg.downmix and target <= 0
        samples, rate = _audio.decode(arg.encoded, out_dtype.name if plain else "float32")
    except _audio.AudioError as e:
        source = _sources.sample_sources([arg.encoded])[0]
        raise RuntimeError(f"decoders.audio: {_sources.describe(arg.index, source)}: {e}") from e
    if plain:
        return samples, np.array(rate, np.float32)
    x = samples.mean(axis=1, dtype=np.float32) if arg.downmix else samples
    if target > 0 and target != rate:
        length = math.ceil(x.shape[0] * target / rate)
        x = resample(x, length, rate / target, int(arg.lobes))
    out = x.astype(np.float32) if out_dtype == np.float32 else _to_int(x, out_dtype)
    return out, np.array(target if target > 0 else rate, np.float32)
