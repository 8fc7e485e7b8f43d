"""random_bbox_crop: a random crop window that respects the boxes, and the boxes in it (DALI
`random_bbox_crop`).

Input: float32 boxes `(K, 4)` (2-D) or `(K, 6)` (3-D), relative coordinates in `[0, 1]`, in
`bbox_layout` (default `xyXY` / `xyzXYZ`: starts then ends; `xyWH` / `xyzWHD`: starts then
sizes; any permutation of either), and optionally int32 labels `(K,)` or `(K, 1)`.
Outputs, in order: the window's `anchor` and `shape` (float32, x y [z] order; relative, or pixels
with `crop_shape`), the kept boxes re-expressed relative to the window and clipped to
`[0, 1]` (in `bbox_layout`), their labels (when labels were given) and their indices (int32, with
`output_bbox_indices`). The search (ops/_bbox_crop_search.py) runs in infer on the host values
of the boxes, drawing from `rng` (or the thread's default RNG); the kernels only write the
results. DALI runs it on the CPU only; here `device="gpu"` (or GPU inputs) gives GPU outputs.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ndd_triton.core.dtype import float32, int32
from ndd_triton.ops._bbox import (
    BoxValueError,
    box_counts,
    check_box_values,
    check_box_width,
    check_float_boxes,
    check_labels,
)
from ndd_triton.ops._bbox_crop_search import (
    SPACE,
    SearchParams,
    Window,
    first_chunk_draws,
    search,
    search_first_chunk,
)
from ndd_triton.ops.schema import Arg, Call, Input, OpSchema, OutputSpec

_START_END = {2: "xyXY", 3: "xyzXYZ"}
_START_SIZE = {2: "xyWH", 3: "xyzWHD"}


def _bad(call: Call, message: str) -> Exception:
    return call.error(message, BoxValueError)


def _range(call: Call, name: str, values: list[float]) -> tuple[float, float]:
    lo, hi = values
    if not 0 <= lo <= hi:
        raise _bad(call, f"argument '{name}' range must be non-negative and min <= max; got "
                         f"[{lo}, {hi}]")  # fmt: skip
    return lo, hi


def _layout(call: Call, ndim: int) -> str:
    layout = call.bbox_layout
    if call.ltrb is not None:
        if layout is not None:
            raise _bad(call, "give 'bbox_layout' or the deprecated 'ltrb', not both")
        warnings.warn("random_bbox_crop: 'ltrb' is deprecated; use bbox_layout="
                      f"'{_START_END[ndim]}' (ltrb=True) or '{_START_SIZE[ndim]}' (ltrb=False)",
                      DeprecationWarning, stacklevel=2)  # fmt: skip
        layout = _START_END[ndim] if call.ltrb else _START_SIZE[ndim]
    layout = layout or _START_END[ndim]
    if sorted(layout) not in (sorted(_START_END[ndim]), sorted(_START_SIZE[ndim])):
        raise _bad(call, f"argument 'bbox_layout' should be a permutation of "
                         f"'{_START_END[ndim]}' or '{_START_SIZE[ndim]}' for boxes with "
                         f"{2 * ndim} coordinates; got '{layout}'")  # fmt: skip
    return layout


def _params(call: Call, ndim: int) -> SearchParams:
    thresholds = np.asarray(call.thresholds, np.float32).reshape(-1)
    if thresholds.size == 0 or ((thresholds < 0) | (thresholds > 1) | np.isnan(thresholds)).any():
        raise _bad(call, f"argument 'thresholds': values must be within [0, 1] (at least "
                         f"one); got {thresholds.tolist()}")  # fmt: skip
    if call.threshold_type not in ("iou", "overlap"):
        raise _bad(call, f"argument 'threshold_type' must be 'iou' or 'overlap'; got "
                         f"{call.threshold_type!r}")  # fmt: skip
    if len(call.scaling) != 2:
        raise _bad(call, f"argument 'scaling' must be a range [min, max]; got "
                         f"{len(call.scaling)} values")  # fmt: skip
    scaling = _range(call, "scaling", call.scaling)
    ar = list(call.aspect_ratio)
    pairs = 1 if ndim == 2 else 3
    if len(ar) == 2:
        ar = ar * pairs
    if len(ar) != 2 * pairs:
        raise _bad(call, f"argument 'aspect_ratio' should have 2 elements, or 6 for 3-D boxes "
                         f"(x/y, x/z, y/z ranges); got {len(call.aspect_ratio)}")  # fmt: skip
    aspect = np.array([_range(call, "aspect_ratio", ar[2 * k:2 * k + 2]) for k in range(pairs)])
    if call.num_attempts < 1:
        raise _bad(call, f"argument 'num_attempts' must be at least 1; got {call.num_attempts}")
    if call.total_num_attempts == 0 or call.total_num_attempts < -1:
        raise _bad(call, f"argument 'total_num_attempts' must be positive, or -1 for no "
                         f"limit; got {call.total_num_attempts}")  # fmt: skip
    prune = call.bbox_prune_threshold
    if prune is not None and not 0 <= prune <= 1:
        raise _bad(call, f"argument 'bbox_prune_threshold' must be in [0, 1]; got {prune}")
    return SearchParams(ndim, thresholds, call.threshold_type == "overlap",
                        bool(call.all_boxes_above_threshold), scaling, aspect.astype(np.float32),
                        int(call.num_attempts), int(call.total_num_attempts),
                        bool(call.allow_no_crop), None if prune is None else float(prune))


def _crop_shapes(call: Call, ndim: int) -> tuple[np.ndarray, np.ndarray] | None:
    """Per-sample `(crop, input)` pixel sizes in x y [z] order, or None without crop_shape."""
    if call.crop_shape is None:
        return None
    if call.input_shape is None:
        raise _bad(call, "argument 'input_shape' must be given with 'crop_shape'")
    for name in ("scaling", "aspect_ratio"):
        if name in call.given:
            raise _bad(call, f"argument '{name}' is incompatible with an explicit 'crop_shape'")
    if "allow_no_crop" in call.given and call.allow_no_crop:
        raise _bad(call, "argument 'allow_no_crop' is incompatible with an explicit 'crop_shape'")
    order = call.shape_layout or "WHD"[:ndim]
    if sorted(order) != sorted("WHD"[:ndim]):
        raise _bad(call, f"argument 'shape_layout' should be a permutation of '{'WHD'[:ndim]}'; "
                         f"got '{order}'")  # fmt: skip
    perm = [order.index(c) for c in "WHD"[:ndim]]
    result = []
    for name in ("crop_shape", "input_shape"):
        rows = []
        for i, v in enumerate(call.values[name]):
            v = np.asarray(v, np.int64).reshape(-1)
            if v.size != ndim:
                raise _bad(call, f"argument '{name}' sample {i}: expected {ndim} values (one per "
                                 f"dimension, in shape_layout '{order}'); got {v.size}")
            rows.append(v[perm])
        result.append(np.array(rows, np.int64).reshape(-1, ndim))
    if (result[0] <= 0).any() or (result[1] <= 0).any():
        raise _bad(call, "arguments 'crop_shape' and 'input_shape' must be positive")
    return result[0], result[1]


def _canonical(boxes: np.ndarray, layout: str, ndim: int) -> np.ndarray:
    """`[K, 2 * ndim]` starts then ends in x y [z] order."""
    starts = boxes[:, [layout.index(c) for c in "xyz"[:ndim]]]
    if "X" in layout:
        return np.concatenate([starts, boxes[:, [layout.index(c) for c in "XYZ"[:ndim]]]], 1)
    return np.concatenate([starts, starts + boxes[:, [layout.index(c) for c in "WHD"[:ndim]]]], 1)


def _to_layout(canon: np.ndarray, layout: str, ndim: int) -> np.ndarray:
    out = np.empty_like(canon)
    starts, ends = canon[:, :ndim], canon[:, ndim:]
    for k, c in enumerate("xyz"[:ndim]):
        out[:, layout.index(c)] = starts[:, k]
    second = ends if "X" in layout else ends - starts
    for k, c in enumerate(("XYZ" if "X" in layout else "WHD")[:ndim]):
        out[:, layout.index(c)] = second[:, k]
    return out


def _sample_boxes(call: Call, i: int, raw: np.ndarray, layout: str, ndim: int) -> np.ndarray:
    canon = _canonical(np.asarray(raw, np.float32).reshape(-1, 2 * ndim), layout, ndim)
    check_box_values("random_bbox_crop", canon, i, ends=True)
    out = np.flatnonzero((canon[:, :ndim] < 0).any(1) | (canon[:, ndim:] > 1).any(1))
    if out.size:
        j = int(out[0])
        raise _bad(call, f"input 0 sample {i} box {j}: {raw.reshape(-1, 2 * ndim)[j].tolist()} "
                         "is out of bounds: relative coordinates must lie in [0, 1]")
    return canon


def _all_sample_boxes(call: Call, values: list[np.ndarray], layout: str, ndim: int
                      ) -> list[np.ndarray]:  # fmt: skip
    """`_sample_boxes` of every sample, from one pass over all boxes of the batch (per sample,
    NumPy's call overhead costs more than the work); the checks fail over to the per-sample
    path, which names the first bad sample and box."""
    raws = [np.asarray(v, np.float32).reshape(-1, 2 * ndim) for v in values]
    if not raws:
        return []
    canon = _canonical(np.concatenate(raws), layout, ndim)
    starts, ends = canon[:, :ndim], canon[:, ndim:]
    with np.errstate(invalid="ignore"):
        bad = np.isnan(canon).any() or (ends < starts).any() or (starts < 0).any() or \
            (ends > 1).any()  # fmt: skip
    if bad:
        return [_sample_boxes(call, i, v, layout, ndim) for i, v in enumerate(values)]
    return np.split(canon, np.cumsum([len(r) for r in raws[:-1]]))


def _result_boxes(window: Window, raw: np.ndarray, canon: np.ndarray, layout: str, ndim: int
                  ) -> np.ndarray:  # fmt: skip
    if window.no_crop:
        return np.asarray(raw, np.float32).reshape(-1, 2 * ndim).copy()
    kept = canon[window.keep]
    start, size = window.start, window.size
    rel = np.concatenate([(kept[:, :ndim] - start) / size, (kept[:, ndim:] - start) / size], 1)
    return _to_layout(np.clip(rel, 0, 1).astype(np.float32), layout, ndim)


def _infer(call: Call) -> list[OutputSpec]:
    from ndd_triton.random import get_default_rng

    meta = check_float_boxes(call, 0)
    width = check_box_width(call, 0, (4, 6), min_ndim=2, max_ndim=2)
    ndim = width // 2
    counts = box_counts(meta, width)
    labels = call.inputs[1]
    if labels is not None:
        check_labels(call, 0, 1, counts)
    layout = _layout(call, ndim)
    params = _params(call, ndim)
    crops = _crop_shapes(call, ndim)
    if crops is not None:
        warnings.warn("random_bbox_crop: with an explicit crop_shape, allow_no_crop has no "
                      "effect", UserWarning, stacklevel=2)  # fmt: skip
        params = SearchParams(**{**params.__dict__, "allow_no_crop": False})
    n = call.batch_size
    key, bases = (call.rng or get_default_rng()).reserve(np.full(n, SPACE, np.int64))
    assert meta.values is not None
    first_raw = first_chunk_draws(params, key, [int(b) for b in bases])
    canons = _all_sample_boxes(call, meta.values, layout, ndim)
    # the first chunk of attempts of all samples at once (most samples end there)
    found = search_first_chunk(canons, params, key, first_raw) if crops is None else [None] * n
    anchors, shapes, boxes, keeps = [], [], [], []
    for i in range(n):
        raw, canon = meta.values[i], canons[i]
        crop = None if crops is None else (crops[0][i], crops[1][i])
        window = found[i] or search(canon, params, key, int(bases[i]), crop, first_raw[i])
        if window.exhausted and not call.quiet:
            warnings.warn(f"random_bbox_crop: sample {i}: could not find a valid cropping window "
                          f"to satisfy the specified requirements (attempted "
                          f"{window.exhausted} times); using the best cropping window so far "
                          f"(best_metric={window.best_metric:g})", RuntimeWarning, stacklevel=2)
        if crop is not None:  # pixels (every crop_shape draw is a candidate)
            anchor, shape = window.anchor_px, crop[0]
        else:
            anchor, shape = window.start, window.size
        anchors.append(np.asarray(anchor, np.float32))
        shapes.append(np.asarray(shape, np.float32))
        boxes.append(_result_boxes(window, raw, canon, layout, ndim))
        keeps.append(window.keep.astype(np.int32))
    call.derive("crop_anchor", anchors, per_sample=True)
    call.derive("crop_shape_out", shapes, per_sample=True)
    call.derive("crop_boxes", boxes, per_sample=True)
    call.derive("crop_indices", keeps, per_sample=True)
    kept = np.array([len(k) for k in keeps], np.int64).reshape(n, 1)
    specs = [OutputSpec(float32, np.full((n, 1), ndim, np.int64), None),
             OutputSpec(float32, np.full((n, 1), ndim, np.int64), None),
             OutputSpec(float32, np.concatenate([kept, np.full((n, 1), width)], 1), meta.layout)]
    if labels is not None:
        shape = kept if labels.ndim == 1 else np.concatenate([kept, np.ones((n, 1), np.int64)], 1)
        specs.append(OutputSpec(int32, shape, labels.layout))
    if call.output_bbox_indices:
        specs.append(OutputSpec(int32, kept.copy(), None))
    return specs


def _num_outputs(inputs: Any, args: dict[str, Any]) -> int:
    labels = len(inputs) > 1 and inputs[1] is not None
    return 3 + int(labels) + int(bool(args.get("output_bbox_indices")))


schema = OpSchema(
    name="random_bbox_crop",
    doc="Draws a random crop window that satisfies overlap constraints with the boxes, and "
        "returns the window and the boxes (and labels) inside it, relative to the window.",
    inputs=(Input("boxes", host_values=True,
                  doc="float32 boxes (K, 4) or (K, 6), relative, in bbox_layout."),
            Input("labels", optional=True, host_values=True,
                  doc="int32 labels (K,) or (K, 1), one per box.")),
    args=(
        Arg("thresholds", "float", default=(0.0,), vector=True,
            doc="Minimum overlaps to choose from (one is drawn per block of attempts)."),
        Arg("threshold_type", "str", default="iou",
            doc="'iou' (box vs window) or 'overlap' (fraction of the box inside the window)."),
        Arg("aspect_ratio", "float", default=(1.0, 1.0), vector=True,
            doc="Window aspect ratio range (w/h); 3-D: 2 values or 6 (x/y, x/z, y/z)."),
        Arg("scaling", "float", default=(1.0, 1.0), vector=True,
            doc="Range of the window size relative to the image, per dimension."),
        Arg("num_attempts", "int", default=1, doc="Window draws per drawn threshold."),
        Arg("total_num_attempts", "int", default=-1,
            doc="Limit of window draws; then the best window so far is used (-1: no limit; "
                "here an error after 2**20 draws instead of DALI's endless loop)."),
        Arg("allow_no_crop", "bool", default=True,
            doc="'No crop' is one more option next to the thresholds."),
        Arg("all_boxes_above_threshold", "bool", default=True,
            doc="Every box must meet the threshold (False: at least one)."),
        Arg("bbox_layout", "layout",
            doc="Box coordinate order: a permutation of xyXY / xyWH (3-D: xyzXYZ / xyzWHD)."),
        Arg("ltrb", "bool", doc="Deprecated: True = 'xyXY', False = 'xyWH'."),
        Arg("crop_shape", "int", per_sample=True, vector=True,
            doc="Fixed window size in pixels (needs input_shape; excludes scaling and "
                "aspect_ratio); anchor and shape are then returned in pixels."),
        Arg("input_shape", "int", per_sample=True, vector=True,
            doc="Image size in pixels for crop_shape."),
        Arg("shape_layout", "layout", doc="Order of crop_shape/input_shape (default WH / WHD)."),
        Arg("bbox_prune_threshold", "float",
            doc="Keep boxes with at least this fraction inside the window; absent: keep the "
                "boxes whose centre is inside."),
        Arg("output_bbox_indices", "bool", default=False,
            doc="Also return the indices of the kept boxes."),
        Arg("quiet", "bool", default=False, doc="Silence the 'no valid window' warning."),
        Arg("rng", "rng", doc="Random generator (default: the thread's)."),
    ),
    infer=_infer,
    num_outputs=_num_outputs,
    random=True,
)  # fmt: skip
