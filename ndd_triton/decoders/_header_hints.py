"""Image headers parsed ahead of the decoders, on a reader's prefetch thread.

A decoder's prepare parses every sample's header before the batch can start decoding (the
output shapes come from it), on the caller's thread while the worker pool waits: ~5-10 us per
JPEG, a few hundred microseconds per batch. Readers run `annotate` on their outputs in the
background instead, attaching `ImageInfo`s of plain JPEGs to the storage as the hint `HINT`
(`BatchStorage.hints`); the decoders use a sample's hint when there is one and parse the header
themselves otherwise (other formats, unusual JPEGs, data that did not come from a reader).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from ndd_triton._storage import BatchStorage

HINT = "image_info"
# With every sample's info hinted: their (height, width, channels) as an `[N, 3]` int64 array
HINT_HWC = "image_hwc"


def _looks_like_jpeg(view: np.ndarray) -> bool:
    return view.size >= 4 and view[0] == 0xFF and view[1] == 0xD8


def annotate(storage: BatchStorage) -> None:
    """Attach the `ImageInfo` (or None) of every sample of a host batch of encoded bytes that
    holds JPEG files; other storages are left alone (and Pillow is not imported)."""
    if storage.device.device_type != "cpu" or storage.dtype != torch.uint8 or \
            storage.num_samples == 0:  # fmt: skip
        return
    from ndd_triton._dispatch import _sample_arrays

    views = _sample_arrays(storage, "reader output")
    if views[0].ndim != 1 or not any(_looks_like_jpeg(v) for v in views):
        return
    from ndd_triton.decoders import _pillow

    infos = [_pillow.plain_jpeg_info(v) if _looks_like_jpeg(v) else None for v in views]
    hints: dict[str, list[Any] | np.ndarray] = {HINT: infos}
    if None not in infos:
        hints[HINT_HWC] = np.array([(i.height, i.width, i.channels) for i in infos],  # type: ignore[union-attr]
                                   dtype=np.int64).reshape(len(infos), 3)  # fmt: skip
    storage.hints = {**(storage.hints or {}), **hints}  # type: ignore[dict-item]
