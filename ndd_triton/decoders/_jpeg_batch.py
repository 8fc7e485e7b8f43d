"""Plain JPEG headers of a whole batch, checked against each other instead of walked one by one.

`walk_jpeg_header` is a Python loop over the marker segments: ~4-5 us per JPEG, for 64 JPEGs
~300 us of a `decoders.image` call's prepare. But the files of a batch usually come from one
encoder with one setting, and then their headers have the same layout: the same segments of
the same lengths at the same places; only the frame's size differs (and table contents, which
the walk does not read). So one sample is walked in Python, the *template*, and every other
sample is compared with it in one NumPy step: a sample whose bytes equal the template's at
every position where the walk reads something that steers it (segment markers and lengths,
fill bytes, the start of each quantisation table, the APPn prefixes `_plain_app_head` reads,
the frame's precision and component count) is walked the same way by `walk_jpeg_header`, so
its answer is the template's with its own height and width, which are checked (nonzero, the
bomb limit) in the same step. Samples that match no template, or whose frame fails the
checks, are left to the caller's per-sample path (`_pillow.read_info`), so unusual files and
errors behave exactly as before. Templates are tried while they pay: one that settles fewer
than `_MIN_SHARED` samples ends the search (a batch of unrelated layouts then costs one
comparison more than before).

For comparison, a lock-step walk of every sample at once (one NumPy step per segment for
all samples) was prototyped: without the table and APPn checks it took ~190 us per batch of
4 and ~220 us per batch of 64 (9 segments each; ~15 NumPy calls per step), more than the
Python walk below ~45 samples and ~3.5 us per sample at 64. A template costs ~25 us at 4
samples, ~35 us at 64 (same machine, warm caches).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ndd_triton.decoders._jpeg_header import APP_HEAD_BYTES, segments, walk_jpeg_header

_MIN_SHARED = 4  # a template that settles fewer samples than this ends the search
# Below this many samples each is walked: in a `decoders.image` call (caches cold from the
# rest of the call) a walk costs ~5 us, a template and a comparison ~45 us (a batch of 4
# walked as a template measured 23 us more per call, perf/bench_gpu_host.py)
MIN_BATCH = 12
_SOF = (0xC0, 0xC1, 0xC2)
_DQT = 0xDB


@dataclass(frozen=True, slots=True)
class Layout:
    """What `walk_jpeg_header` read to accept the template: its bytes (`values`) where they
    steer the walk (`steering`; with the frame's precision and component count, which are
    those the checks accepted), where the frame's height and width are, and the header's
    length."""

    steering: np.ndarray  # int64 offsets
    values: bytes  # the template's bytes there
    size: np.ndarray  # int64 offsets of the frame's big-endian height and width
    channels: int  # the frame's component count
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
        if marker in _SOF:  # precision, height (2), width (2), components
            frame = start + 4
            positions += (frame, frame + 5)
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
    steering = np.array(positions, np.int64)
    return Layout(steering, data[steering].tobytes(), np.arange(frame + 1, frame + 5),
                  b[frame + 5], length)  # fmt: skip


def plain_jpeg_headers(samples: Sequence[np.ndarray], max_pixels: int) -> np.ndarray:
    """`[N, 3]` int64 (height, width, channels) of the samples that `walk_jpeg_header`
    accepts, as it would answer; a row of zeros for the others and for those left unasked
    (the caller's per-sample path decides those). `samples`: 1-D contiguous uint8."""
    n = len(samples)
    if n < MIN_BATCH:  # each walked: cheaper than a template and a comparison
        rows = []
        for data in samples:
            found = walk_jpeg_header(data, max_pixels)
            rows.append(found[0][1:] if found is not None else (0, 0, 0))
        return np.array(rows, np.int64).reshape(n, 3)
    hwc = np.zeros((n, 3), np.int64)
    sizes: np.ndarray | None = None  # made when a sample is shorter than a template's header
    decided = np.zeros(n, bool)
    pending = np.arange(n)
    while pending.size >= _MIN_SHARED:
        first = int(pending[0])
        found = walk_jpeg_header(samples[first], max_pixels)
        if found is None:  # not a plain JPEG: left to the caller, as the next one may be
            pending = pending[1:]
            continue
        template = layout(samples[first], found[1])
        length = template.length
        candidates = pending
        picked = samples if pending.size == n else [samples[i] for i in pending.tolist()]
        heads = b"".join([v[:length] for v in picked])
        if len(heads) != pending.size * length:  # some are shorter than the header
            if sizes is None:
                sizes = np.fromiter((v.size for v in samples), np.int64, n)
            candidates = pending[sizes[pending] >= length]
            heads = b"".join([samples[i][:length] for i in candidates.tolist()])
        same, hw, ok = _compare(template, heads, candidates.size, max_pixels)
        if same is None and ok is None and candidates.size == n:  # one layout: all done
            hwc[:, :2] = hw
            hwc[:, 2] = template.channels
            return hwc
        walked_alike = candidates[same] if same is not None else candidates
        valid = walked_alike[ok] if ok is not None else walked_alike
        hwc[valid, :2] = hw[ok] if ok is not None else hw
        hwc[valid, 2] = template.channels
        decided[walked_alike] = True
        pending = pending[~decided[pending]]
        if walked_alike.size < _MIN_SHARED:
            break
    return hwc


def _compare(template: Layout, heads: bytes, count: int, max_pixels: int
             ) -> tuple[np.ndarray | None, np.ndarray, np.ndarray | None]:  # fmt: skip
    """Which of `count` headers (`heads`: their first `template.length` bytes, back to back)
    `walk_jpeg_header` walks as the template's (the same bytes where they steer it; None:
    all), their frames' (height, width), and which of those pass its checks (None: all)."""
    rows = np.frombuffer(heads, np.uint8).reshape(count, template.length)
    steering = rows.take(template.steering, axis=1)
    same = None
    size = rows.take(template.size, axis=1)  # [count, 4]: big-endian height and width
    if steering.tobytes() != template.values * count:  # (one comparison when all match)
        same = (steering == np.frombuffer(template.values, np.uint8)).all(axis=1)
        size = size[same]
    hw = size.view(">u2").astype(np.int64)
    area = hw[:, 0] * hw[:, 1]
    ok = None
    if area.min(initial=1) < 1 or area.max(initial=0) > max_pixels:  # empty, or a bomb
        ok = (area >= 1) & (area <= max_pixels)
    return same, hw, ok
