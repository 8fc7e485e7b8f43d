"""box_encoder on the CPU: a packed kernel (a span of samples on the batch's flat buffers, one
IoU table for all their boxes: docs/concepts.md, "Small per-sample work and the GIL"), and a
per-sample form of the same code for inputs that are not in one buffer.

The work is a `[K, M]` IoU table (K boxes, M anchors) built with inner loops over
the anchors (as `[K, M, 2]` arrays NumPy runs a length-2 inner loop, ~50x slower per element),
reductions over the boxes, and the encoding of the matched anchors only. What depends on the
anchors alone (columns, areas, centres) is computed once per call.

The rules (ties to the later box/anchor, forced matches of later boxes override, strict
`> criteria`) are DALI 2.4's, found by black-box runs; see ops/box_encoder.py.
"""

from __future__ import annotations

import threading

import numpy as np

from ndd_triton.core.host_views import Packed
from ndd_triton.kernels import register
from ndd_triton.ops import box_encoder
from ndd_triton.ops._bbox import check_box_values
from ndd_triton.ops.schema import Call, SampleArgs

_HALF = np.float32(0.5)
_ZERO = np.float32(0)


def last_argmax(values: np.ndarray, axis: int) -> np.ndarray:
    """Index of the last maximum along `axis` (DALI's tie rule)."""
    flipped = np.flip(values, axis=axis)
    return values.shape[axis] - 1 - np.argmax(flipped, axis=axis)


def _centre(left: np.ndarray, top: np.ndarray, right: np.ndarray, bottom: np.ndarray
            ) -> list[np.ndarray]:  # fmt: skip
    """`centre_form` by columns: `[cx, cy, w, h]`."""
    return [(left + right) * _HALF, (top + bottom) * _HALF, right - left, bottom - top]


class _Anchors:
    """What the encoding of every sample of one call needs from the anchors."""

    __slots__ = ("area", "centre", "cols", "key", "source")

    def __init__(self, source: np.ndarray, offset: bool, scale: float) -> None:
        self.source = source  # the call's derived `[M, 4]` array (with `key`, the cache key)
        self.key = (offset, scale)
        cols = np.ascontiguousarray(np.asarray(source, np.float32).T)  # [4, M]
        self.cols = list(cols)
        self.area = (cols[2] - cols[0]) * (cols[3] - cols[1])
        # offsets: scaled centre form; boxes: the unmatched rows (the anchor's centre form)
        centre = _centre(*(cols * np.float32(scale))) if offset else _centre(*cols)
        self.centre = np.stack(centre, axis=-1)  # [M, 4]


_cache = threading.local()


def _anchors(arg: SampleArgs | Call) -> _Anchors:
    """The anchor data of this call (computed by the first sample a thread runs)."""
    source = arg.anchor_boxes
    prepared: _Anchors | None = getattr(_cache, "anchors", None)
    offset, scale = bool(arg.offset), arg.scale
    if prepared is None or prepared.source is not source or prepared.key != (offset, scale):
        prepared = _Anchors(source, offset, scale)
        _cache.anchors = prepared
    return prepared


