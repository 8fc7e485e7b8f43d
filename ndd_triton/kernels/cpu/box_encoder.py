"""box_encoder on the CPU: the whole batch at once, as a `[boxes of all samples, M]` IoU
table on coordinate columns, segment reductions per sample, argmaxes and a scatter (one sample
at a time, NumPy's per-call overhead cost several times the math: 1.2 -> 0.5 CPU ms per image
in the detection recipe, perf/README.md).

The rules (ties to the later box/anchor, forced matches of later boxes override, strict
`> criteria`) are DALI 2.4's, found by black-box runs; see ops/box_encoder.py.
"""

from __future__ import annotations

import numpy as np

from ndd_triton.kernels import register
from ndd_triton.ops import box_encoder
from ndd_triton.ops._bbox import check_box_values
from ndd_triton.ops.schema import Call

_HALF = np.float32(0.5)


def last_argmax(values: np.ndarray, axis: int) -> np.ndarray:
    """Index of the last maximum along `axis` (DALI's tie rule)."""
    flipped = np.flip(values, axis=axis)
    return values.shape[axis] - 1 - np.argmax(flipped, axis=axis)


def _iou_columns(box: list[np.ndarray], anc: list[np.ndarray]) -> np.ndarray:
    """`[K, M]` float32 IoU of boxes `[K]` and anchors `[M]` given as coordinate columns
    `[l, t, r, b]`, 0 where they do not intersect (no 0 / 0). Written in place with inner
    loops over the anchors (as `[K, M, 2]` arrays, NumPy runs a length-2 inner loop, ~50x
    slower per element)."""
    b = [c[:, None] for c in box]
    w = np.minimum(b[2], anc[2])
    w -= np.maximum(b[0], anc[0])
    np.maximum(w, np.float32(0), out=w)
    h = np.minimum(b[3], anc[3])
    h -= np.maximum(b[1], anc[1])
    np.maximum(h, np.float32(0), out=h)
    w *= h  # the intersection
    area_b = (box[2] - box[0]) * (box[3] - box[1])
    area_a = (anc[2] - anc[0]) * (anc[3] - anc[1])
    np.add(area_b[:, None], area_a, out=h)
    h -= w  # the union
    empty = ~(w > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        np.divide(w, h, out=h)
    h[empty] = 0
    return h


def match_batch(box: list[np.ndarray], counts: np.ndarray, anc: list[np.ndarray],
                criteria: float) -> np.ndarray:  # fmt: skip
    """The matching of every sample at once: box columns `[B]` of all samples' boxes in order
    (`counts[i]` per sample), anchor columns `[M]`; `[N, M]` box index (within its sample)
    per anchor, -1 where unmatched. Each sample's best box per anchor is a segment reduction
    over the `[B, M]` IoU rows (`reduceat` along the boxes: element-wise across rows, fast):
    the maximum, then the last box that reaches it (DALI's tie rule)."""
    n, m = len(counts), len(anc[0])
    matched = np.full((n, m), -1, np.int64)
    if not counts.any():
        return matched
    flat = _iou_columns(box, anc)  # [B, M]
    some = np.flatnonzero(counts)
    starts = (np.cumsum(counts) - counts)[some]
    sizes = counts[some]
    best_iou = np.maximum.reduceat(flat, starts, axis=0)  # [S, M], S samples with boxes
    local = (np.arange(len(flat)) - np.repeat(starts, sizes)).astype(np.int32)
    reached = flat == np.repeat(best_iou, sizes, axis=0)
    best_box = np.maximum.reduceat(np.where(reached, local[:, None], np.int32(-1)), starts,
                                   axis=0)  # fmt: skip
    matched[some] = np.where(best_iou > np.float32(criteria), best_box, -1)
    forced = np.full(n * m, -1, np.int64)
    sample = np.repeat(np.arange(n), counts)  # boxes in order within each sample: later wins
    np.maximum.at(forced, sample * m + last_argmax(flat, axis=1), local)
    forced = forced.reshape(n, m)
    return np.where(forced >= 0, forced, matched)


def _centre(left: np.ndarray, top: np.ndarray, right: np.ndarray, bottom: np.ndarray
            ) -> list[np.ndarray]:  # fmt: skip
    """`centre_form` by columns: `[cx, cy, w, h]`."""
    return [(left + right) * _HALF, (top + bottom) * _HALF, right - left, bottom - top]


@register(box_encoder.schema, "cpu", batched=True)
def box_encoder_cpu(call: Call, outs: list[list[np.ndarray]], ins: list[list[np.ndarray]]
                    ) -> None:  # fmt: skip
    """Match, then write boxes (or offsets) and labels of every anchor: the whole batch as one
    `[N, K, M]` computation on coordinate columns (per sample, NumPy call overhead costs
    several times the math); each element goes through the same float32 steps as in `match`
    for one sample alone (tested: a batch equals its samples encoded alone)."""
    n = len(outs[0])
    if n == 0:
        return
    boxes = [b.reshape(-1, 4) for b in ins[0]]
    labels = [lab.reshape(-1) for lab in ins[1]]
    for i, b in enumerate(boxes):
        check_box_values("box_encoder", b, i, ends=True, what="input 0 (bboxes)")
    counts = np.array([len(b) for b in boxes], np.int64)
    k = int(counts.max())
    real = np.arange(k)[None, :] < counts[:, None]
    padded = np.zeros((4, n, k), np.float32)  # coordinate, sample, box
    padded_labels = np.zeros((n, max(k, 1)), np.int32)
    if k:
        padded[:, real] = np.concatenate(boxes).T
        padded_labels[:, :k][real] = np.concatenate(labels)
    anchors = np.ascontiguousarray(np.asarray(call.anchor_boxes, np.float32).T)  # [4, M]
    m = anchors.shape[1]
    idx = match_batch(list(padded[:, real]), counts, list(anchors), call.criteria)
    hit = idx >= 0
    safe = np.maximum(idx, 0)
    rows = np.arange(n)[:, None]
    chosen = padded[:, rows, safe] if k else np.zeros((4, n, m), np.float32)  # [4, N, M]
    out_labels = np.where(hit, padded_labels[rows, safe], 0)
    if not call.offset:
        cols = _centre(*np.where(hit, chosen, anchors[:, None, :]))
    else:
        scale = np.float32(call.scale)
        box_c = _centre(*(chosen * scale))
        anc_c = _centre(*(anchors * scale))
        means, stds = call.encode_means, call.encode_stds
        with np.errstate(divide="ignore", invalid="ignore"):
            cols = [(box_c[0] - anc_c[0]) / anc_c[2], (box_c[1] - anc_c[1]) / anc_c[3],
                    np.log(box_c[2] / anc_c[2]), np.log(box_c[3] / anc_c[3])]  # fmt: skip
        cols = [np.where(hit, (c - means[j]) / stds[j], np.float32(0))
                for j, c in enumerate(cols)]  # fmt: skip
    encoded = np.stack(cols, axis=-1)  # [N, M, 4]
    for i in range(n):
        outs[0][i][...] = encoded[i]
        outs[1][i][...] = out_labels[i]
