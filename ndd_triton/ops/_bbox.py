"""Shared checks of the bounding-box and coordinate ops (bb_flip, bbox_paste, box_encoder,
coord_flip, coord_transform, random_bbox_crop).

Box inputs are float32 arrays whose last dimension holds the coordinates of one box (4 in 2-D,
6 in 3-D). DALI asserts on most malformed inputs with a RuntimeError and silently computes
garbage for some (a width of 5 in bb_flip, a boxes/labels count mismatch in box_encoder); here
every such input raises an error that names the op, the input or argument and the sample. The
error classes derive from both the Python-conventional class and DALI's RuntimeError, so code
written against either keeps working (as `arithmetic.BroadcastError` does).
"""

from __future__ import annotations

import numpy as np

from ndd_triton.core.dtype import float32, int32
from ndd_triton.ops.schema import Call, InputMeta


class BoxValueError(ValueError, RuntimeError):
    """Malformed box data or arguments (shape, NaN, inverted box); a RuntimeError, as in DALI."""


class BoxTypeError(TypeError, RuntimeError):
    """A box or label input of the wrong dtype; a RuntimeError too, as DALI raises."""


def check_float_boxes(call: Call, k: int, what: str = "boxes") -> InputMeta:
    """Input `k` must be float32 (DALI: "Bounding box in wrong format")."""
    meta = call.inputs[k]
    if meta.dtype != float32:
        raise call.error(f"input {k} ({what}) must be float32; got {meta.dtype} (Bounding box "
                         "in wrong format)", BoxTypeError)  # fmt: skip
    return meta


def check_box_width(call: Call, k: int, widths: tuple[int, ...], what: str = "boxes",
                    min_ndim: int = 1, max_ndim: int | None = None) -> int:  # fmt: skip
    """The coordinate count of input `k`'s boxes (its last extent, the same for every sample)."""
    meta = call.inputs[k]
    ndim = meta.ndim
    shape_text = "(K, 4)" if widths == (4,) else f"(K, {' or '.join(map(str, widths))})"
    if ndim < min_ndim or (max_ndim is not None and ndim > max_ndim):
        raise call.error(f"input {k} ({what}) must be {shape_text}; got {ndim}-D samples",
                         BoxValueError)  # fmt: skip
    if len(meta.shapes) == 0:
        return widths[0]
    last = meta.shapes[:, -1] if ndim else np.zeros(len(meta.shapes), np.int64)
    # (np.isin and np.unique cost 0.1-4 ms on a batch of equal values in NumPy 2.4's hash
    # path; comparisons cost microseconds)
    bad = np.flatnonzero(~np.logical_or.reduce([last == w for w in widths]))
    if bad.size:
        i = int(bad[0])
        raise call.error(f"input {k} ({what}) sample {i}: expected {shape_text} boxes, one "
                         f"box per row; got shape {tuple(int(v) for v in meta.shapes[i])}",
                         BoxValueError)  # fmt: skip
    if last.min() != last.max():
        raise call.error(f"input {k} ({what}): every sample must have the same number of "
                         f"coordinates per box; got {sorted(set(last.tolist()))}", BoxValueError)
    return int(last[0])


def check_labels(call: Call, boxes: int, labels: int, counts: np.ndarray) -> None:
    """Labels input: int32, one label per box (`(K,)` or `(K, 1)`), `counts` boxes per sample."""
    meta = call.inputs[labels]
    if meta.dtype != int32:
        raise call.error(f"input {labels} (labels) must be int32; got {meta.dtype}", BoxTypeError)
    shapes = meta.shapes
    if meta.ndim not in (1, 2) or (meta.ndim == 2 and len(shapes) and (shapes[:, 1] != 1).any()):
        got = tuple(int(v) for v in shapes[0]) if len(shapes) else ()
        raise call.error(f"input {labels} (labels) must be (K,) or (K, 1), one label per box; "
                         f"got shape {got}", BoxValueError)  # fmt: skip
    have = shapes[:, 0] if meta.ndim else np.ones(len(shapes), np.int64)
    bad = np.flatnonzero(have != counts)
    if bad.size:
        i = int(bad[0])
        raise call.error(f"sample {i}: {int(have[i])} labels (input {labels}) for {int(counts[i])} "
                         f"boxes (input {boxes}); give one label per box", BoxValueError)


def box_counts(meta: InputMeta, width: int) -> np.ndarray:
    """Boxes per sample: all leading extents of a `(..., width)` sample."""
    if meta.ndim == 0 or len(meta.shapes) == 0:
        return np.zeros(len(meta.shapes), np.int64)
    return np.prod(meta.shapes, axis=1, dtype=np.int64) // max(width, 1)


def check_box_values(op: str, boxes: np.ndarray, sample: int, ends: bool, what: str = "input 0"
                     ) -> None:  # fmt: skip
    """NaN coordinates and inverted boxes (end < start; a negative extent in size form).

    `boxes` is `(K, 2 * ndim)` in start-end (`ends`) or start-size form, starts first. A CPU
    kernel check: DALI propagates NaN and flips inverted boxes silently.
    """
    if boxes.size == 0:
        return
    nan = np.isnan(boxes).any(axis=-1)
    if nan.any():
        j = int(np.flatnonzero(nan)[0])
        raise BoxValueError(f"{op}: {what} sample {sample} box {j}: NaN coordinate in "
                            f"{boxes[j].tolist()}")  # fmt: skip
    half = boxes.shape[-1] // 2
    extent = boxes[:, half:] - boxes[:, :half] if ends else boxes[:, half:]
    bad = (extent < 0).any(axis=-1)
    if bad.any():
        j = int(np.flatnonzero(bad)[0])
        form = "end < start" if ends else "negative width or height"
        raise BoxValueError(f"{op}: {what} sample {sample} box {j}: inverted box ({form}) "
                            f"{boxes[j].tolist()}")  # fmt: skip


def check_batch_box_values(op: str, boxes: list[np.ndarray], ends: bool, what: str = "input 0"
                           ) -> None:  # fmt: skip
    """`check_box_values` of every sample's `(K, 2 * ndim)` boxes, from one pass over all of
    them (per sample, NumPy's call overhead costs more than the check); a failure is reported
    by the per-sample check, which names the first bad sample and box."""
    if not boxes:
        return
    flat = np.concatenate(boxes)
    if flat.size == 0:
        return
    half = flat.shape[-1] // 2
    with np.errstate(invalid="ignore"):
        extent = flat[:, half:] - flat[:, :half] if ends else flat[:, half:]
        bad = np.isnan(flat).any() or (extent < 0).any()
    if bad:
        for i, b in enumerate(boxes):
            check_box_values(op, b, i, ends, what)
