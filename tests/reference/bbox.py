"""Independent NumPy references of the box and coordinate ops, written from spec/ops.md §5 and
the DALI 2.4 behaviour recorded there (float64, one box / anchor at a time; slow is fine)."""

from __future__ import annotations

import math

import numpy as np


def bb_flip(boxes, horizontal=1, vertical=0, ltrb=False):
    out = []
    for b in np.asarray(boxes, np.float64).reshape(-1, 4):
        x0, y0, a, c = b
        x1, y1 = (a, c) if ltrb else (x0 + a, y0 + c)
        if horizontal:
            x0, x1 = 1 - x1, 1 - x0
        if vertical:
            y0, y1 = 1 - y1, 1 - y0
        out.append([x0, y0, x1, y1] if ltrb else [x0, y0, x1 - x0, y1 - y0])
    return np.array(out, np.float32).reshape(np.shape(boxes))


def bbox_paste(boxes, ratio, paste_x=0.5, paste_y=0.5, ltrb=False):
    out = []
    for x0, y0, a, c in np.asarray(boxes, np.float64).reshape(-1, 4):
        def corner(p, pos):
            return p / ratio + pos * (ratio - 1) / ratio
        first = [corner(x0, paste_x), corner(y0, paste_y)]
        out.append(first + ([corner(a, paste_x), corner(c, paste_y)] if ltrb
                            else [a / ratio, c / ratio]))
    return np.array(out, np.float32).reshape(np.shape(boxes))


def coord_flip(points, flip_x=1, flip_y=0, flip_z=0, center_x=0.5, center_y=0.5, center_z=0.5,
               layout=""):
    points = np.asarray(points, np.float64)
    d = points.shape[1]
    layout = layout or "xyz"[:d]
    flips = {"x": (flip_x, center_x), "y": (flip_y, center_y), "z": (flip_z, center_z)}
    out = points.copy()
    for col in range(d):
        flip, center = flips[layout[col]]
        if flip:
            out[:, col] = 2 * center - points[:, col]
    return out.astype(np.float32)


def coord_transform(v, M=None, T=None, MT=None, dtype=np.float32):
    v = np.asarray(v)
    n = v.shape[-1]
    if MT is not None:
        mt = np.asarray(MT, np.float64).reshape(-1)
        if mt.size == 1:
            mat, off = np.eye(n) * mt[0], np.zeros(n)
        else:
            block = mt.reshape(-1, n + 1)
            mat, off = block[:, :n], block[:, n]
    else:
        mat = np.eye(n) if M is None else np.asarray(M, np.float64).reshape(-1)
        if mat.ndim == 1:
            mat = np.eye(n) * mat[0] if mat.size == 1 else mat.reshape(-1, n)
        off = np.zeros(len(mat)) if T is None else np.broadcast_to(
            np.asarray(T, np.float64).reshape(-1), (len(mat),))
    rows = v.reshape(-1, n).astype(np.float64)
    res = rows @ mat.T + off
    res = res.reshape(*v.shape[:-1], len(mat))
    dtype = np.dtype(dtype)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        res = np.clip(np.sign(res) * np.floor(np.abs(res) + 0.5), info.min, info.max)
    return res.astype(dtype)


