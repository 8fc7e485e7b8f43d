"""box_encoder on the GPU: one launch; a program encodes BLOCK_A anchors of one sample.

The program walks the sample's boxes in chunks of BLOCK_K. For each chunk it needs every box's
best anchor over *all* M anchors (the forced matches), so it sweeps the anchor list in tiles of
BLOCK_A ([BLOCK_K, BLOCK_A] IoU blocks, last-maximum argmax), then the IoU block of its own
anchors gives each anchor its best box so far and the boxes that claim it. The forced sweep is
repeated by every anchor tile of a sample (K * M IoUs per program): box counts are small (tens)
and the alternative, a second launch after a grid-wide argmax, costs more than the arithmetic.
IoU uses a correctly rounded division (`div_rn`), like the CPU kernel, so ties at `criteria`
decide the same way on both backends.
"""

from __future__ import annotations

import numpy as np
import triton
import triton.language as tl

from ndd_triton.kernels import register
from ndd_triton.kernels.gpu._tables import GpuRun
from ndd_triton.ops import box_encoder
from ndd_triton.ops.schema import Call

B_OFF: tl.constexpr = tl.constexpr(0)  # element offsets of the boxes, labels, encoded, out labels
L_OFF: tl.constexpr = tl.constexpr(1)
E_OFF: tl.constexpr = tl.constexpr(2)
O_OFF: tl.constexpr = tl.constexpr(3)
COUNT: tl.constexpr = tl.constexpr(4)  # boxes in the sample
NCOL: tl.constexpr = tl.constexpr(5)
ANCHOR_BLOCK = 128
BOX_BLOCK = 16


@triton.jit
def _helper_iou(bl, bt, br, bb, al, at, ar, ab):
    """IoU of broadcast boxes and anchors; 0 where they do not intersect."""
    w = tl.maximum(tl.minimum(br, ar) - tl.maximum(bl, al), 0.0)
    h = tl.maximum(tl.minimum(bb, ab) - tl.maximum(bt, at), 0.0)
    inter = w * h
    union = (br - bl) * (bb - bt) + (ar - al) * (ab - at) - inter
    return tl.where(inter > 0, tl.div_rn(inter, tl.where(inter > 0, union, 1.0)), 0.0)


@triton.jit
def _helper_load_boxes(ptr, idx, mask):
    """Columns l, t, r, b of the boxes `idx` (4 floats each)."""
    return (tl.load(ptr + idx * 4, mask=mask, other=0.0),
            tl.load(ptr + idx * 4 + 1, mask=mask, other=0.0),
            tl.load(ptr + idx * 4 + 2, mask=mask, other=0.0),
            tl.load(ptr + idx * 4 + 3, mask=mask, other=0.0))  # fmt: skip


@triton.jit
def _helper_best_anchors(bl, bt, br, bb, anchors, num_anchors, BLOCK_K: tl.constexpr,
                         BLOCK_A: tl.constexpr):  # fmt: skip
    """Each box's best anchor over all anchors (the last one on ties)."""
    best = tl.full([BLOCK_K], -1.0, tl.float32)
    arg = tl.full([BLOCK_K], -1, tl.int32)
    for a0 in range(0, num_anchors, BLOCK_A):
        idx = (a0 + tl.arange(0, BLOCK_A)).to(tl.int32)  # int32 like the loop-carried arg
        valid = idx < num_anchors
        al, at, ar, ab = _helper_load_boxes(anchors, idx, valid)
        iou = _helper_iou(bl[:, None], bt[:, None], br[:, None], bb[:, None], al[None, :],
                          at[None, :], ar[None, :], ab[None, :])  # fmt: skip
        iou = tl.where(valid[None, :], iou, -1.0)
        top = tl.max(iou, axis=1)
        top_arg = tl.max(tl.where(iou == top[:, None], idx[None, :], -1), axis=1)
        later = top >= best  # later tiles win ties
        best = tl.where(later, top, best)
        arg = tl.where(later, top_arg, arg)
    return arg


@triton.jit
def _helper_log_or_minus_inf(ratio, hit):
    """log(ratio), -inf for a degenerate (zero-size) matched box, as log(0) in DALI."""
    positive = hit & (ratio > 0)
    return tl.where(positive, tl.log(tl.where(positive, ratio, 1.0)), float("-inf"))


