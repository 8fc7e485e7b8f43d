"""crop: cut a window out of the spatial axes (DALI `crop`), plus the window rule shared by
crop_mirror_normalize and resize_crop_mirror.

Window extents are truncated to integers; the start along each axis is
`round_half_away(pos * (in - crop))` (or truncated with `rounding="truncate"`). Out-of-bounds
windows raise (policy "error"), are filled with `fill_values` ("pad"/"constant"), repeat the
border ("edge"/"clamp") or are clipped to the input ("trim_to_shape").
"""

from __future__ import annotations

import numpy as np

from ndd_triton.core.dtype import DType, float16, float32, uint8
from ndd_triton.ops import limits
from ndd_triton.ops._tensor_args import cxx_cast
from ndd_triton.ops.args import non_negative
from ndd_triton.ops.schema import Arg, Call, Input, OpSchema, OutputSpec

CROP_LAYOUTS = ("HWC", "CHW", "DHWC", "CDHW", "FHWC", "FCHW", "CFHW", "FDHWC", "FCDHW", "CFDHW")
POLICIES = ("error", "pad", "constant", "trim_to_shape", "edge", "clamp")
_POS = {"D": "crop_pos_z", "H": "crop_pos_y", "W": "crop_pos_x"}
_EXT = {"D": "crop_d", "H": "crop_h", "W": "crop_w"}


def crop_args() -> tuple[Arg, ...]:
    """The window arguments of crop, crop_mirror_normalize and resize_crop_mirror."""
    return (
        Arg("crop", "float", per_sample=True, vector=True, check=non_negative,
            doc="Window extents (H, W) or (D, H, W); truncated to integers."),
        Arg("crop_h", "float", default=0.0, per_sample=True, check=non_negative,
            doc="Window height (with crop_w)."),
        Arg("crop_w", "float", default=0.0, per_sample=True, check=non_negative,
            doc="Window width (with crop_h)."),
        Arg("crop_d", "float", default=0.0, per_sample=True, check=non_negative,
            doc="Window depth (volumes)."),
        Arg("crop_pos_x", "float", default=0.5, per_sample=True,
            doc="Normalised horizontal start: x0 = crop_pos_x * (W - crop_w), in [0, 1]."),
        Arg("crop_pos_y", "float", default=0.5, per_sample=True,
            doc="Normalised vertical start, in [0, 1]."),
        Arg("crop_pos_z", "float", default=0.5, per_sample=True,
            doc="Normalised depth start, in [0, 1]."),
        Arg("rounding", "str", default="round", choices=("round", "truncate"),
            doc="How the window start is rounded: nearest (ties away) or truncated."),
    )  # fmt: skip


def border_args() -> tuple[Arg, ...]:
    """out_of_bounds_policy and fill_values."""
    return (
        Arg("out_of_bounds_policy", "str", default="error", choices=POLICIES,
            doc="Windows outside the input: error, pad/constant (fill_values), edge/clamp "
                "(repeat the border) or trim_to_shape (clip the window)."),
        Arg("fill_values", "float", default=0.0, vector=True,
            doc="Padding value, one for all channels or one per channel."),
    )  # fmt: skip


def _extents(call: Call, letters: str, in_ext: np.ndarray) -> np.ndarray:
    """`[N, d]` requested window extents (the input extent where none is requested)."""
    n, d = in_ext.shape
    size = in_ext.astype(np.float64).copy()
    if call.crop is not None:
        crop = call.crop
        if isinstance(crop, np.ndarray) and crop.dtype != object and n:
            rows = crop.astype(np.float64, copy=False).reshape(n, -1)  # one [N, k] array
            if rows.shape[1] in (1, 2, d):
                if rows.shape[1] == 1:
                    rows = np.repeat(rows, 2 if d >= 2 else 1, axis=1)
                size[:, d - rows.shape[1]:] = rows
                return np.trunc(size)
        for i in range(n):
            v = np.asarray(call.crop[i], dtype=np.float64).reshape(-1)
            if v.size not in (1, 2, d):
                raise call.error(f"argument 'crop' sample {i}: expected 1, 2 or {d} values "
                                 f"({', '.join(letters)}); got {v.size}")
            if v.size == 1:
                v = np.repeat(v, 2 if d >= 2 else 1)
            size[i, d - v.size:] = v
        return np.trunc(size)
    given = {c for c in "DHW" if _EXT[c] in call.given}
    if ("H" in given) != ("W" in given):
        missing = "crop_w" if "H" in given else "crop_h"
        raise call.error(f"arguments 'crop_h' and 'crop_w' must be given together; {missing} "
                         "is missing", RuntimeError)  # fmt: skip
    for k, c in enumerate(letters):
        if c in given:
            v = np.asarray(call.values[_EXT[c]], dtype=np.float64).reshape(n)
            size[:, k] = np.where(v > 0, v, size[:, k])
    return np.trunc(size)


