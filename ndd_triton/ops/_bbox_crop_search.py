"""The window search of `random_bbox_crop`, one sample at a time, vectorised over attempts.

DALI 2.4's rules, established by black-box runs of its CPU operator (tools, not its source):

* The search runs in blocks of `num_attempts` window draws. Each block first draws one option
  uniformly among the thresholds, plus "no crop" when `allow_no_crop` (so with one threshold,
  half of the samples are not cropped). "No crop" ends the search: the full image, every box.
* A window draw: one size per dimension uniform in `scaling`, rejected (the draw still counts)
  unless every pair ratio (x/y, and x/z, y/z in 3-D) lies in its `aspect_ratio` range. A
  degenerate range (min == max) is not rejected but enforced: the pair's larger drawn size
  becomes the longer side and the other follows the ratio (2-D: w = h = max(u0, u1) for [1, 1]).
  The anchor is uniform in `[0, 1 - size]` (`[1 - size, 0]` for sizes above 1). With
  `crop_shape` the size is fixed and the anchor an integer pixel uniform in
  `[min(0, in - crop), max(0, in - crop)]`.
* The window is valid when its metric reaches the threshold (`>=`) and at least one box
  survives pruning (when there are boxes). The metric is the IoU of box and window (`iou`) or
  the fraction of the box inside the window (`overlap`), over *all* input boxes: the minimum
  with `all_boxes_above_threshold`, else the maximum.
* Pruning keeps the boxes whose centre lies in the window (`start <= centre < end`), or, with
  `bbox_prune_threshold` p, those that intersect it with at least p of their area inside.
* After `total_num_attempts` draws (-1: no limit) the best window so far is used (highest
  metric, the first on ties; a zero window with metric -1 when no draw passed the aspect check)
  and a warning says so unless `quiet`.

Randomness: sample i reads its own counter range of the call's Philox stream (`rng.reserve`),
attempt t at draws `[t * stride, (t + 1) * stride)`, so results do not depend on the other
samples, the thread count or the backend, and the RNG state after the call is fixed.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ndd_triton.random._philox import batch_draws, draws_u32, to_unit_float64

SPACE = 1 << 32  # draws reserved per sample (an attempt uses 2 * (1 + 2 * ndim))
CHUNK = 32  # attempts evaluated per vectorised step
# attempts of every sample scored together first (`search_first_chunk`; the rest run `search`).
# Only a cost trade-off (draws are per attempt). With SSD's options ~17% of the attempts pass:
# 8 left 21% of the samples to the per-sample search, 16 left 5%, 32 left 0.2%, all at the same
# cost per batch of 32 (4.8-5.0 ms), so 32 stays
FIRST_CHUNK = 32
ATTEMPT_CAP = 1 << 20  # total_num_attempts=-1: give up (RuntimeError) instead of looping forever
_DRAW_SPACE = 1 << 64


@dataclass(frozen=True)
class SearchParams:
    """Call-wide parameters (ranges as float32 like DALI's arguments)."""

    ndim: int
    thresholds: np.ndarray  # [T] float32
    overlap: bool  # threshold_type == "overlap"
    all_boxes: bool
    scaling: tuple[float, float]
    aspect: np.ndarray  # [pairs, 2]: (x/y) in 2-D; (x/y, x/z, y/z) in 3-D
    num_attempts: int
    total_attempts: int  # -1: unlimited
    allow_no_crop: bool
    prune: float | None


@dataclass
class Window:
    """The search result of one sample."""

    start: np.ndarray  # [ndim] float32, relative
    size: np.ndarray  # [ndim] float32 (end - start), relative
    keep: np.ndarray  # indices of the kept boxes
    no_crop: bool
    anchor_px: np.ndarray | None = None  # crop_shape mode: integer pixels
    exhausted: int = 0  # attempts made when no valid window was found (0: found one)
    best_metric: float = -1.0


_PAIRS = {2: ((0, 1),), 3: ((0, 1), (0, 2), (1, 2))}


def _uniforms(key: int, base: int, first: int, count: int, stride: int,
              raw: np.ndarray | None = None) -> np.ndarray:  # fmt: skip
    """`[count, stride]` float64 uniforms of attempts `first ..` (two uint32 per value; `raw`:
    those draws when the caller already made them)."""
    if raw is None or raw.size != 2 * stride * count:  # (the first chunk's draws are fewer)
        raw = draws_u32(key, (base + 2 * stride * first) % _DRAW_SPACE, 2 * stride * count)
    pairs = raw.reshape(count * stride, 2)
    return to_unit_float64(pairs[:, 0], pairs[:, 1]).reshape(count, stride)


def _options(u0: np.ndarray, first: int, n_opts: int, num_attempts: int, carried: int
             ) -> np.ndarray:  # fmt: skip
    """Option index of each attempt: drawn at its block's first attempt, carried after."""
    t = first + np.arange(len(u0))
    starts = t % num_attempts == 0
    drawn = np.minimum((u0 * n_opts).astype(np.int64), n_opts - 1)
    pos = np.where(starts, np.arange(len(u0)), -1)
    last = np.maximum.accumulate(pos)
    return np.where(last >= 0, drawn[np.maximum(last, 0)], carried)


def _sizes(u: np.ndarray, p: SearchParams) -> tuple[np.ndarray, np.ndarray]:
    """Window sizes `[C, ndim]` float32 and whether they pass the aspect-ratio check."""
    lo, hi = np.float32(p.scaling[0]), np.float32(p.scaling[1])
    size = (lo + u.astype(np.float32) * (hi - lo)).astype(np.float32)
    ok = np.ones(len(u), bool)
    pairs = _PAIRS.get(p.ndim, ())
    for (i, j), (amin, amax) in zip(pairs, p.aspect, strict=False):
        if amin == amax:  # fixed ratio: the larger draw becomes the longer side
            longest = np.maximum(size[:, i], size[:, j])
            if amin >= 1:
                size[:, i], size[:, j] = longest, longest / np.float32(amin)
            else:
                size[:, i], size[:, j] = longest * np.float32(amin), longest
    for (i, j), (amin, amax) in zip(pairs, p.aspect, strict=False):
        if amin != amax:
            with np.errstate(divide="ignore", invalid="ignore"):
                ratio = size[:, i] / size[:, j]
            ok &= (ratio >= np.float32(amin)) & (ratio <= np.float32(amax))
    return size, ok


def _overlaps(boxes: np.ndarray, lo: np.ndarray, hi: np.ndarray, ndim: int
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:  # fmt: skip
    """`[C, K]` intersection volume, box volume and window volume (float32)."""
    b_lo, b_hi = boxes[None, :, :ndim], boxes[None, :, ndim:]
    extent = np.maximum(np.minimum(b_hi, hi[:, None]) - np.maximum(b_lo, lo[:, None]), 0)
    with np.errstate(over="ignore"):  # (scaling=[0, 1e30]: inf volumes, a rejected window)
        inter = np.prod(extent, axis=-1, dtype=np.float32)
        box_vol = np.prod(boxes[:, ndim:] - boxes[:, :ndim], axis=-1, dtype=np.float32)[None, :]
        win_vol = np.prod(hi - lo, axis=-1, dtype=np.float32)[:, None]
    return inter, box_vol, win_vol


def _metric(inter: np.ndarray, box_vol: np.ndarray, win_vol: np.ndarray, overlap: bool
            ) -> np.ndarray:  # fmt: skip
    with np.errstate(divide="ignore", invalid="ignore"):
        if overlap:
            return np.where(inter > 0, inter / box_vol, np.float32(0))
        return np.where(inter > 0, inter / (box_vol + win_vol - inter), np.float32(0))


def _kept(boxes: np.ndarray, lo: np.ndarray, hi: np.ndarray, inter: np.ndarray,
          box_vol: np.ndarray, p: SearchParams) -> np.ndarray:  # fmt: skip
    """`[C, K]` boxes that survive pruning for each window."""
    if p.prune is None:
        centre = (boxes[:, :p.ndim] + boxes[:, p.ndim:]) * np.float32(0.5)
        inside = (centre[None] >= lo[:, None]) & (centre[None] < hi[:, None])
        return inside.all(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        frac = np.where(inter > 0, inter / box_vol, np.float32(0))
    return (inter > 0) & (frac >= np.float32(p.prune))


def first_chunk_draws(p: SearchParams, key: int, bases: list[int]) -> list[np.ndarray]:
    """The raw draws of every sample's first chunk of attempts, from one Philox pass (per
    sample, the Philox rounds cost more NumPy calls than the rest of a typical search)."""
    stride = 1 + 2 * p.ndim
    limit = p.total_attempts if p.total_attempts > 0 else ATTEMPT_CAP
    count = 2 * stride * min(FIRST_CHUNK, limit)
    return batch_draws(key, [b % _DRAW_SPACE for b in bases], [count] * len(bases))


def search(boxes: np.ndarray, p: SearchParams, key: int, base: int,
           crop: tuple[np.ndarray, np.ndarray] | None = None,
           first_raw: np.ndarray | None = None) -> Window:  # fmt: skip
    """Find the window of one sample.

    `boxes`: `[K, 2 * ndim]` float32, starts then ends, relative. `crop`: `(crop_shape,
    input_shape)` in pixels (x, y[, z] order) for fixed-size windows. `first_raw`: the draws
    of the first chunk (`first_chunk_draws`), if already made.
    """
    d = p.ndim
    stride = 1 + 2 * d
    n_thr = len(p.thresholds)
    n_opts = n_thr + (1 if p.allow_no_crop and crop is None else 0)
    limit = p.total_attempts if p.total_attempts > 0 else ATTEMPT_CAP
    best = Window(np.zeros(d, np.float32), np.zeros(d, np.float32), np.zeros(0, np.int64),
                  False, np.zeros(d, np.int64) if crop is not None else None)  # fmt: skip
    best_metric = np.float32(-1)
    carried = 0
    first = 0
    while first < limit:
        count = min(CHUNK, limit - first)
        u = _uniforms(key, base, first, count, stride, first_raw if first == 0 else None)
        option = _options(u[:, 0], first, n_opts, p.num_attempts, carried)
        carried = int(option[-1])
        if crop is None:
            size, ok = _sizes(u[:, 1:1 + d], p)
            start = (u[:, 1 + d:].astype(np.float32) * (np.float32(1) - size)).astype(np.float32)
            anchor_px = None
        else:
            crop_px, in_px = crop
            lo_px, hi_px = np.minimum(0, in_px - crop_px), np.maximum(0, in_px - crop_px)
            anchor_px = np.minimum(lo_px + np.floor(u[:, 1 + d:] * (hi_px - lo_px + 1)), hi_px)
            anchor_px = anchor_px.astype(np.int64)
            start = (anchor_px / in_px).astype(np.float32)
            size = np.broadcast_to((crop_px / in_px).astype(np.float32), start.shape)
            ok = np.ones(count, bool)
        end = (start + size).astype(np.float32)
        no_crop = option >= n_thr
        if len(boxes):
            inter, box_vol, win_vol = _overlaps(boxes, start, end, d)
            metric = _metric(inter, box_vol, win_vol, p.overlap)
            agg = metric.min(axis=1) if p.all_boxes else metric.max(axis=1)
            kept = _kept(boxes, start, end, inter, box_vol, p)
            any_kept = kept.any(axis=1)
        else:
            agg = np.full(count, np.inf, np.float32)
            kept = np.zeros((count, 0), bool)
            any_kept = np.ones(count, bool)
        threshold = p.thresholds[np.minimum(option, n_thr - 1)]
        valid = no_crop | (ok & (agg >= threshold) & any_kept)
        hits = np.flatnonzero(valid)
        # best candidate among the aspect-valid crop draws before the first valid one
        upto = hits[0] if hits.size else count
        scored = np.where(ok[:upto] & ~no_crop[:upto], agg[:upto], -np.inf)
        if upto and scored.max() > best_metric:
            j = int(np.argmax(scored))
            best_metric = np.float32(scored[j])
            best = Window(start[j], end[j] - start[j], np.flatnonzero(kept[j]), False,
                          None if anchor_px is None else anchor_px[j])  # fmt: skip
        if hits.size:
            j = int(hits[0])
            if no_crop[j]:
                return Window(np.zeros(d, np.float32), np.ones(d, np.float32),
                              np.arange(len(boxes)), True)  # fmt: skip
            return Window(start[j], end[j] - start[j], np.flatnonzero(kept[j]), False,
                          None if anchor_px is None else anchor_px[j])  # fmt: skip
        first += count
    if p.total_attempts <= 0:
        raise RuntimeError(f"random_bbox_crop: no valid cropping window after {limit} attempts "
                           "(total_num_attempts=-1 would loop forever; DALI does); the "
                           "thresholds, scaling and aspect_ratio may be impossible to meet "
                           "together: set total_num_attempts to use the best window instead")
    best.exhausted = limit
    best.best_metric = float(best_metric)
    return best


def search_first_chunk(boxes: list[np.ndarray], p: SearchParams, key: int,
                       raws: list[np.ndarray]) -> list[Window | None]:  # fmt: skip
    """`search` of every sample's first chunk of attempts at once (free windows, no
    `crop_shape`): the Window of each sample that finds one there, None for those that do not
    (the caller runs `search` for them). The same element-wise float32 steps as `search` on an
    extra leading sample axis (boxes padded to the longest list, padding masked out of the
    min/max and the pruning), so the windows are identical."""
    n, d = len(boxes), p.ndim
    if n == 0:
        return []
    stride = 1 + 2 * d
    n_thr = len(p.thresholds)
    n_opts = n_thr + (1 if p.allow_no_crop else 0)
    count = raws[0].size // (2 * stride)
    raw = np.stack(raws).reshape(n * count * stride, 2)
    u = to_unit_float64(raw[:, 0], raw[:, 1]).reshape(n, count, stride)
    # option: drawn at each block's first attempt, carried after (attempt 0 starts a block)
    t = np.arange(count)
    last = np.maximum.accumulate(np.where(t % p.num_attempts == 0, t, -1))
    option = np.minimum((u[:, :, 0] * n_opts).astype(np.int64), n_opts - 1)[:, last]
    size, ok = _sizes(u[:, :, 1:1 + d].reshape(n * count, d), p)
    size, ok = size.reshape(n, count, d), ok.reshape(n, count)
    start = (u[:, :, 1 + d:].astype(np.float32) * (np.float32(1) - size)).astype(np.float32)
    end = (start + size).astype(np.float32)
    no_crop = option >= n_thr
    kmax = max(len(b) for b in boxes)
    counts = np.array([len(b) for b in boxes])
    real = np.arange(kmax)[None, :] < counts[:, None]  # [N, K]
    padded = np.zeros((n, kmax, 2 * d), np.float32)
    padded[real] = np.concatenate(boxes)
    # per coordinate ([N, C, K] arrays): NumPy loops over a trailing axis of 2-3 coordinates
    # are slow; the products are taken in np.prod's order (first to last)
    inter = box_vol = win_vol = centre_in = None
    for a in range(d):
        b_lo, b_hi = padded[:, None, :, a], padded[:, None, :, d + a]
        lo, hi = start[:, :, a, None], end[:, :, a, None]
        extent = np.maximum(np.minimum(b_hi, hi) - np.maximum(b_lo, lo), np.float32(0))
        side = padded[:, :, d + a] - padded[:, :, a]
        span = end[:, :, a] - start[:, :, a]
        inter = extent if inter is None else inter * extent
        box_vol = side if box_vol is None else box_vol * side
        win_vol = span if win_vol is None else win_vol * span
        if p.prune is None:
            centre = (padded[:, None, :, a] + padded[:, None, :, d + a]) * np.float32(0.5)
            inside = (centre >= lo) & (centre < hi)
            centre_in = inside if centre_in is None else centre_in & inside
    box_vol, win_vol = box_vol[:, None], win_vol[:, :, None]
    metric = _metric(inter, box_vol, win_vol, p.overlap)
    if p.prune is None:
        kept = centre_in
    else:
        with np.errstate(divide="ignore", invalid="ignore"):
            frac = np.where(inter > 0, inter / box_vol, np.float32(0))
        kept = (inter > 0) & (frac >= np.float32(p.prune))
    kept &= real[:, None]
    pad = np.float32(np.inf if p.all_boxes else -np.inf)
    metric = np.where(real[:, None], metric, pad)
    agg = metric.min(axis=2, initial=pad) if p.all_boxes else metric.max(axis=2, initial=pad)
    agg = np.where((counts > 0)[:, None], agg, np.float32(np.inf))
    any_kept = kept.any(axis=2) | (counts == 0)[:, None]
    threshold = p.thresholds[np.minimum(option, n_thr - 1)]
    valid = no_crop | (ok & (agg >= threshold) & any_kept)
    first = np.argmax(valid, axis=1)
    found = valid[np.arange(n), first]
    out: list[Window | None] = []
    for i in range(n):
        if not found[i]:
            out.append(None)
            continue
        j = int(first[i])
        if no_crop[i, j]:
            out.append(Window(np.zeros(d, np.float32), np.ones(d, np.float32),
                              np.arange(counts[i]), True))  # fmt: skip
        else:
            out.append(Window(start[i, j], end[i, j] - start[i, j],
                              np.flatnonzero(kept[i, j, :counts[i]]), False))  # fmt: skip
    return out
