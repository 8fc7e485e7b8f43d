"""box_encoder on the CPU: one sample as a (K, M) IoU matrix, argmaxes and a scatter.

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


def iou_matrix(boxes: np.ndarray, anchors: np.ndarray) -> np.ndarray:
    """`(K, M)` float32 IoU; 0 where a box and an anchor do not intersect (no 0 / 0)."""
    lo = np.maximum(boxes[:, None, :2], anchors[None, :, :2])
    hi = np.minimum(boxes[:, None, 2:], anchors[None, :, 2:])
    size = np.maximum(hi - lo, 0)
    inter = size[..., 0] * size[..., 1]
    area_b = (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])
    area_a = (anchors[:, 2] - anchors[:, 0]) * (anchors[:, 3] - anchors[:, 1])
    union = area_b[:, None] + area_a[None, :] - inter
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(inter > 0, inter / union, np.float32(0)).astype(np.float32)


def last_argmax(values: np.ndarray, axis: int) -> np.ndarray:
    """Index of the last maximum along `axis` (DALI's tie rule)."""
    flipped = np.flip(values, axis=axis)
    return values.shape[axis] - 1 - np.argmax(flipped, axis=axis)


def match(boxes: np.ndarray, anchors: np.ndarray, criteria: float) -> np.ndarray:
    """`(M,)` index of each anchor's box, -1 where unmatched."""
    m = len(anchors)
    matched = np.full(m, -1, np.int64)
    if len(boxes) == 0:
        return matched
    iou = iou_matrix(boxes, anchors)
    best_box = last_argmax(iou, axis=0)
    best_iou = iou[best_box, np.arange(m)]
    matched = np.where(best_iou > np.float32(criteria), best_box, -1)
    forced = np.full(m, -1, np.int64)
    np.maximum.at(forced, last_argmax(iou, axis=1), np.arange(len(boxes)))  # later box wins
    return np.where(forced >= 0, forced, matched)


def centre_form(ltrb: np.ndarray) -> np.ndarray:
    """`[l, t, r, b]` -> `[cx, cy, w, h]` in float32."""
    return np.concatenate([(ltrb[:, :2] + ltrb[:, 2:]) * _HALF, ltrb[:, 2:] - ltrb[:, :2]], 1)


def _iou_columns(box: list[np.ndarray], anc: list[np.ndarray]) -> np.ndarray:
    """`iou_matrix` of boxes `[..., K]` and anchors `[M]` given as coordinate columns
    `[l, t, r, b]`: the same float32 steps, with inner loops over the anchors instead of over
    pairs of coordinates (NumPy runs a length-2 inner loop ~50x slower per element)."""
    b = [c[..., None] for c in box]
    w = np.maximum(np.minimum(b[2], anc[2]) - np.maximum(b[0], anc[0]), np.float32(0))
    h = np.maximum(np.minimum(b[3], anc[3]) - np.maximum(b[1], anc[1]), np.float32(0))
    inter = w * h
    area_b = (box[2] - box[0]) * (box[3] - box[1])
    area_a = (anc[2] - anc[0]) * (anc[3] - anc[1])
    union = area_b[..., None] + area_a - inter
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(inter > 0, inter / union, np.float32(0)).astype(np.float32)


def match_batch(box: list[np.ndarray], counts: np.ndarray, anc: list[np.ndarray],
                criteria: float) -> np.ndarray:  # fmt: skip
    """`match` of every sample at once: box columns `[N, K]` padded after each sample's
    `counts[i]` boxes, anchor columns `[M]`; `[N, M]` box index per anchor, -1 where
    unmatched. Padded boxes get IoU -1, below every real IoU and every criteria, so they are
    never anyone's best box."""
    n, k, m = box[0].shape[0], box[0].shape[1], len(anc[0])
    if k == 0:
        return np.full((n, m), -1, np.int64)
    iou = _iou_columns(box, anc)  # [N, K, M]
    real = np.arange(k)[None, :] < counts[:, None]  # [N, K]
    iou[~real] = -1
    best_box = last_argmax(iou, axis=1)  # [N, M]
    best_iou = np.take_along_axis(iou, best_box[:, None, :], axis=1)[:, 0]
    matched = np.where(best_iou > np.float32(criteria), best_box, -1)
    forced = np.full(n * m, -1, np.int64)
    sample, which = np.nonzero(real)  # boxes in order within each sample: later box wins
    np.maximum.at(forced, sample * m + last_argmax(iou[sample, which], axis=1), which)
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
    and `centre_form` for one sample alone."""
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
    idx = match_batch(list(padded), counts, list(anchors), call.criteria)
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