def iou_columns(box: list[np.ndarray], anc: list[np.ndarray], area_a: np.ndarray
                ) -> np.ndarray:  # fmt: skip
    """`[K, M]` float32 IoU of boxes `[K]` and anchors `[M]` given as coordinate columns
    `[l, t, r, b]` (`area_a`: the anchors' areas), 0 where they do not intersect (no 0 / 0)."""
    b = [c[:, None] for c in box]
    w = np.minimum(b[2], anc[2])
    w -= np.maximum(b[0], anc[0])
    np.maximum(w, _ZERO, out=w)
    h = np.minimum(b[3], anc[3])
    h -= np.maximum(b[1], anc[1])
    np.maximum(h, _ZERO, out=h)
    w *= h  # the intersection
    area_b = (box[2] - box[0]) * (box[3] - box[1])
    np.add(area_b[:, None], area_a, out=h)
    h -= w  # the union
    empty = ~(w > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        np.divide(w, h, out=h)
    h[empty] = 0
    return h


def box_encoder_packed(dst: tuple[Packed, Packed], boxes: Packed, labels: Packed, call: Call,
                       lo: int, hi: int) -> None:  # fmt: skip
    """Samples lo..hi-1 of packed batches (`_encode` on their slices of the flat buffers)."""
    encoded, out_labels = dst
    n, m = hi - lo, len(call.anchor_boxes)
    _encode(encoded.flat[int(encoded.offsets[lo]) : int(encoded.offsets[hi])].reshape(n, m, 4),
            out_labels.flat[int(out_labels.offsets[lo]) : int(out_labels.offsets[hi])]
            .reshape(n, m),
            boxes.flat[int(boxes.offsets[lo]) : int(boxes.offsets[hi])].reshape(-1, 4),
            np.diff(boxes.offsets[lo : hi + 1]) // 4,
            labels.flat[int(labels.offsets[lo]) : int(labels.offsets[hi])], call, lo)  # fmt: skip


@register(box_encoder.schema, "cpu", packed=box_encoder_packed)
def box_encoder_cpu(dst: tuple[np.ndarray, np.ndarray], boxes: np.ndarray, labels: np.ndarray,
                    arg: SampleArgs) -> None:  # fmt: skip
    """One sample (inputs not laid out in one buffer: `ndd.as_batch` of separate arrays)."""
    encoded, out_labels = dst
    box = boxes.reshape(-1, 4)
    _encode(encoded[None], out_labels[None], box, np.array([len(box)]), labels.reshape(-1), arg,
            arg.index)  # fmt: skip


def _encode(enc: np.ndarray, lab: np.ndarray, flat: np.ndarray, counts: np.ndarray,
            labels: np.ndarray, call: Call | SampleArgs, first: int) -> None:  # fmt: skip
    """Encode samples `first`, `first + 1`, ... (`counts[i]` of the `[T, 4]` boxes `flat` and
    `labels` each) into `enc` `[n, M, 4]` and `lab` `[n, M]`: one `[T, M]` IoU table for all
    their boxes, the per-sample reductions over boxes as `reduceat` over each sample's rows,
    one scatter of the matches. DALI's rules: an anchor takes its best box (the later of equal
    IoUs: the largest local index reaching the maximum) when the IoU is > `criteria`; each box
    then claims its best anchor (the later of equal IoUs, `last_argmax`), later boxes' claims
    winning (`np.maximum.at` of local indices)."""
    with np.errstate(invalid="ignore"):
        bad = np.isnan(flat).any() or (flat[:, 2:] < flat[:, :2]).any()
    if bad:  # the per-sample check names the first bad sample and box
        ends = np.cumsum(counts)
        for i, (a, b) in enumerate(zip(ends - counts, ends, strict=True)):
            check_box_values("box_encoder", flat[a:b], first + i, ends=True,
                             what="input 0 (bboxes)")  # fmt: skip
    anc = _anchors(call)
    m = len(anc.area)
    offset = bool(call.offset)
    enc[...] = 0 if offset else anc.centre
    lab[...] = 0
    total = len(flat)
    if not total:
        return
    first_row = np.cumsum(counts) - counts
    full = np.flatnonzero(counts > 0)  # the samples with boxes
    starts = first_row[full]
    row_sample = np.repeat(np.arange(len(full)), counts[full])  # index into `full`
    local = np.arange(total) - starts[row_sample]
    cols = list(np.ascontiguousarray(flat.T))
    iou = iou_columns(cols, anc.cols, anc.area)  # [total, M]
    best = np.maximum.reduceat(iou, starts, axis=0)  # [F, M]
    ties = np.where(iou == best[row_sample], local[:, None].astype(np.int32), np.int32(-1))
    best_box = np.maximum.reduceat(ties, starts, axis=0)  # the last box reaching the maximum
    matched = np.where(best > np.float32(call.criteria), best_box, -1)
    claims = np.full((len(full), m), -1, np.intp)
    np.maximum.at(claims, (row_sample, last_argmax(iou, axis=1)), local)
    idx = np.where(claims >= 0, claims, matched)
    hit_s, hit_a = np.nonzero(idx >= 0)
    which = starts[hit_s] + idx[hit_s, hit_a]  # rows of `flat`
    sample = full[hit_s]
    lab[sample, hit_a] = labels[which]
    if not offset:
        enc[sample, hit_a] = np.stack(_centre(*cols), axis=-1)[which]
        return
    scale = np.float32(call.scale)
    box_c = np.stack(_centre(*[c * scale for c in cols]), axis=-1)[which]
    anc_c = anc.centre[hit_a]
    rows = np.empty_like(box_c)
    with np.errstate(divide="ignore", invalid="ignore"):
        np.subtract(box_c[:, :2], anc_c[:, :2], out=rows[:, :2])
        rows[:, :2] /= anc_c[:, 2:]
        np.divide(box_c[:, 2:], anc_c[:, 2:], out=rows[:, 2:])
        np.log(rows[:, 2:], out=rows[:, 2:])
    rows -= call.encode_means
    rows /= call.encode_stds
    enc[sample, hit_a] = rows
