"""Image headers parsed ahead of the decoders, on a reader's prefetch thread.

A decoder's prepare parses every sample's header before the batch can start decoding (the
output shapes come from it), on the caller's thread while the worker pool waits: ~5-10 us per
JPEG walked alone, ~35-90 us per batch of 64 JPEGs of one layout (`_jpeg_batch`). Readers run
`annotate` on their outputs in the background instead, attaching `ImageInfo`s of plain JPEGs
to the storage as the hint `HINT` (`BatchStorage.hints`); the decoders use a sample's hint
when there is one and parse the header themselves otherwise (other formats, unusual JPEGs,
data that did not come from a reader). A reader also records whether each file ends in the
JPEG end-of-image marker (`HINT_EOI`, one NumPy test per batch; `HINT_ALL_EOI` for the
whole batch), which the GPU decoder's completeness check reads instead of each file's last
bytes, and whether its samples are slices of one flat buffer (`HINT_FLAT`: no per-sample
layout check in the decoders). Once the GPU decoder has decoded through nvImageCodec, readers
also make the codec's code streams of their batches (`HINT_CODE_STREAMS`).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from ndd_triton.core.host_views import sample_arrays
from ndd_triton.core.storage import BatchStorage

HINT = "image_info"
# With every sample's info hinted: their (height, width, channels) as an `[N, 3]` int64 array
HINT_HWC = "image_hwc"
# Whether each sample ends in the JPEG end-of-image marker (an `[N]` bool array, computed for
# the whole batch at once): the GPU decoder's completeness check without a look at each file
HINT_EOI = "ends_in_eoi"
# True when every sample ends in the marker (`HINT_EOI.all()`, taken once on the reader's thread)
HINT_ALL_EOI = "all_end_in_eoi"
# True when the samples are 1-D slices of one packed host buffer, hence C-contiguous: the
# decoders take the reader's views as they are instead of checking each one
HINT_FLAT = "flat_samples"
# (maker, [N] code streams): nvImageCodec's code streams of the samples, made by `maker` (the
# codec's `CodeStream`, zero-copy views of the bytes) on the reader's thread once the GPU
# decoder has used the codec in this process (`want_code_streams`), so that its decode call
# does not make them (perf/gpu.md, 2026-11-27: ~0.3 ms per batch of 64 inside the op)
HINT_CODE_STREAMS = "code_streams"

_stream_maker: Callable[[np.ndarray], Any] | None = None


def want_code_streams(maker: Callable[[np.ndarray], Any] | None) -> None:
    """Readers make code streams of their batches with `maker` from now on (None: stop)."""
    global _stream_maker
    _stream_maker = maker


def stream_maker() -> Callable[[np.ndarray], Any] | None:
    """The code stream maker readers use (None: they make none)."""
    return _stream_maker


def _forget_stream_maker() -> None:
    """A forked child (a DataLoader worker) cannot use its parent's codec (CUDA)."""
    want_code_streams(None)


if hasattr(os, "register_at_fork"):  # (decoders sit below the runtime and its fork hooks)
    os.register_at_fork(after_in_child=_forget_stream_maker)


def _looks_like_jpeg(view: np.ndarray) -> bool:
    return view.size >= 4 and view[0] == 0xFF and view[1] == 0xD8


