"""JPEG round trip of HWC uint8 frames with Pillow (libjpeg-turbo, 4:2:0, ISLOW DCT)."""

from __future__ import annotations

import io

import numpy as np
from PIL import Image


def jpeg_roundtrip(frames: np.ndarray, quality: int, out: np.ndarray) -> None:
    """Encode every `[..., H, W, 3]` frame at `quality` and decode it into `out`."""
    flat_in = frames.reshape(-1, *frames.shape[-3:])
    flat_out = out.reshape(flat_in.shape)
    for k, frame in enumerate(flat_in):
        if frame.size == 0:
            continue
        buffer = io.BytesIO()
        Image.fromarray(np.ascontiguousarray(frame), "RGB").save(
            buffer, format="JPEG", quality=int(quality), subsampling="4:2:0")
        buffer.seek(0)
        with Image.open(buffer) as decoded:
            flat_out[k] = np.asarray(decoded.convert("RGB"))
