"""Plain JPEG headers of a whole batch, checked against each other instead of walked one by one.

`walk_jpeg_header` is a Python loop over the marker segments: ~4-5 us per JPEG, for 64 JPEGs
~300 us of a `decoders.image` call's prepare. But the files of a batch usually come from one
encoder with one setting, and then their headers have the same layout: the same segments of
the same lengths at the same places; only the frame's size differs (and table contents, which
the walk does not read). So one sample is walked in Python, the *template*, and every other
sample is compared with it in one NumPy step: a sample whose bytes equal the template's at
every position where the walk reads something that steers it (segment markers and lengths,
fill bytes, the start of each quantisation table, the APPn prefixes `_plain_app_head` reads)
is walked the same way by `walk_jpeg_header`, so its answer is the template's with its own
frame header, which is read and checked (precision, components, size, bomb limit) in the
same step. Samples that match no template, or whose frame fails the checks, are left to the
caller's per-sample path (`_pillow.read_info`), so unusual files and errors behave exactly as
before. Templates are tried while they pay: one that settles fewer than `_MIN_SHARED` samples
ends the search (a batch of unrelated layouts then costs one comparison more than before).

A lock-step walk of every sample at once (one NumPy step per segment) was measured first: its
~15 NumPy calls per segment cost ~150-300 us per batch, more than the Python walk below ~40
samples and never under ~2 us per sample at 64.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ndd_triton.decoders._jpeg_header import APP_HEAD_BYTES, segments, walk_jpeg_header

_MIN_SHARED = 4  # a template that settles fewer samples than this ends the search
# Below this many samples, walking each (~4 us) is cheaper than a template and a comparison
# (~40 us at 4 samples, ~60 at 64)
MIN_BATCH = 12
_SOF = (0xC0, 0xC1, 0xC2)
_DQT = 0xDB


@dataclass(frozen=True, slots=True)
class Layout:
    """What `walk_jpeg_header` read to accept the template: its bytes (`values`) where they
    steer the walk, where its frame header is (precision, height, width, components), and
    the header's length."""

    columns: np.ndarray  # int64: the bytes that steer the walk, then the frame header's 6
    values: np.ndarray  # uint8, the template's bytes at the steering ones
    length: int


def layout(data: np.ndarray, length: int) -> Layout:
    """The `Layout` of a sample that `walk_jpeg_header` accepted with a header of `length`
    bytes (the segments it went through, in the same order: `segments` is its walk without
    the checks)."""
    b = memoryview(data)[:length]
    positions: list[int] = [0, 1]  # SOI
    frame = -1
    prev = 2
    for seg in segments(b):
        assert seg is not None  # the walk accepted these bytes
        marker, start, end = seg
        positions.extend(range(prev, start + 4))  # fill bytes, marker, length
        if marker in _SOF:
            frame = start + 4
        elif marker == _DQT:  # the byte that starts each table says how long it is
            q = start + 4
            while q < end:
                positions.append(q)
                q += 1 + (64 if b[q] >> 4 == 0 else 128)
        elif marker in APP_HEAD_BYTES:
            positions.extend(range(start + 4, min(end, start + 4 + APP_HEAD_BYTES[marker])))
        prev = end
        if marker == 0xDA:
            break
    assert prev == length
    assert frame > 0
    steer = np.array(positions, np.int64)
    return Layout(np.concatenate([steer, np.arange(frame, frame + 6)]), data[steer], length)


def plain_jpeg_headers(samples: Sequence[np.ndarray], max_pixels: int) -> np.ndarray:
    """`[N, 3]` int64 (height, width, channels) of the samples that `walk_jpeg_header`
    accepts, as it would answer; a row of zeros where it was not asked (the caller's
    per-sample path decides those). `samples`: 1-D contiguous uint8."""
    n = len(samples)
    hwc = np.zeros((n, 3), np.int64)
    if n < MIN_BATCH:
        return hwc
    sizes = np.fromiter((v.size for v in samples), np.int64, n)
    decided = np.zeros(n, bool)
    pending = np.arange(n)
    while pending.size >= _MIN_SHARED:
        first = int(pending[0])
        found = walk_jpeg_header(samples[first], max_pixels)
        if found is None:  # not a plain JPEG: left to the caller, as the next one may be
            pending = pending[1:]
            continue
        same, rows = _compare(layout(samples[first], found[1]), samples, pending, sizes,
                              max_pixels)  # fmt: skip
        hwc[same] = rows
        decided[same] = True
        pending = pending[~decided[pending]]
        if same.size < _MIN_SHARED:
            break
    return hwc


def _compare(template: Layout, samples: Sequence[np.ndarray], pending: np.ndarray,
             sizes: np.ndarray, max_pixels: int) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """The samples among `pending` that `walk_jpeg_header` walks as it walks the template
    (the same bytes at the same places), and their (height, width, channels): its answer, or
    zeros where their frame fails its checks (it returns None for those)."""
    length = template.length
    # the walk looks at the first 64 KiB only; a template's header is within them
    long = pending if sizes[pending].min() >= length else pending[sizes[pending] >= length]
    if not long.size:
        return long, np.zeros((0, 3), np.int64)
    picked = samples if long.size == len(samples) else [samples[i] for i in long.tolist()]
    heads = np.frombuffer(b"".join([v[:length] for v in picked]), np.uint8)
    heads = heads.reshape(long.size, length).take(template.columns, axis=1)
    steer = len(template.values)
    same = (heads[:, :steer] == template.values).all(axis=1)
    # precision, height, width, components (big-endian 16-bit sizes)
    frame = heads[same, steer:].astype(np.int64)
    hw = frame @ _SIZES
    ok = (frame[:, 0] == 8) & _COMPONENTS[frame[:, 5]] & (hw.min(axis=1) > 0) & \
        (hw[:, 0] * hw[:, 1] <= max_pixels)  # fmt: skip
    rows = np.concatenate([hw, frame[:, 5:]], axis=1)
    rows[~ok] = 0
    return long[same], rows


_SIZES = np.array([[0, 0], [256, 0], [1, 0], [0, 256], [0, 1], [0, 0]], np.int64)
_COMPONENTS = np.isin(np.arange(256), (1, 3, 4))  # the component counts the walk accepts