class HeaderCache:
    """Headers walked in earlier epochs, by sample key (a reader's dataset index: the same files
    come back every epoch). An entry answers only when the hash of the sample's first `length`
    bytes, the bytes its answer was read from, is the stored one: a rewritten file is walked
    again. ~1 us per sample instead of a 5-9 us walk; 24 bytes per dataset sample."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._length = np.zeros(0, np.int64)  # 0: nothing stored (made on first use)
        self._hash = np.zeros(0, np.int64)
        self._info: list[Any] = []
        self._shared: dict[tuple[str, int, int, int], Any] = {}  # one ImageInfo per value

    def infos(self, views: list[np.ndarray], keys: np.ndarray) -> list[Any]:
        """The plain-JPEG `ImageInfo` (or None) of each view, the one of key `keys[i]`."""
        from ndd_triton.decoders import _pillow

        if not self._info:
            self._length = np.zeros(self._size, np.int64)
            self._hash = np.zeros(self._size, np.int64)
            self._info = [None] * self._size

        out: list[Any] = []
        known = zip(keys.tolist(), self._length[keys].tolist(), self._hash[keys].tolist(),
                    strict=True)  # fmt: skip
        for view, (key, length, digest) in zip(views, known, strict=True):
            if length and view.size >= length and hash(view[:length].tobytes()) == digest:
                out.append(self._info[key])
                continue
            found = _pillow.walk_plain_jpeg(view) if _looks_like_jpeg(view) else None
            if found is None:
                self._length[key] = 0
                out.append(None)
                continue
            info, length = found
            info = self._shared.setdefault((info.mode, info.height, info.width, info.channels),
                                           info)  # fmt: skip
            self._length[key] = length
            self._hash[key] = hash(view[:length].tobytes())
            self._info[key] = info
            out.append(info)
        return out


def annotate(storage: BatchStorage, keys: np.ndarray | None = None,
             cache: HeaderCache | None = None) -> None:  # fmt: skip
    """Attach the `ImageInfo` (or None) of every sample of a host batch of encoded bytes that
    holds JPEG files; other storages are left alone (and Pillow is not imported). With a
    `cache`, sample i is looked up there under `keys[i]`."""
    if storage.device.device_type != "cpu" or storage.dtype != torch.uint8 or \
            storage.num_samples == 0:  # fmt: skip
        return
    views = sample_arrays(storage, "reader output")
    if views[0].ndim != 1 or not any(_looks_like_jpeg(v) for v in views):
        return
    from ndd_triton.decoders import _pillow

    if cache is not None and keys is not None:
        infos = cache.infos(views, keys)
    else:
        infos = [_pillow.plain_jpeg_info(v) if _looks_like_jpeg(v) else None for v in views]
    hints: dict[str, list[Any] | np.ndarray] = {HINT: infos}
    if None not in infos:
        hints[HINT_HWC] = np.array([(i.height, i.width, i.channels) for i in infos],  # type: ignore[union-attr]
                                   dtype=np.int64).reshape(len(infos), 3)  # fmt: skip
    eoi = _ends_in_eoi(storage)
    if eoi is not None:
        hints[HINT_EOI] = eoi
        hints[HINT_ALL_EOI] = bool(eoi.all())
    if storage.host_views() is not None:  # (slices of the flat buffer, 1-D as checked above)
        hints[HINT_FLAT] = True
    maker = _stream_maker
    if maker is not None:
        # (a failure, never seen: the codec parses later, leaves them to the decoder)
        with contextlib.suppress(Exception):
            hints[HINT_CODE_STREAMS] = (maker, list(map(maker, views)))
    storage.hints = {**(storage.hints or {}), **hints}  # type: ignore[dict-item]


def _ends_in_eoi(storage: BatchStorage) -> np.ndarray | None:
    """Per sample of a packed host batch of 1-D samples: whether its last two bytes are the
    end-of-image marker FF D9 (None when the batch is not one packed NumPy buffer)."""
    flat, offsets, sizes = storage.host_buffer(), storage.offsets, storage.sample_sizes()
    if flat is None or offsets is None or not len(offsets):
        return None
    if sizes is None:  # a uniform batch: equal samples back to back
        sizes = np.full(len(offsets), flat.size // len(offsets), np.int64)
    ends = offsets + sizes
    return (sizes >= 2) & (flat[np.maximum(ends - 2, 0)] == 0xFF) & \
        (flat[np.maximum(ends - 1, 0)] == 0xD9)  # fmt: skip
