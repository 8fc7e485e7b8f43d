"""Audio codec helper: WAV/FLAC/OGG (and what else libsndfile reads) bytes -> samples.

Decoding is libsndfile's, through `soundfile` (imported on first use, so `import ndd_triton`
does not load it). Float output follows libsndfile's scaling: 16-bit PCM divided by 32768.
"""

from __future__ import annotations

import io
from types import ModuleType
from typing import Any

import numpy as np


class AudioError(Exception):
    """The bytes are not audio libsndfile can decode (corrupt, truncated header, unknown)."""


def _soundfile() -> ModuleType:
    try:
        import soundfile
    except ImportError as e:  # pragma: no cover - a declared dependency
        raise AudioError(
            f"the soundfile package (libsndfile) is needed to decode audio: {e}"
        ) from e
    return soundfile


def decode(data: np.ndarray, dtype: str) -> tuple[np.ndarray, float]:
    """`(samples (frames, channels), sample_rate)`; `dtype` is "float32", "int16" or "int32"
    (integers are the file's full-scale values, as libsndfile converts them)."""
    sf = _soundfile()
    if data.size == 0:
        raise AudioError("empty input (0 bytes)")
    try:
        with sf.SoundFile(io.BytesIO(data.tobytes())) as f:
            rate = float(f.samplerate)
            samples: Any = f.read(dtype=dtype, always_2d=True)
    except (RuntimeError, sf.LibsndfileError, TypeError, ValueError) as e:
        text = str(e).split(": ", 1)[-1] if "BytesIO" in str(e) else str(e)  # no object repr
        raise AudioError(f"cannot decode audio: {text}") from None
    return np.ascontiguousarray(samples), rate
