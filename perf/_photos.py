"""Benchmark inputs cut from the packaged sample photos (shared by the perf scripts)."""

from __future__ import annotations

import glob
import os
from typing import Any


def sample_photos() -> list[Any]:
    """The packaged photos as RGB PIL images."""
    from PIL import Image

    import ndd_triton

    here = os.path.dirname(os.path.abspath(ndd_triton.__file__))
    return [Image.open(p).convert("RGB")
            for p in sorted(glob.glob(os.path.join(here, "data", "images", "*.jpg")))]  # fmt: skip


def photo_window(sources: list[Any], i: int, size: tuple[int, int]) -> Any:
    """Image `i`: a different window of photo `i % len(sources)`, resized to `size` (W, H),
    mirrored for odd `i` (varied content for the codecs)."""
    from PIL import Image

    src = sources[i % len(sources)]
    w, h = src.size
    frac = 0.6 + 0.4 * ((i * 37) % 11) / 10
    cw, ch = max(int(w * frac), 16), max(int(h * frac), 16)
    x0, y0 = (i * 13) % (w - cw + 1), (i * 7) % (h - ch + 1)
    image = src.crop((x0, y0, x0 + cw, y0 + ch)).resize(size, Image.BILINEAR)
    return image.transpose(Image.FLIP_LEFT_RIGHT) if i % 2 else image
