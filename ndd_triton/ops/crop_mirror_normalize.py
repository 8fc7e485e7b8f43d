"""crop_mirror_normalize: crop, optional horizontal flip, `(x - mean) / std * scale + shift`,
type conversion and layout permutation in one pass (DALI `crop_mirror_normalize`)."""

from __future__ import annotations

import numpy as np

from ndd_triton.core.dtype import float16, float32, int8, uint8
from ndd_triton.ops._tensor_args import cxx_cast
from ndd_triton.ops.crop import (
    CROP_LAYOUTS,
    border_args,
    check_dtype,
    crop_args,
    crop_windows,
    fill_table,
    spatial_extents,
)
from ndd_triton.ops.schema import Arg, Call, Input, OpSchema, OutputSpec


def _per_channel(call: Call, name: str, i: int, channels: int) -> np.ndarray:
    v = np.asarray(call.values[name][i], dtype=np.float64).reshape(-1)
    if v.size not in (1, channels):
        raise call.error(f"argument '{name}' sample {i}: expected 1 or {channels} values (one "
                         f"per channel); got {v.size}", RuntimeError)  # fmt: skip
    return np.broadcast_to(v, (channels,))


def _out_layout(call: Call, layout: str) -> str:
    out_layout = call.output_layout
    if sorted(out_layout) != sorted(layout):
        raise call.error(f"argument 'output_layout' must be a permutation of the input layout "
                         f"'{layout}'; got '{out_layout}'", RuntimeError)  # fmt: skip
    return out_layout  # type: ignore[no-any-return]


def _affine(call: Call, channels: np.ndarray, out_channels: np.ndarray
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:  # fmt: skip
    """Per-sample `[N, C_out]` gain = scale / std, bias = shift - mean * gain, and fill."""
    n = len(channels)
    width = int(out_channels.max()) if n else 1
    mean, std = call.mean, call.std
    uniform = n > 0 and (channels == channels[0]).all() and isinstance(mean, np.ndarray) and \
        isinstance(std, np.ndarray) and mean.ndim == std.ndim == 2  # fmt: skip
    if uniform and mean.shape[1] in (1, channels[0]) and std.shape[1] in (1, channels[0]):
        nc = int(channels[0])  # the common case, vectorised: one mean/std length, one C
        gain, bias = np.zeros((n, width)), np.zeros((n, width))
        with np.errstate(divide="ignore", invalid="ignore"):  # std == 0: inf/nan, no error
            gain[:, :nc] = call.scale / np.broadcast_to(std, (n, nc))
            bias[:, :nc] = call.shift - np.broadcast_to(mean, (n, nc)) * gain[:, :nc]
        fill = np.broadcast_to(fill_table(call, nc, int(out_channels[0])), (n, width)).copy()
        return gain, bias, fill
    gain, bias, fill = (np.zeros((n, width)) for _ in range(3))
    for i in range(n):
        nc = int(channels[i])
        std_i = _per_channel(call, "std", i, nc)
        with np.errstate(divide="ignore", invalid="ignore"):
            gain[i, :nc] = call.scale / std_i
            bias[i, :nc] = call.shift - _per_channel(call, "mean", i, nc) * gain[i, :nc]
        fill[i, :int(out_channels[i])] = fill_table(call, nc, int(out_channels[i]))
    return gain, bias, fill


def _infer(call: Call) -> OutputSpec:
    layout = call.inputs[0].layout or "HWC"
    out_layout = _out_layout(call, layout)
    start, size = crop_windows(call, layout, spatial_extents(call, layout))
    shapes = call.inputs[0].shapes.copy()
    for k, c in enumerate(c for c in "DHW" if c in layout):
        shapes[:, layout.index(c)] = size[:, k]
    n = call.batch_size
    channels = shapes[:, layout.index("C")].copy() if "C" in layout else np.ones(n, np.int64)
    out_channels = channels.copy()
    if call.pad_output and "C" in layout:
        out_channels = np.array([1 << int(c - 1).bit_length() if c > 1 else c
                                 for c in channels], dtype=np.int64)  # fmt: skip
        shapes[:, layout.index("C")] = out_channels
    gain, bias, fill = _affine(call, channels, out_channels)
    dtype = check_dtype(call, (float32, float16, int8, uint8))
    # the pad fill is written as is (not normalised), cast like C++ (DALI 2.4: u8 300 -> 44)
    fill = cxx_cast(fill, dtype.numpy_dtype).astype(np.float64)
    call.derive("window_start", start, per_sample=True)
    call.derive("window_size", size, per_sample=True)
    call.derive("gain", gain, per_sample=True)
    call.derive("bias", bias, per_sample=True)
    call.derive("fill", fill, per_sample=True)
    call.derive("out_layout", out_layout)
    return OutputSpec(dtype, shapes[:, [layout.index(c) for c in out_layout]], out_layout)


schema = OpSchema(
    name="crop_mirror_normalize",
    doc="Crops, optionally mirrors horizontally, normalises ((x - mean) / std * scale + shift), "
        "converts and permutes the layout of each sample in one pass.",
    inputs=(Input("input", layouts=CROP_LAYOUTS),),
    args=(*crop_args(), *border_args(),
          Arg("mean", "float", default=0.0, per_sample=True, vector=True,
              doc="Mean subtracted, one value or one per channel."),
          Arg("std", "float", default=1.0, per_sample=True, vector=True,
              doc="Standard deviation divided by, one value or one per channel."),
          Arg("scale", "float", default=1.0, doc="Multiplier applied after dividing by std."),
          Arg("shift", "float", default=0.0, doc="Value added last."),
          Arg("mirror", "int", default=0, per_sample=True, doc="Nonzero: flip horizontally."),
          Arg("dtype", "dtype", default=float32,
              doc="Output type: float32 (default), float16, int8 or uint8."),
          Arg("output_layout", "layout", default="CHW",
              doc="Output layout, a permutation of the input layout."),
          Arg("pad_output", "bool", default=False,
              doc="Pad channels with zeros up to the next power of two.")),
    infer=_infer,
)  # fmt: skip