def iou(a, b):
    w = max(min(a[2], b[2]) - max(a[0], b[0]), 0)
    h = max(min(a[3], b[3]) - max(a[1], b[1]), 0)
    inter = w * h
    if inter <= 0:
        return 0.0
    return inter / ((a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter)


def box_encoder(boxes, labels, anchors, criteria=0.5, offset=False, scale=1.0,
                means=(0, 0, 0, 0), stds=(1, 1, 1, 1)):
    boxes = np.asarray(boxes, np.float64).reshape(-1, 4)
    labels = np.asarray(labels).reshape(-1)
    anchors = np.asarray(anchors, np.float64).reshape(-1, 4)
    match = [-1] * len(anchors)
    for a, anchor in enumerate(anchors):  # best box above the criteria (ties: later box)
        best, arg = -1.0, -1
        for k, box in enumerate(boxes):
            value = iou(box, anchor)
            if value >= best:
                best, arg = value, k
        if arg >= 0 and best > criteria:
            match[a] = arg
    for k, box in enumerate(boxes):  # every box claims its best anchor (ties: later anchor)
        best, arg = -1.0, -1
        for a, anchor in enumerate(anchors):
            value = iou(box, anchor)
            if value >= best:
                best, arg = value, a
        match[arg] = k
    enc = np.zeros((len(anchors), 4))
    lab = np.zeros(len(anchors), np.int32)
    for a, anchor in enumerate(anchors):
        k = match[a]
        src = boxes[k] if k >= 0 else anchor
        if k >= 0:
            lab[a] = labels[k]
        cx, cy, w, h = (src[0] + src[2]) / 2, (src[1] + src[3]) / 2, src[2] - src[0], src[3] - src[1]
        if not offset:
            enc[a] = [cx, cy, w, h]
        elif k >= 0:
            acx, acy = (anchor[0] + anchor[2]) / 2, (anchor[1] + anchor[3]) / 2
            aw, ah = anchor[2] - anchor[0], anchor[3] - anchor[1]
            raw = [(cx - acx) / aw, (cy - acy) / ah,
                   math.log(w / aw) if w > 0 else -math.inf, math.log(h / ah) if h > 0 else -math.inf]
            enc[a] = [(r - m) / s for r, m, s in zip(raw, means, stds)]
    return enc.astype(np.float32), lab


def crop_boxes(boxes, anchor, shape, layout="xyXY", prune=None):
    """(kept boxes relative to the window, clipped, in `layout`; kept indices)."""
    d = len(anchor)
    anchor, shape = np.asarray(anchor, np.float64), np.asarray(shape, np.float64)
    out, keep = [], []
    for k, raw in enumerate(np.asarray(boxes, np.float64).reshape(-1, 2 * d)):
        start = np.array([raw[layout.index(c)] for c in "xyz"[:d]])
        if "X" in layout:
            end = np.array([raw[layout.index(c)] for c in "XYZ"[:d]])
        else:
            end = start + np.array([raw[layout.index(c)] for c in "WHD"[:d]])
        lo, hi = np.maximum(start, anchor), np.minimum(end, anchor + shape)
        inter = np.prod(np.maximum(hi - lo, 0))
        if prune is None:
            centre = (start + end) / 2
            kept = bool(np.all((centre >= anchor) & (centre < anchor + shape)))
        else:
            kept = inter > 0 and inter / np.prod(end - start) >= prune
        if not kept:
            continue
        s = np.clip((start - anchor) / shape, 0, 1)
        e = np.clip((end - anchor) / shape, 0, 1)
        row = np.zeros(2 * d)
        for i, c in enumerate("xyz"[:d]):
            row[layout.index(c)] = s[i]
        second = e if "X" in layout else e - s
        for i, c in enumerate(("XYZ" if "X" in layout else "WHD")[:d]):
            row[layout.index(c)] = second[i]
        out.append(row)
        keep.append(k)
    return np.array(out, np.float32).reshape(-1, 2 * d), np.array(keep, np.int32)


def window_metric(boxes_ltrb, anchor, shape, overlap=False, all_boxes=True):
    """min (all) / max (any) IoU or overlap of start-end boxes with the window."""
    d = len(anchor)
    values = []
    for b in np.asarray(boxes_ltrb, np.float64).reshape(-1, 2 * d):
        lo, hi = np.maximum(b[:d], anchor), np.minimum(b[d:], np.add(anchor, shape))
        inter = np.prod(np.maximum(hi - lo, 0))
        vol = np.prod(b[d:] - b[:d])
        if inter <= 0:
            values.append(0.0)
        else:
            values.append(inter / vol if overlap else inter / (vol + np.prod(shape) - inter))
    return min(values) if all_boxes else max(values)