@triton.jit
def _box_encoder_kernel(boxes, labels, encoded, out_labels, anchors, samples, tiles_per_sample,
                        consts, num_anchors, criteria, OFFSET: tl.constexpr,
                        BLOCK_K: tl.constexpr, BLOCK_A: tl.constexpr):  # fmt: skip
    """BLOCK_A anchors of one sample: match, then write the encoded rows and labels.

    consts: scale, means[4], stds[4] (float32).
    """
    t = tl.program_id(0)  # every sample has the same anchors: `tiles_per_sample` programs each
    s = t // tiles_per_sample
    a_idx = ((t - s * tiles_per_sample) * BLOCK_A + tl.arange(0, BLOCK_A)).to(tl.int32)
    row = samples + s.to(tl.int64) * NCOL
    box_ptr = boxes + tl.load(row + B_OFF)
    count = tl.load(row + COUNT).to(tl.int32)
    a_mask = a_idx < num_anchors
    al, at, ar, ab = _helper_load_boxes(anchors, a_idx, a_mask)
    best_iou = tl.full([BLOCK_A], -1.0, tl.float32)
    best_box = tl.full([BLOCK_A], -1, tl.int32)
    forced = tl.full([BLOCK_A], -1, tl.int32)
    for k0 in range(0, count, BLOCK_K):
        k_idx = (k0 + tl.arange(0, BLOCK_K)).to(tl.int32)
        k_mask = k_idx < count
        bl, bt, br, bb = _helper_load_boxes(box_ptr, k_idx, k_mask)
        claim = _helper_best_anchors(bl, bt, br, bb, anchors, num_anchors, BLOCK_K, BLOCK_A)
        iou = _helper_iou(bl[:, None], bt[:, None], br[:, None], bb[:, None], al[None, :],
                          at[None, :], ar[None, :], ab[None, :])  # fmt: skip
        iou = tl.where(k_mask[:, None], iou, -1.0)
        top = tl.max(iou, axis=0)
        top_box = tl.max(tl.where(iou == top[None, :], k_idx[:, None], -1), axis=0)
        later = top >= best_iou  # later boxes win ties
        best_iou = tl.where(later, top, best_iou)
        best_box = tl.where(later, top_box, best_box)
        claims = k_mask[:, None] & (claim[:, None] == a_idx[None, :])
        forced = tl.maximum(forced, tl.max(tl.where(claims, k_idx[:, None], -1), axis=0))
    match = tl.where(forced >= 0, forced, tl.where(best_iou > criteria, best_box, -1))
    hit = (match >= 0) & a_mask
    ml, mt, mr, mb = _helper_load_boxes(box_ptr, match, hit)
    label = tl.load(labels + tl.load(row + L_OFF) + match, mask=hit, other=0)
    tl.store(out_labels + tl.load(row + O_OFF) + a_idx, tl.where(hit, label, 0), mask=a_mask)
    out = encoded + tl.load(row + E_OFF) + a_idx * 4
    if OFFSET:
        scale = tl.load(consts)
        ml, mt, mr, mb = ml * scale, mt * scale, mr * scale, mb * scale
        sl, st, sr, sb = al * scale, at * scale, ar * scale, ab * scale
        aw = tl.where(a_mask, sr - sl, 1.0)  # anchors have positive sizes with offset=True
        ah = tl.where(a_mask, sb - st, 1.0)
        v0 = ((ml + mr) * 0.5 - (sl + sr) * 0.5) / aw
        v1 = ((mt + mb) * 0.5 - (st + sb) * 0.5) / ah
        v2 = _helper_log_or_minus_inf((mr - ml) / aw, hit)
        v3 = _helper_log_or_minus_inf((mb - mt) / ah, hit)
        v0 = (v0 - tl.load(consts + 1)) / tl.load(consts + 5)
        v1 = (v1 - tl.load(consts + 2)) / tl.load(consts + 6)
        v2 = (v2 - tl.load(consts + 3)) / tl.load(consts + 7)
        v3 = (v3 - tl.load(consts + 4)) / tl.load(consts + 8)
        tl.store(out, tl.where(hit, v0, 0.0), mask=a_mask)
        tl.store(out + 1, tl.where(hit, v1, 0.0), mask=a_mask)
        tl.store(out + 2, tl.where(hit, v2, 0.0), mask=a_mask)
        tl.store(out + 3, tl.where(hit, v3, 0.0), mask=a_mask)
    else:
        cl, ct = tl.where(hit, ml, al), tl.where(hit, mt, at)
        cr, cb = tl.where(hit, mr, ar), tl.where(hit, mb, ab)
        tl.store(out, (cl + cr) * 0.5, mask=a_mask)
        tl.store(out + 1, (ct + cb) * 0.5, mask=a_mask)
        tl.store(out + 2, cr - cl, mask=a_mask)
        tl.store(out + 3, cb - ct, mask=a_mask)


@register(box_encoder.schema, "gpu", replay=True)
def box_encoder_gpu(run: GpuRun, out: tuple, boxes: object, labels: object, arg: Call) -> None:
    """Sample table, one launch of `cdiv(M, ANCHOR_BLOCK)` programs per sample."""
    encoded, out_labels = out
    anchors = np.ascontiguousarray(arg.anchor_boxes, np.float32)
    m = len(anchors)
    counts = boxes.sizes // 4
    samples = np.stack([boxes.offsets, labels.offsets, encoded.offsets, out_labels.offsets,
                        counts], axis=1).astype(np.int64)  # fmt: skip
    per_sample = -(-m // ANCHOR_BLOCK)
    consts = np.concatenate([[arg.scale], arg.encode_means, arg.encode_stds]).astype(np.float32)
    run.launch(_box_encoder_kernel, (len(counts) * per_sample,), boxes.data, labels.data,
               encoded.data, out_labels.data, anchors, np.ascontiguousarray(samples), per_sample,
               consts, m,
               float(arg.criteria), OFFSET=bool(arg.offset), BLOCK_K=BOX_BLOCK,
               BLOCK_A=ANCHOR_BLOCK)  # fmt: skip
