"""Crop, slice and random windows of the ROI decoders, computed in inference.

Each function returns an `[N, 4]` int64 table of `(y0, x0, h, w)` windows over the oriented
image, or raises ValueError/RuntimeError through `call.error` naming the argument and sample.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ndd_triton.ops.schema import Call

_AXIS_LETTERS = {"H": 0, "W": 1}


def _round_half_away(x: np.ndarray) -> np.ndarray:
    return np.asarray(np.copysign(np.floor(np.abs(x) + 0.5), x))


def _per_sample(value: Any, n: int, what: str, call: Call, length: int | None) -> np.ndarray:
    """A per-sample vector argument as `[N, length]` float64 (checks the length)."""
    rows = [np.asarray(value[i], dtype=np.float64).reshape(-1) for i in range(n)]
    for i, row in enumerate(rows):
        if length is not None and row.size != length:
            raise call.error(f"argument '{what}' sample {i}: expected {length} values; got "
                             f"{row.size}")  # fmt: skip
    if rows and any(r.size != rows[0].size for r in rows):
        raise call.error(f"argument '{what}': every sample needs the same number of values; got "
                         f"{sorted({r.size for r in rows})}")  # fmt: skip
    return np.stack(rows) if rows else np.zeros((0, length or 0))


def _invalid_window(call: Call, i: int, y0: int, x0: int, h: int, w: int, dims: Any,
                    what: str = "cropping") -> Exception:  # fmt: skip
    given = ", ".join(f"'{n}'" for n in sorted(call.given) if n in _WINDOW_ARGS)
    source = f" (from {given})" if given else ""
    return call.error(f"sample {i}: The {what} window [{y0}..{y0 + h}, {x0}..{x0 + w}] is not "
                      f"valid for image dimensions [{dims[0]} x {dims[1]}]{source}",
                      RuntimeError)  # fmt: skip


_WINDOW_ARGS = frozenset({"crop", "crop_h", "crop_w", "crop_pos_x", "crop_pos_y", "start",
                          "rel_start", "end", "rel_end", "shape", "rel_shape", "axes",
                          "axis_names"})  # fmt: skip


def crop_windows(call: Call, dims: np.ndarray) -> np.ndarray:
    """`image_crop` windows: extents truncated, start `round_half_away(pos * (in - crop))`."""
    n = call.batch_size
    windows = np.zeros((n, 4), np.int64)
    windows[:, 2:] = dims[:, :2]
    crop_h, crop_w = np.asarray(call.crop_h, np.float64), np.asarray(call.crop_w, np.float64)
    if call.crop is not None:
        if "crop_h" in call.given or "crop_w" in call.given:
            raise call.error("give either 'crop' or 'crop_h'/'crop_w', not both", RuntimeError)
        crop = _per_sample(call.crop, n, "crop", call, None)
        if crop.shape[1] != 2:
            raise call.error(f"argument 'crop' expects (H, W) for images; got {crop.shape[1]} "
                             "values")  # fmt: skip
        crop_h, crop_w = crop[:, 0], crop[:, 1]
    for name in ("crop_pos_x", "crop_pos_y"):
        pos = np.asarray(call.values[name], np.float64)
        bad = np.flatnonzero((pos < 0) | (pos > 1))
        if bad.size:
            raise call.error(f"argument '{name}' sample {bad[0]}: must be in [0, 1]; got "
                             f"{pos[bad[0]]}", RuntimeError)  # fmt: skip
    for i in range(n):
        ch, cw = int(crop_h[i]), int(crop_w[i])  # truncated, as DALI
        if ch < 0 or cw < 0:
            raise call.error(f"sample {i}: arguments 'crop_h'/'crop_w' (or 'crop') must be "
                             f"non-negative; got ({ch}, {cw})")  # fmt: skip
        if (ch == 0) != (cw == 0):
            raise call.error(f"sample {i}: 'crop_h' and 'crop_w' must be given together; got "
                             f"crop_h={ch}, crop_w={cw}", RuntimeError)  # fmt: skip
        if ch == 0:
            continue
        spans = []
        for extent, size, pos in ((dims[i, 0], ch, call.crop_pos_y[i]),
                                  (dims[i, 1], cw, call.crop_pos_x[i])):  # fmt: skip
            start = float(np.float32(pos)) * (extent - size)  # float32 position, as crop
            spans.append(int(_round_half_away(start) if call.rounding == "round" else
                             math.trunc(start)))  # fmt: skip
        y0, x0 = spans
        if y0 < 0 or x0 < 0 or y0 + ch > dims[i, 0] or x0 + cw > dims[i, 1]:
            raise _invalid_window(call, i, y0, x0, ch, cw, dims[i])
        windows[i] = (y0, x0, ch, cw)
    return windows


def _slice_axes(call: Call) -> list[int]:
    """The image axes (0 = H, 1 = W) that slice coordinates refer to, in order."""
    if "axes" in call.given and "axis_names" in call.given:
        raise call.error("arguments 'axes' and 'axis_names' are mutually exclusive",
                         RuntimeError)  # fmt: skip
    if "axes" in call.given or "axis_names" not in call.given:
        axes = [int(a) + 3 if int(a) < 0 else int(a) for a in call.axes]
        if any(a not in (0, 1) for a in axes):
            raise call.error(f"argument 'axes' may name only the H (0) and W (1) axes of the "
                             f"decoded HWC image; got {list(call.axes)}")  # fmt: skip
        return axes
    names = call.axis_names
    if any(c not in _AXIS_LETTERS for c in names):
        raise call.error(f"argument 'axis_names' may contain only 'H' and 'W'; got {names!r}")
    return [_AXIS_LETTERS[c] for c in names]


def _keyword_bounds(call: Call, axes: list[int], dims: np.ndarray) -> np.ndarray:
    """`[N, len(axes), 2]` float begin/end from start/end/shape and their relative forms."""
    n, k = call.batch_size, len(axes)
    given = {name: _per_sample(call.values[name], n, name, call, k)
             for name in ("start", "end", "shape", "rel_start", "rel_end", "rel_shape")
             if call.values[name] is not None}  # fmt: skip
    if "start" in given and "rel_start" in given:
        raise call.error("arguments 'start' and 'rel_start' are mutually exclusive", RuntimeError)
    ends = [e for e in ("end", "rel_end", "shape", "rel_shape") if e in given]
    if len(ends) > 1:
        raise call.error(f"arguments {', '.join(repr(e) for e in ends)} are mutually exclusive",
                         RuntimeError)  # fmt: skip
    ext = dims[:, axes].astype(np.float64)
    rel_begin = given.get("rel_start", np.zeros((n, k)))
    begin = given["start"] if "start" in given else rel_begin * ext
    if "end" in given:
        end = given["end"]
    elif "rel_end" in given:
        end = given["rel_end"] * ext
    elif "shape" in given:
        end = begin + given["shape"]
    elif "rel_shape" in given:
        end = begin + given["rel_shape"] * ext if "start" in given else \
            (rel_begin + given["rel_shape"]) * ext  # fmt: skip
    else:
        end = ext
    return np.stack([begin, end], axis=-1)


def _positional_bounds(call: Call, axes: list[int], dims: np.ndarray) -> np.ndarray:
    """Begin/end from the positional `anchor` and `shape_input` inputs (float: normalized)."""
    anchor, shape = call.inputs[1], call.inputs[2]
    if anchor is None or shape is None:
        raise call.error("the positional 'anchor' and 'shape' inputs must be given together",
                         RuntimeError)  # fmt: skip
    n, k = call.batch_size, len(axes)
    ext = dims[:, axes].astype(np.float64)
    a = _per_sample(anchor.values, n, "anchor", call, k)
    s = _per_sample(shape.values, n, "shape", call, k)
    rel_a = anchor.dtype.is_float and call.normalized_anchor
    rel_s = shape.dtype.is_float and call.normalized_shape
    begin = a * ext if rel_a else a
    end = (a + s) * ext if rel_a and rel_s else begin + (s * ext if rel_s else s)
    return np.stack([begin, end], axis=-1)


def slice_windows(call: Call, dims: np.ndarray) -> np.ndarray:
    """`image_slice` windows: coordinates rounded half up, default axis order W, H."""
    axes = _slice_axes(call)
    keywords = [a for a in ("start", "end", "shape", "rel_start", "rel_end", "rel_shape")
                if call.values[a] is not None]  # fmt: skip
    positional = call.inputs[1] is not None or call.inputs[2] is not None
    if positional and keywords:
        raise call.error(f"give either the positional anchor/shape inputs or the keyword "
                         f"coordinates ({', '.join(keywords)}), not both", RuntimeError)
    if not positional and not keywords:
        raise call.error("no slice coordinates: give 'start'/'end'/'shape' (or their rel_ "
                         "forms) or the positional anchor and shape inputs", RuntimeError)
    bounds = (_positional_bounds if positional else _keyword_bounds)(call, axes, dims)
    bounds = np.floor(bounds + 0.5).astype(np.int64)  # ties round up
    n = call.batch_size
    windows = np.zeros((n, 4), np.int64)
    windows[:, 2:] = dims[:, :2]
    for j, axis in enumerate(axes):
        windows[:, axis] = bounds[:, j, 0]
        windows[:, axis + 2] = bounds[:, j, 1] - bounds[:, j, 0]
    for i in range(n):
        y0, x0, h, w = (int(v) for v in windows[i])
        if y0 < 0 or x0 < 0 or h < 0 or w < 0 or y0 + h > dims[i, 0] or x0 + w > dims[i, 1]:
            raise _invalid_window(call, i, y0, x0, h, w, dims[i], "slice")
    return windows


def random_windows(call: Call, dims: np.ndarray, uniforms: np.ndarray) -> np.ndarray:
    """Random area/aspect windows; `uniforms` is `[N, 2 * num_attempts + 2]` in [0, 1).

    Area fraction uniform in `random_area`, aspect ratio (W/H) log-uniform in
    `random_aspect_ratio`; the first window that fits wins, else the whole image.
    """
    n, attempts = call.batch_size, int(call.num_attempts)
    a0, a1 = call.random_area
    r0, r1 = (math.log(r) for r in call.random_aspect_ratio)
    windows = np.zeros((n, 4), np.int64)
    for i in range(n):
        height, width = int(dims[i, 0]), int(dims[i, 1])
        h, w = height, width
        u = uniforms[i]
        for t in range(attempts):
            area = (a0 + (a1 - a0) * u[2 * t]) * height * width
            ratio = math.exp(r0 + (r1 - r0) * u[2 * t + 1])
            cw, ch = round(math.sqrt(area * ratio)), round(math.sqrt(area / ratio))
            if 0 < cw <= width and 0 < ch <= height:
                h, w = ch, cw
                break
        y0 = min(int(u[-1] * (height - h + 1)), height - h)
        x0 = min(int(u[-2] * (width - w + 1)), width - w)
        windows[i] = (y0, x0, h, w)
    return windows
