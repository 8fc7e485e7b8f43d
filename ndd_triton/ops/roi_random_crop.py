"""roi_random_crop: random crop window starts that keep a region of interest (DALI
`roi_random_crop`).

Per dimension, the start range keeps as much of the ROI as possible: a window at least as
large as the ROI contains it (`[roi_end - crop, roi_start]`), a smaller one lies inside it
(`[roi_start, roi_end - crop]`). With bounds (`in_shape` or the positional input's shape) the
range is intersected with `[0, in_shape - crop]` (clamped into it when they do not overlap).
The start is drawn uniformly among the integers of the range, in infer, from `rng` or the
thread's default RNG. Output: int64, one start per dimension. CPU only, as in DALI.
"""

from __future__ import annotations

import numpy as np

from ndd_triton.core.dtype import int64
from ndd_triton.ops.schema import REQUIRED, Arg, Call, Input, OpSchema, OutputSpec


def _vector(call: Call, name: str, i: int, ndim: int | None) -> np.ndarray:
    v = np.asarray(call.values[name][i], np.int64).reshape(-1)
    if ndim is not None and v.size != ndim:
        raise call.error(
            f"argument '{name}' sample {i}: expected {ndim} values (one per "
            f"dimension, like crop_shape); got {v.size}"
        )
    return v


def _bounds(call: Call, i: int, ndim: int) -> np.ndarray | None:
    data = call.inputs[0] if call.inputs else None
    if data is not None:
        if call.in_shape is not None:
            raise call.error(
                "argument 'in_shape' cannot be combined with the positional input "
                "(its shape is the bound)"
            )
        shape = data.shapes[i]
        if shape.size != ndim:
            raise call.error(
                f"sample {i}: the input has {shape.size} dimensions but crop_shape has {ndim}"
            )
        return shape
    return None if call.in_shape is None else _vector(call, "in_shape", i, ndim)


def _range(call: Call, i: int) -> tuple[np.ndarray, np.ndarray]:
    crop = _vector(call, "crop_shape", i, None)
    ndim = crop.size
    start = _vector(call, "roi_start", i, ndim)
    if (call.roi_end is None) == (call.roi_shape is None):
        raise call.error("give exactly one of 'roi_end' and 'roi_shape'")
    end = _vector(call, "roi_end", i, ndim) if call.roi_end is not None else \
        start + _vector(call, "roi_shape", i, ndim)  # fmt: skip
    if (end < start).any() or (crop < 0).any():
        raise call.error(
            f"sample {i}: expected roi_start <= roi_end and crop_shape >= 0; got "
            f"roi {start.tolist()}..{end.tolist()}, crop {crop.tolist()}"
        )
    big = crop >= end - start
    lo = np.where(big, end - crop, start)
    hi = np.where(big, start, end - crop)
    bound = _bounds(call, i, ndim)
    if bound is not None:
        if (crop > bound).any():
            raise call.error(
                f"sample {i}: Cropping shape can't be bigger than the input shape: "
                f"crop_shape {crop.tolist()}, input shape {bound.tolist()}",
                RuntimeError,
            )
        lo = np.clip(lo, 0, bound - crop)
        hi = np.clip(hi, 0, bound - crop)
    return lo, hi


def _infer(call: Call) -> OutputSpec:
    from ndd_triton.random import get_default_rng

    n = call.batch_size
    ranges = [_range(call, i) for i in range(n)]
    ndim = ranges[0][0].size if ranges else 0
    if any(lo.size != ndim for lo, _ in ranges):
        raise call.error("argument 'crop_shape' must have the same length for every sample")
    u = (call.rng or get_default_rng()).take_uniform(max(n * ndim, 1), np.float64)
    u = u[: n * ndim].reshape(n, ndim)
    starts = np.zeros((n, ndim), np.int64)
    for i, (lo, hi) in enumerate(ranges):
        starts[i] = np.minimum(lo + np.floor(u[i] * (hi - lo + 1)).astype(np.int64), hi)
    call.derive("roi_crop_start", starts, per_sample=True)
    return OutputSpec(int64, np.full((n, 1), ndim, np.int64), None)


schema = OpSchema(
    name="roi_random_crop",
    doc="Draws random crop window starts that keep as much of a region of interest as possible.",
    inputs=(Input("input", optional=True, doc="Data to crop: its shape bounds the window."),),
    args=(
        Arg("crop_shape", "int", default=REQUIRED, per_sample=True, vector=True,
            doc="Window extents, one per dimension."),
        Arg("roi_start", "int", default=REQUIRED, per_sample=True, vector=True,
            doc="ROI start coordinates."),
        Arg("roi_end", "int", per_sample=True, vector=True, doc="ROI end (exclusive)."),
        Arg("roi_shape", "int", per_sample=True, vector=True, doc="ROI extents (instead of end)."),
        Arg("in_shape", "int", per_sample=True, vector=True,
            doc="Bounds: the window stays inside [0, in_shape)."),
        Arg("rng", "rng", doc="Random generator (default: the thread's)."),
    ),
    infer=_infer,
    random=True,
    devices=("cpu",),
)  # fmt: skip
