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

The layouts that settled samples are kept for the next batches (`_recent`, the latest
`_RECENT_MAX`): a pipeline's batches come from the same encoders, so a batch is first compared
with those and usually needs no walk at all. That is exact for any data, as within a batch: a
sample whose steering bytes equal a layout's is walked the same way as that layout's template,
whichever batch the template came from. Small batches (below `MIN_BATCH`) are not worth a
NumPy step: each sample is compared with the recent layouts in Python (`_match`: the steering
bytes as one masked integer, ~1.3 us) and walked only when none matches, and the first sample
walked gives a new recent layout (`layout`, ~8 us, at most once per batch; not for headers
longer than `MATCH_MAX_BYTES`).

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
# Below this many samples each is matched or walked (`_each`): in a `decoders.image` call
# (caches cold from the rest of the call) a walk costs ~5 us, a template and a comparison ~45
# us (a batch of 4 walked as a template measured 23 us more per call, perf/bench_gpu_host.py);
# with a recent layout, a comparison alone ~10 us warm and a Python match ~1.3 us: batches
# of 8 and 10 measured no faster in the call with a NumPy step from 8 samples up
MIN_BATCH = 12
# Longer headers (a large ICC profile) are walked in small batches: their masked integer would
# cost more than the walk (`_match` ~3 us at 4 KB, ~15 us at 20 KB; a walk ~5 us)
MATCH_MAX_BYTES = 4096
_SOF = (0xC0, 0xC1, 0xC2)
_DQT = 0xDB


@dataclass(frozen=True, slots=True, eq=False)
class Layout:
    """What `walk_jpeg_header` read to accept the template: its bytes (`values`) where they
    steer the walk (`steering`; with the frame's precision and component count, which are
    those the checks accepted), where the frame's height and width are, and the header's
    length. `mask` and `want` say the same for one sample at a time (`_match`): the header's
    first `length` bytes as a little-endian integer, ANDed with `mask` (0xFF at the steering
    bytes), are `want` (both 0 for a header longer than `MATCH_MAX_BYTES`: not matched so)."""

    steering: np.ndarray  # int64 offsets
    values: bytes  # the template's bytes there
    size: np.ndarray  # int64 offsets of the frame's big-endian height and width
    channels: int  # the frame's component count
    length: int
    mask: int
    want: int
    frame: int  # the offset of the frame's height (`size[0]`)
    # the template's header bytes before and after its height and width (`_match`: a header
    # equal to them, as one encoder's files of one setting are, has the steering bytes too)
    before: bytes = b""
    after: bytes = b""

    @property
    def key(self) -> tuple[int, bytes, bytes]:
        """Equal for two layouts that accept the same headers."""
        return self.length, self.steering.tobytes(), self.values


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
    mask = want = 0
    if length <= MATCH_MAX_BYTES:
        marks = bytearray(length)
        for at in positions:
            marks[at] = 0xFF
        mask = int.from_bytes(marks, "little")
        want = int.from_bytes(b, "little") & mask
    head = bytes(b)
    return Layout(steering, data[steering].tobytes(), np.arange(frame + 1, frame + 5),
                  b[frame + 5], length, mask, want, frame + 1, head[:frame + 1],
                  head[frame + 5:])  # fmt: skip


def plain_jpeg_headers(samples: Sequence[np.ndarray], max_pixels: int) -> np.ndarray:
    """`[N, 3]` int64 (height, width, channels) of the samples that `walk_jpeg_header`
    accepts, as it would answer; a row of zeros for the others and for those left unasked
    (the caller's per-sample path decides those). `samples`: 1-D contiguous uint8."""
    if len(samples) < MIN_BATCH:
        return _each(samples, max_pixels)
    batch = _Batch(samples, max_pixels)
    used: list[Layout] = []
    for template in _recent:  # the latest batches' layouts first: no walk when they match
        if not batch.settle(template):
            break
        used.append(template)
        if not batch.pending.size:
            break
    while batch.pending.size >= _MIN_SHARED:
        first = int(batch.pending[0])
        found = walk_jpeg_header(samples[first], max_pixels)
        if found is None:  # not a plain JPEG: left to the caller, as the next one may be
            batch.pending = batch.pending[1:]
            continue
        template = layout(samples[first], found[1])
        settled = batch.settle(template)
        used.append(template)
        if settled < _MIN_SHARED:
            break
    _remember(used)
    return batch.hwc


