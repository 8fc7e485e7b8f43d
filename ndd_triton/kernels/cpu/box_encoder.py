"""box_encoder on the CPU: one sample as a (K, M) IoU matrix, argmaxes and a scatter.

The rules (ties to the later box/anchor, forced matches of later boxes override, strict
`> criteria`) are DALI 2.4's, found by black-box runs; see ops/box_encoder.py.
"""

from __future__ import annotations

import numpy as np

from ndd_triton.kernels import register
from ndd_triton.ops import box_encoder
from ndd_triton.ops._bbox import check_box_values
from ndd_triton.ops.schema import SampleArgs

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


@register(box_encoder.schema, "cpu")
def box_encoder_cpu(out: tuple[np.ndarray, np.ndarray], boxes: np.ndarray, labels: np.ndarray,
                    arg: SampleArgs) -> None:  # fmt: skip
    """Match, then write boxes (or offsets) and labels of every anchor."""
    encoded, out_labels = out
    boxes = boxes.reshape(-1, 4)
    check_box_values("box_encoder", boxes, arg.index, ends=True, what="input 0 (bboxes)")
    anchors = arg.anchor_boxes
    idx = match(boxes, anchors, arg.criteria)
    hit = idx >= 0
    chosen = boxes[np.maximum(idx, 0)] if len(boxes) else np.zeros_like(anchors)
    out_labels[...] = np.where(hit, labels.reshape(-1)[np.maximum(idx, 0)] if len(boxes) else 0, 0)
    if not arg.offset:
        encoded[...] = centre_form(np.where(hit[:, None], chosen, anchors))
        return
    scale = np.float32(arg.scale)
    box_c = centre_form(chosen * scale)
    anc_c = centre_form(anchors * scale)
    with np.errstate(divide="ignore", invalid="ignore"):
        xy = (box_c[:, :2] - anc_c[:, :2]) / anc_c[:, 2:]
        wh = np.log(box_c[:, 2:] / anc_c[:, 2:])
    res = (np.concatenate([xy, wh], 1) - arg.encode_means) / arg.encode_stds
    encoded[...] = np.where(hit[:, None], res, np.float32(0))
