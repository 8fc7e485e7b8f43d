"""box_encoder on the CPU: one sample per call, on coordinate columns, so that the op runs on
the pool and joins the eager pipeline of the per-sample ops before it (a batched kernel ran on
the executor thread after the pipeline, with the pool idle: ~8 ms per batch of 32 in the
detection recipe, perf/README.md).

The work of a sample is a `[K, M]` IoU table (K boxes, M anchors) built with inner loops over
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


def match(box: list[np.ndarray], anc: _Anchors, criteria: float) -> np.ndarray:
    """`[M]` box index per anchor, -1 where unmatched: the best box (the last of equal IoUs)
    when its IoU is > `criteria`, overridden by each box's best anchor (later boxes win)."""
    k = len(box[0])
    iou = iou_columns(box, anc.cols, anc.area)  # [K, M]
    best = iou.max(axis=0)
    if k == 1:
        best_box = np.zeros(len(best), np.intp)
    else:  # the last box that reaches the maximum
        best_box = k - 1 - np.argmax((iou == best)[::-1], axis=0)
    matched = np.where(best > np.float32(criteria), best_box, -1)
    claims = np.full(len(best), -1, np.intp)
    np.maximum.at(claims, last_argmax(iou, axis=1), np.arange(k))
    return np.where(claims >= 0, claims, matched)


def box_encoder_packed(dst: tuple[Packed, Packed], boxes: Packed, labels: Packed, call: Call,
                       lo: int, hi: int) -> None:  # fmt: skip
    """Samples lo..hi-1 at once: one `[K, M]` IoU table for all their boxes, the per-sample
    reductions over boxes as `reduceat` over each sample's rows, one scatter of the matches.

    The same float32 operations as `box_encoder_cpu` (ties: the later box by the largest local
    index reaching the maximum, the later anchor by `last_argmax`; later boxes' claims win by
    `np.maximum.at` of local indices): the same bits, tests/ops/test_packed_kernels.py.
    """
    encoded, out_labels = dst
    n = hi - lo
    anc = _anchors(call)
    m = len(anc.area)
    enc = encoded.flat[int(encoded.offsets[lo]) : int(encoded.offsets[hi])].reshape(n, m, 4)
    lab = out_labels.flat[int(out_labels.offsets[lo]) : int(out_labels.offsets[hi])].reshape(n, m)
    counts = np.diff(boxes.offsets[lo : hi + 1]) // 4
    flat = boxes.flat[int(boxes.offsets[lo]) : int(boxes.offsets[hi])].reshape(-1, 4)
    with np.errstate(invalid="ignore"):
        bad = np.isnan(flat).any() or (flat[:, 2:] < flat[:, :2]).any()
    if bad:  # the per-sample check names the first bad sample and box
        for i in range(lo, hi):
            check_box_values("box_encoder", boxes.flat[boxes.offsets[i] : boxes.offsets[i + 1]]
                             .reshape(-1, 4), i, ends=True, what="input 0 (bboxes)")  # fmt: skip
    offset = bool(call.offset)
    enc[...] = 0 if offset else anc.centre
    lab[...] = 0
    total = len(flat)
    if not total:
        return
    first_row = np.cumsum(counts) - counts
    full = np.flatnonzero(counts > 0)  # the span's samples with boxes
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
    which = starts[hit_s] + idx[hit_s, hit_a]  # rows of the span's boxes
    sample = full[hit_s]
    lab[sample, hit_a] = labels.flat[int(labels.offsets[lo]) : int(labels.offsets[hi])][which]
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


@register(box_encoder.schema, "cpu", packed=box_encoder_packed)
def box_encoder_cpu(dst: tuple[np.ndarray, np.ndarray], boxes: np.ndarray, labels: np.ndarray,
                    arg: SampleArgs) -> None:  # fmt: skip
    """Match, then write the boxes (or offsets) and labels of every anchor of one sample; the
    matched rows go through the float32 steps of the whole-table version (tested against it)."""
    encoded, out_labels = dst
    box = boxes.reshape(-1, 4)
    check_box_values("box_encoder", box, arg.index, ends=True, what="input 0 (bboxes)")
    anc = _anchors(arg)
    offset = bool(arg.offset)
    if offset:
        encoded[...] = 0
    else:
        encoded[...] = anc.centre
    out_labels[...] = 0
    if not len(box):
        return
    cols = list(np.ascontiguousarray(box.T))
    idx = match(cols, anc, arg.criteria)
    hit = np.flatnonzero(idx >= 0)
    which = idx[hit]
    out_labels[hit] = labels.reshape(-1)[which]
    if not offset:
        encoded[hit] = np.stack(_centre(*cols), axis=-1)[which]
        return
    scale = np.float32(arg.scale)
    box_c = np.stack(_centre(*[c * scale for c in cols]), axis=-1)[which]  # [H, 4]
    anc_c = anc.centre[hit]
    rows = np.empty_like(box_c)
    with np.errstate(divide="ignore", invalid="ignore"):
        np.subtract(box_c[:, :2], anc_c[:, :2], out=rows[:, :2])
        rows[:, :2] /= anc_c[:, 2:]
        np.divide(box_c[:, 2:], anc_c[:, 2:], out=rows[:, 2:])
        np.log(rows[:, 2:], out=rows[:, 2:])
    rows -= arg.encode_means
    rows /= arg.encode_stds
    encoded[hit] = rows