class _Batch:
    """The samples of a batch walk: the answers found so far (`hwc`) and the samples that no
    template has walked yet (`pending`, in order)."""

    def __init__(self, samples: Sequence[np.ndarray], max_pixels: int) -> None:
        n = len(samples)
        self.samples, self.max_pixels = samples, max_pixels
        self.hwc = np.zeros((n, 3), np.int64)
        self.pending = np.arange(n)
        self.decided: np.ndarray | None = None  # made when a template settles some only
        self.sizes: np.ndarray | None = None  # made when a sample is shorter than a header

    def settle(self, template: Layout) -> int:
        """Give the pending samples that `walk_jpeg_header` walks as `template` its answer
        (zeros where their frame fails the checks); returns how many it walks so."""
        samples, pending, length = self.samples, self.pending, template.length
        candidates = pending
        picked = samples if pending.size == len(samples) else \
            [samples[i] for i in pending.tolist()]  # fmt: skip
        heads = b"".join([v[:length] for v in picked])
        if len(heads) != pending.size * length:  # some are shorter than the header
            if self.sizes is None:
                self.sizes = np.fromiter((v.size for v in samples), np.int64, len(samples))
            candidates = pending[self.sizes[pending] >= length]
            heads = b"".join([samples[i][:length] for i in candidates.tolist()])
        same, hw, ok = _compare(template, heads, candidates.size, self.max_pixels)
        if same is None and ok is None and candidates.size == len(samples):  # all alike
            self.hwc[:, :2] = hw
            self.hwc[:, 2] = template.channels
            self.pending = pending[:0]
            return len(samples)
        walked_alike = candidates[same] if same is not None else candidates
        valid = walked_alike[ok] if ok is not None else walked_alike
        self.hwc[valid, :2] = hw[ok] if ok is not None else hw
        self.hwc[valid, 2] = template.channels
        if walked_alike.size == pending.size:
            self.pending = pending[:0]
        elif walked_alike.size:
            if self.decided is None:
                self.decided = np.zeros(len(samples), bool)
            self.decided[walked_alike] = True
            self.pending = pending[~self.decided[pending]]
        return int(walked_alike.size)


def _each(samples: Sequence[np.ndarray], max_pixels: int) -> np.ndarray:
    """`plain_jpeg_headers` of a small batch, sample by sample: compared with the recent
    layouts in Python (`_match`, ~1 us), else walked (~5 us); the first sample walked whose
    layout is new becomes a recent layout (`layout`, ~8 us once per call)."""
    if _recent and _recent[0].mask:  # the common case: every sample has the latest layout
        latest = _recent[0]
        matched = [_match(latest, data, max_pixels) for data in samples]
        if None not in matched:  # (nothing to remember: the latest stays the latest)
            return np.array(matched, np.int64).reshape(len(samples), 3)
    rows = []
    used: list[Layout] = []
    known = list(_recent)
    adopted = False
    for data in samples:
        row = None
        for template in known:
            if not template.mask:  # (too long to match so)
                continue
            row = _match(template, data, max_pixels)
            if row is not None:
                if template not in used:  # (identity: layouts have no `==`)
                    used.append(template)
                break
        if row is None:
            found = walk_jpeg_header(data, max_pixels)
            row = found[0][1:] if found is not None else (0, 0, 0)
            if found is not None and not adopted and found[1] <= MATCH_MAX_BYTES:
                adopted = True
                template = layout(data, found[1])
                known.insert(0, template)
                used.append(template)
        rows.append(row)
    _remember(used)
    return np.array(rows, np.int64).reshape(len(samples), 3)


def _match(template: Layout, data: np.ndarray, max_pixels: int) -> tuple[int, int, int] | None:
    """`walk_jpeg_header`'s (height, width, channels) of `data` when it walks `data` as the
    template (zeros where the frame fails its checks), else None: `_compare` for one sample,
    its steering bytes compared as one masked Python integer."""
    length = template.length
    head = data[:length].tobytes()
    if len(head) != length:
        return None
    if not (head.startswith(template.before) and head.endswith(template.after)) and \
            int.from_bytes(head, "little") & template.mask != template.want:  # fmt: skip
        return None  # (the equal bytes cost two memcmps; the masked integer ~1 us at 600 B)
    at = template.frame
    height, width = head[at] << 8 | head[at + 1], head[at + 2] << 8 | head[at + 3]
    if not 1 <= height * width <= max_pixels:
        return 0, 0, 0
    return height, width, template.channels


_RECENT_MAX = 4
# The layouts that settled samples in the latest batches, the latest first: the batches of a
# pipeline come from the same encoders, so a batch is compared with these before any of its
# samples is walked. Replaced whole, never changed in place: threads read it without a lock
# (an update lost to a race costs a walk later). Any sample matching a layout is walked as its
# template was, whichever batch the template came from, so what is kept cannot go stale.
_recent: tuple[Layout, ...] = ()


def forget_layouts() -> None:
    """Drop the recent layouts (tests: the next batch walks its templates)."""
    global _recent
    _recent = ()


def _remember(used: list[Layout]) -> None:
    """Make `used` (in order) the latest layouts, ahead of the others kept."""
    global _recent
    old = _recent
    if len(used) == 1 and old and used[0] is old[0]:
        return  # (the common case: the batch matched the latest layout)
    if len(used) <= len(old) and all(u is t for u, t in zip(used, old, strict=False)):
        return  # (the batch matched the latest layouts, in order)
    kept = [t for t in old if all(t.key != u.key for u in used)]
    _recent = (*used, *kept)[:_RECENT_MAX]


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
    if np.minimum.reduce(area, initial=1) < 1 or \
            np.maximum.reduce(area, initial=0) > max_pixels:  # empty, or a bomb
        ok = (area >= 1) & (area <= max_pixels)
    return same, hw, ok
