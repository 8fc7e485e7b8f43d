"""Output-size and source-mapping rules shared by resize, resize_crop_mirror and
random_resized_crop (DALI 2.4 semantics, checked against tests/golden).

`resize_geometry` returns per sample and per spatial axis (outermost first: D, H, W) the output
extent, and the source mapping `centre(j) = origin + (j + 0.5) * step` that the kernels turn into
filter tables (`ndd_triton.kernels._resample`). A negative step mirrors the axis.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ndd_triton.core.dtype import float32
from ndd_triton.ops import limits
from ndd_triton.ops.schema import Arg, Call

MODES = ("default", "stretch", "not_larger", "not_smaller")
INTERP_CHOICES = tuple(range(6))
SIZE_ARGS = ("size", "resize_x", "resize_y", "resize_z", "resize_shorter", "resize_longer")


def filter_args() -> tuple[Arg, ...]:
    """interp_type / min_filter / mag_filter / antialias / dtype, as in DALI's resize family."""
    return (
        Arg("interp_type", "enum", per_sample=True, choices=INTERP_CHOICES,
            doc="Filter for both directions (DALIInterpType; default INTERP_LINEAR)."),
        Arg("min_filter", "enum", per_sample=True, choices=INTERP_CHOICES,
            doc="Filter when shrinking an axis (overrides interp_type)."),
        Arg("mag_filter", "enum", per_sample=True, choices=INTERP_CHOICES,
            doc="Filter when enlarging an axis (overrides interp_type)."),
        Arg("antialias", "bool", default=True,
            doc="Low-pass filter when shrinking (widens the filter by the scale; not for NN)."),
        Arg("dtype", "dtype", doc="Output type: the input type (default) or float32."),
        Arg("minibatch_size", "int", default=32, doc="Performance hint (ignored)."),
        Arg("temp_buffer_hint", "int", default=0, doc="Performance hint (ignored)."),
    )  # fmt: skip


def size_args() -> tuple[Arg, ...]:
    """The size-selection arguments of resize and resize_crop_mirror."""
    return (
        Arg("size", "float", per_sample=True, vector=True,
            doc="Output extents, outermost first ((H, W) or (D, H, W)); 0 = derive; scalar "
                "broadcasts; a negative extent mirrors the axis."),
        Arg("resize_x", "float", default=0.0, per_sample=True, doc="Output width."),
        Arg("resize_y", "float", default=0.0, per_sample=True, doc="Output height."),
        Arg("resize_z", "float", default=0.0, per_sample=True, doc="Output depth (volumes)."),
        Arg("resize_shorter", "float", default=0.0, per_sample=True,
            doc="Length of the shorter side; the aspect ratio is kept."),
        Arg("resize_longer", "float", default=0.0, per_sample=True,
            doc="Length of the longer side; the aspect ratio is kept."),
        Arg("mode", "str", default="default", choices=MODES,
            doc="How missing extents are derived: default, stretch, not_larger, not_smaller."),
        Arg("max_size", "float", vector=True, doc="Upper limit per axis (or one for all)."),
        Arg("roi_start", "float", per_sample=True, vector=True,
            doc="Start of the input region, outermost first; start > end mirrors the axis."),
        Arg("roi_end", "float", per_sample=True, vector=True, doc="End of the input region."),
        Arg("roi_relative", "bool", default=False,
            doc="roi_start/roi_end are fractions of the input extent."),
        Arg("subpixel_scale", "bool", default=True,
            doc="Fractional output sizes keep the exact scale (the source region is adjusted)."),
    )  # fmt: skip


def spatial_letters(layout: str) -> str:
    """The spatial axes of `layout`, outermost first (a subset of 'DHW')."""
    return "".join(c for c in "DHW" if c in layout)


def spatial_extents(call: Call, layout: str) -> np.ndarray:
    """`[N, d]` input extents of the spatial axes (an empty sample cannot be resampled)."""
    shapes = call.inputs[0].shapes
    extents = np.stack([shapes[:, layout.index(c)] for c in spatial_letters(layout)], axis=1)
    empty = np.flatnonzero((extents == 0).any(axis=1))
    if empty.size:
        i = int(empty[0])
        raise call.error(f"input 0 sample {i} has shape {tuple(int(v) for v in shapes[i])} "
                         f"({layout}): a spatial extent of 0 cannot be resampled")
    return extents


def _sample(value: Any, i: int) -> np.ndarray:
    return np.asarray(value[i], dtype=np.float64).reshape(-1)