def crop_windows(call: Call, layout: str, in_ext: np.ndarray, policy: str | None = None
                 ) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """`(start, size)` int64 `[N, d]` windows on the spatial axes, after the border policy
    (`policy` overrides the call's out_of_bounds_policy)."""
    letters = "".join(c for c in "DHW" if c in layout)
    n = in_ext.shape[0]
    size = _extents(call, letters, in_ext)
    if size.size:  # (before the int64 cast: crop=[1e30, 1e30])
        arg = "crop" if call.crop is not None else "crop_h"
        limits.check_count(call, arg, np.prod(np.maximum(size, 1.0), axis=1))
    start = np.zeros(size.shape, np.int64)
    for k, c in enumerate(letters):
        pos = np.asarray(call.values[_POS[c]], dtype=np.float64).reshape(n)
        bad = np.flatnonzero((pos < 0) | (pos > 1))
        if bad.size:
            i = int(bad[0])
            raise call.error(f"argument '{_POS[c]}' sample {i}: must be in [0, 1]; got "
                             f"{pos[i]:g}", RuntimeError)  # fmt: skip
        # DALI 2.4 keeps the position as float32 and multiplies in double: 0.7 over a margin
        # of 15 is 10.49999982 -> 10 (fits 800 recorded DALI windows).
        raw = pos.astype(np.float32).astype(np.float64) * (in_ext[:, k] - size[:, k])
        start[:, k] = np.trunc(raw) if call.rounding == "truncate" else \
            np.copysign(np.floor(np.abs(raw) + 0.5), raw)  # fmt: skip
    size = size.astype(np.int64)
    negative = np.flatnonzero((size < 0).any(axis=1))
    if negative.size:
        i = int(negative[0])
        raise call.error(f"sample {i}: crop window {tuple(size[i])} has a negative extent")
    policy = policy or call.out_of_bounds_policy
    outside = (start < 0) | (start + size > in_ext)
    if policy == "trim_to_shape":
        end = np.minimum(start + size, in_ext)
        start = np.clip(start, 0, in_ext)
        size = np.maximum(end - start, 0)
    elif policy == "error" and outside.any():
        i = int(np.flatnonzero(outside.any(axis=1))[0])
        raise call.error(f"sample {i}: Slice can't be placed out of bounds: crop window "
                         f"{tuple(int(v) for v in size[i])} at {tuple(int(v) for v in start[i])} "
                         f"exceeds the input size {tuple(int(v) for v in in_ext[i])}; use "
                         "out_of_bounds_policy='pad' or 'trim_to_shape'", RuntimeError)
    return start, size


def fill_table(call: Call, channels: int, out_channels: int) -> np.ndarray:
    """`[out_channels]` fill values: one for all or one per channel; padded channels get 0."""
    fill = np.asarray(call.fill_values, dtype=np.float64).reshape(-1)
    if fill.size not in (1, channels) and not (fill.size == out_channels):
        raise call.error(f"argument 'fill_values' expects 1 or {channels} values (one per "
                         f"channel); got {fill.size}", RuntimeError)  # fmt: skip
    table = np.zeros(out_channels)
    table[:channels] = fill[0] if fill.size == 1 else fill[:channels]
    return table


def check_dtype(call: Call, allowed: tuple[DType, ...]) -> DType:
    """The output dtype: `dtype` if given (must be in `allowed` or equal the input's)."""
    in_dtype = call.inputs[0].dtype
    if call.dtype is None or call.dtype == in_dtype:
        return call.dtype or in_dtype
    if call.dtype not in allowed:
        raise call.error(f"argument 'dtype': Not supported output type {call.dtype}; expected "
                         f"one of {', '.join(str(d) for d in allowed)}", RuntimeError)
    return call.dtype  # type: ignore[no-any-return]


def spatial_extents(call: Call, layout: str) -> np.ndarray:
    """`[N, d]` extents of the layout's D/H/W axes."""
    shapes = call.inputs[0].shapes
    return np.stack([shapes[:, layout.index(c)] for c in "DHW" if c in layout], axis=1)


def _infer(call: Call) -> OutputSpec:
    layout = call.inputs[0].layout or "HWC"
    start, size = crop_windows(call, layout, spatial_extents(call, layout))
    shapes = call.inputs[0].shapes.copy()
    for k, c in enumerate(c for c in "DHW" if c in layout):
        shapes[:, layout.index(c)] = size[:, k]
    call.derive("window_start", start, per_sample=True)
    call.derive("window_size", size, per_sample=True)
    channels = int(shapes[0, layout.index("C")]) if len(shapes) and "C" in layout else 1
    out_dtype = check_dtype(call, (float32, float16, uint8))
    # DALI 2.4 converts the fill to the output type by truncation + wrap (u8: 300 -> 44)
    fill = cxx_cast(fill_table(call, channels, channels), out_dtype.numpy_dtype)
    call.derive("fill", fill.astype(np.float64))
    return OutputSpec(out_dtype, shapes, layout)


schema = OpSchema(
    name="crop",
    doc="Crops a window out of each sample's spatial axes (frames and channels are kept).",
    inputs=(Input("input", layouts=CROP_LAYOUTS),),
    args=(*crop_args(), *border_args(),
          Arg("dtype", "dtype", doc="Output type: the input type, float32, float16 or uint8.")),
    infer=_infer,
)  # fmt: skip