def roi(call: Call, extents: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-sample region `[lo, hi)` per axis (lo > hi when mirrored), from roi_start/roi_end."""
    n, d = extents.shape
    lo, hi = np.zeros((n, d)), extents.astype(np.float64)
    start, end = call.values.get("roi_start"), call.values.get("roi_end")
    if start is None and end is None:
        return lo, hi
    if start is None or end is None:
        raise call.error("arguments 'roi_start' and 'roi_end' must be given together; got only "
                         f"'{'roi_start' if end is None else 'roi_end'}'", RuntimeError)
    for name, value, dst in (("roi_start", start, lo), ("roi_end", end, hi)):
        rows = _rows(value, n)
        if rows is not None and rows.shape[1] in (1, d):  # one [N, 1 or d] array: no loop
            dst[:] = rows * extents if call.roi_relative else rows
            continue
        for i in range(n):
            v = _sample(value, i)
            if v.size not in (1, d):
                raise call.error(f"argument '{name}' sample {i}: expected 1 or {d} values (one "
                                 f"per spatial axis); got {v.size}")
            dst[i] = v * extents[i] if call.roi_relative else v
    return lo, hi


def _rows(value: Any, n: int) -> np.ndarray | None:
    """A per-sample vector argument as one `[N, k]` float64 array, or None when its samples
    differ in length (then each is read on its own)."""
    if not isinstance(value, np.ndarray) or value.dtype == object or not n:
        return None
    return value.astype(np.float64, copy=False).reshape(n, -1)


def _requests(call: Call, d: int) -> tuple[np.ndarray, str]:
    """`[N, d]` requested extents (0 = missing) and the effective mode."""
    n = call.batch_size
    given = [a for a in ("size", "resize_xyz", "resize_shorter", "resize_longer")
             if (a == "resize_xyz" and {"resize_x", "resize_y", "resize_z"} & call.given)
             or (a != "resize_xyz" and a in call.given)]  # fmt: skip
    if len(given) != 1:
        got = ", ".join(given) if given else "none"
        raise call.error("Exactly one method of specifying size must be used: 'size', "
                         "'resize_x'/'resize_y'/'resize_z', 'resize_shorter' or "
                         f"'resize_longer'; got {got}", RuntimeError)  # fmt: skip
    req = np.zeros((n, d))
    mode = call.mode
    if given[0] == "size":
        rows = _rows(call.size, n)
        if rows is not None and rows.shape[1] in (1, d):
            req[:] = rows
            return req, mode
        for i in range(n):
            v = _sample(call.size, i)
            if v.size not in (1, d):
                raise call.error(f"argument 'size' sample {i}: expected either a single value or "
                                 f"a list of {d} elements; got {v.size}", RuntimeError)
            req[i] = v
    elif given[0] == "resize_xyz":
        letters = "DHW"[3 - d:]
        for k, letter in enumerate(letters):
            name = {"D": "resize_z", "H": "resize_y", "W": "resize_x"}[letter]
            req[:, k] = np.asarray(call.values[name], dtype=np.float64).reshape(n)
    else:
        value = np.asarray(call.values[given[0]], dtype=np.float64).reshape(n, 1)
        req[:] = value
        mode = "not_smaller" if given[0] == "resize_shorter" else "not_larger"
    return req, mode


def _float_sizes(req: np.ndarray, in_ext: np.ndarray, mode: str, max_size: np.ndarray | None
                 ) -> np.ndarray:  # fmt: skip
    """Output extents (float) of one sample from the requests, the mode and max_size.

    float32 arithmetic, and in the aspect-keeping modes the axis that sets the scale gets its
    requested (or max_size) extent exactly, the others `in * scale`: this fits all 3600 DALI 2.4
    output shapes recorded by tools/dali_diff.py-style sampling (.5 requests included: 7x42 with
    resize_shorter=56.75 is 57x340, not 57x341; 13x42 with resize_longer=29.5 is 9x30).
    """
    f32 = np.float32
    req, in32 = req.astype(f32), in_ext.astype(f32)
    have = req > 0
    safe_in = np.where(in32 > 0, in32, f32(1))
    ratio = req / safe_in
    if mode in ("not_larger", "not_smaller") and have.any():
        idx = np.flatnonzero(have)
        k = int(idx[np.argmin(ratio[idx]) if mode == "not_larger" else np.argmax(ratio[idx])])
        scale, target = ratio[k], req[k]
        if max_size is not None:
            limit = np.flatnonzero(max_size > 0)
            if limit.size:
                max_ratio = max_size.astype(f32) / safe_in
                km = int(limit[np.argmin(max_ratio[limit])])
                if max_ratio[km] < scale:
                    k, scale, target = km, max_ratio[km], f32(max_size[km])
        sizes = in32 * scale
        sizes[k] = target
        return sizes.astype(np.float64)
    if mode == "stretch" or not have.any():
        sizes = np.where(have, req, in32)
    else:
        # Unrequested extents scale by the geometric mean of the requested ratios (DALI 2.4:
        # a 10x20x30 volume with resize_z=5, resize_y=30 is 5x30x26); one ratio stays exact.
        given = ratio[have].astype(np.float64)
        mean_ratio = f32(given.prod() ** (1.0 / given.size)) if given.size > 1 else given[0]
        sizes = np.where(have, req, in32 * f32(mean_ratio))
    if max_size is not None:
        sizes = np.where(max_size > 0, np.minimum(sizes, max_size.astype(f32)), sizes)
    return sizes.astype(np.float64)


def resize_geometry(call: Call, extents: np.ndarray) -> tuple[np.ndarray, ...]:
    """`(out_sizes int64, origin, step)`, each `[N, d]`, for the resize size arguments."""
    d = extents.shape[1]
    lo, hi = roi(call, extents)
    req, mode = _requests(call, d)
    max_size = None
    if call.max_size is not None:
        m = np.asarray(call.max_size, dtype=np.float64)
        if m.size not in (1, d):
            raise call.error(f"argument 'max_size' expects 1 or {d} values; got {m.size}")
        if (m < 0).any():  # (0: no limit on that axis, as in DALI 2.4)
            raise call.error(f"argument 'max_size' must not be negative; got {m.tolist()}")
        max_size = np.broadcast_to(m, (d,))
    # An axis whose extent is derived (no size requested for it) is never flipped, even by a
    # reversed ROI (DALI 2.4); a negative requested size flips the ROI.
    derived = req == 0
    lo, hi = np.where(derived, np.minimum(lo, hi), lo), np.where(derived, np.maximum(lo, hi), hi)
    flip = req < 0
    lo, hi = np.where(flip, hi, lo), np.where(flip, lo, hi)
    arg = _size_arg(call)
    limits.check_count(call, arg, np.abs(req))  # one axis alone beyond the limit (float32-safe)
    sizes = float_sizes(np.abs(req), np.abs(hi - lo), mode, max_size)
    limits.check_count(call, arg, np.prod(np.maximum(sizes, 1.0), axis=1) if sizes.size else 0)
    out, origin, step = mapping(lo, hi, sizes, call.subpixel_scale)
    check_filter(call, arg, lo, hi, step)
    return out, origin, step


def check_filter(call: Call, arg: str, lo: np.ndarray, hi: np.ndarray, step: np.ndarray) -> None:
    """A downscale's antialiasing filter widens by the scale: by more than the whole region
    only for a fraction of an output pixel (size=[1e-9, 1e-9]: 1e10 taps to make one pixel);
    those fail against `max_window`."""
    if call.antialias is None or call.antialias:
        taps = 6 * np.abs(step) + 1
        limits.check_window(call, arg, np.where(taps > 8 * np.abs(hi - lo), taps, 0),
                            "resampling filter")  # fmt: skip


def _size_arg(call: Call) -> str:
    """The size argument given (for messages)."""
    for name in ("size", "resize_x", "resize_y", "resize_z", "resize_shorter", "resize_longer"):
        if name in call.given:
            return name
    return "size"


def float_sizes(req: np.ndarray, in_ext: np.ndarray, mode: str, max_size: np.ndarray | None
                ) -> np.ndarray:  # fmt: skip
    """`_float_sizes` of every sample (`[N, d]` in and out), over `[N, d]` arrays: the same
    float32 operations element for element. Rows the array form does not cover (a geometric
    mean of 2 of 3 requested ratios, non-finite ratios) take `_float_sizes` one by one."""
    f32 = np.float32
    req32, in32 = req.astype(f32), in_ext.astype(f32)
    with np.errstate(all="ignore"):
        return _float_sizes_rows(req, in_ext, req32, in32, mode, max_size)


def _float_sizes_rows(req: np.ndarray, in_ext: np.ndarray, req32: np.ndarray, in32: np.ndarray,
                      mode: str, max_size: np.ndarray | None) -> np.ndarray:  # fmt: skip
    n, d = req.shape
    f32 = np.float32
    have = req32 > 0
    safe_in = np.where(in32 > 0, in32, f32(1))
    ratio = req32 / safe_in
    count = have.sum(axis=1)
    odd = ~np.isfinite(np.where(have, ratio, f32(0))).all(axis=1)
    limit = np.flatnonzero(max_size > 0) if max_size is not None else np.zeros(0, np.int64)
    if mode in ("not_larger", "not_smaller"):
        keep = count > 0
        rows = np.arange(n)
        fill = f32(np.inf) if mode == "not_larger" else f32(-np.inf)
        masked = np.where(have, ratio, fill)
        k = np.argmin(masked, axis=1) if mode == "not_larger" else np.argmax(masked, axis=1)
        scale, target = ratio[rows, k], req32[rows, k]
        if limit.size:
            assert max_size is not None
            max32 = max_size.astype(f32)
            max_ratio = max32 / safe_in
            odd |= ~np.isfinite(max_ratio[:, limit]).all(axis=1)
            km = limit[np.argmin(max_ratio[:, limit], axis=1)]
            over = max_ratio[rows, km] < scale
            k = np.where(over, km, k)
            scale = np.where(over, max_ratio[rows, km], scale)
            target = np.where(over, max32[km], target)
        kept = in32 * scale[:, None]
        kept[rows, k] = target
    else:
        keep = np.zeros(n, bool)
        odd |= (count > 1) & (count < d)  # a geometric mean of several ratios: `**`, one by one
        kept = in32
    # "stretch", all extents given, none given, or one given (its ratio scales the others)
    single = np.where(have, ratio, f32(0)).sum(axis=1, dtype=f32)  # the one ratio when count 1
    derived = np.where((mode != "stretch") & (count == 1)[:, None], in32 * single[:, None], in32)
    sizes = np.where(have, req32, derived)
    if max_size is not None:
        sizes = np.where(max_size > 0, np.minimum(sizes, max_size.astype(f32)), sizes)
    out = np.where(keep[:, None], kept, sizes).astype(np.float64)
    for i in np.flatnonzero(odd).tolist():
        out[i] = _float_sizes(req[i], in_ext[i], mode, max_size)
    return out


def mapping(lo: np.ndarray, hi: np.ndarray, sizes: np.ndarray, subpixel: bool
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:  # fmt: skip
    """Integer output sizes (rounded half up) and the source mapping for region `[lo, hi)`.

    With `subpixel`, a fractional size keeps its exact scale and the source region is shrunk or
    grown around its centre to cover the rounded number of output pixels.
    """
    out = np.maximum(np.floor(sizes + 0.5), 1).astype(np.int64)
    span = hi - lo
    if subpixel:
        step = span / np.where(sizes > 0, sizes, 1.0)
        origin = lo + (span - out * step) / 2
    else:
        step = span / out
        origin = lo.copy()
    return out, origin, step


def interp_per_axis(call: Call, step: np.ndarray) -> np.ndarray:
    """`[N, d]` filter per axis: min_filter when shrinking (|step| > 1), else mag_filter (an
    axis kept at its size uses mag_filter, as DALI 2.4 does)."""
    n = step.shape[0]
    base = call.interp_type if call.interp_type is not None else np.ones(n, np.int64)
    minf = call.min_filter if call.min_filter is not None else base
    magf = call.mag_filter if call.mag_filter is not None else base
    minf = np.asarray(minf, dtype=np.int64).reshape(n, 1)
    magf = np.asarray(magf, dtype=np.int64).reshape(n, 1)
    return np.where(np.abs(step) > 1.0, minf, magf)


def output_dtype(call: Call) -> Any:
    """The input dtype, or float32 when `dtype` asks for it (DALI accepts nothing else)."""
    in_dtype = call.inputs[0].dtype
    if call.dtype is None or call.dtype == in_dtype:
        return in_dtype
    if call.dtype != float32:
        raise call.error(f"argument 'dtype' must be the input type ({in_dtype}) or float32; got "
                         f"{call.dtype}", RuntimeError)  # fmt: skip
    return call.dtype


def derive_plan(call: Call, layout: str, in_ext: np.ndarray, out: np.ndarray,
                origin: np.ndarray, step: np.ndarray) -> None:  # fmt: skip
    """Store the per-sample resampling plan for the kernels (`resample_*` values)."""
    call.derive("resample_axes", spatial_letters(layout))
    call.derive("resample_in", in_ext.astype(np.int64), per_sample=True)
    call.derive("resample_out", out.astype(np.int64), per_sample=True)
    call.derive("resample_origin", origin.astype(np.float64), per_sample=True)
    call.derive("resample_step", step.astype(np.float64), per_sample=True)
    call.derive("resample_interp", interp_per_axis(call, step), per_sample=True)
