"""Per-sample affine colour transform on the CPU: `out = M · pixel + offset`, then conversion.

Shared by the seven colour-adjustment ops and color_space_conversion. The exact path is float32
math, as in DALI; integer outputs round half away from zero and saturate (spec ops.md §0.4).

Precision contract: uint8 -> uint8 samples of 256+ elements go through `_color_u8.apply_u8`,
OpenCV's fixed-point uint8 paths (10-bit `transform` weights, 15-bit gray weights) or exact
byte moves and tables. Their outputs are within 1 of the exact float result for every input
and every matrix they accept (proof in `_color_u8`; differences on a few % of the pixels), the
golden tolerance of these ops; 2-4x faster than the float32 path (perf/color.md). Matrices
with coefficients beyond 31 or offsets beyond 4096, other dtypes, and small samples take the
exact path.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from ndd_triton.kernels import register
from ndd_triton.kernels.cpu._color_u8 import apply_u8
from ndd_triton.kernels.cpu._opencv import cv2_module
from ndd_triton.ops import color
from ndd_triton.ops.schema import SampleArgs


def rounding_bias(dtype: np.dtype[Any]) -> float:
    """0.5 when `store_rounded(..., biased=True)` may take values with the +0.5 already added.

    Only unsigned outputs narrower than 32 bits round by `trunc(x + 0.5)`, so only they let a
    producer (OpenCV's `delta`, a transform's offset column) fold the bias into its own pass.
    """
    dtype = np.dtype(dtype)
    return 0.5 if dtype.kind == "u" and dtype.itemsize < 4 else 0.0


def store_rounded(out: np.ndarray, values: torch.Tensor | np.ndarray, ties_to_even: bool = False,
                  offset: torch.Tensor | np.ndarray | None = None, finite: bool = False,
                  biased: bool = False) -> None:  # fmt: skip
    """Write float `values` (+ `offset`) into `out`: round (half away or to even), saturate.

    `values` is scratch and gets modified. NaN becomes 0 (`finite=True` skips that pass when the
    caller knows there is none). The float -> int cast truncates toward zero, so adding `±0.5`
    first rounds half away from zero; for unsigned outputs offset, +0.5 and the clamp fuse, and
    `biased=True` says the +0.5 is already in `values` (see `rounding_bias`). All in NumPy, in
    place: callers run it once per cache-sized band, and torch's elementwise ops on such bands
    fan out to its intra-op threads wherever the kernel runs on a thread that has more than one
    (7 ms instead of 30 us for an `add_` of 200k floats with 2 threads on a busy 2-core machine);
    NumPy's float -> uint8 cast is also 2.5x faster than torch's `copy_`.
    """
    v = values.numpy() if isinstance(values, torch.Tensor) else values
    bias = offset.numpy() if isinstance(offset, torch.Tensor) else offset
    if out.dtype.kind == "f":
        if bias is not None:
            v += bias
        with np.errstate(over="ignore"):  # float32 -> float16 saturates to inf, as in torch
            out[...] = v.reshape(out.shape)
        return
    info = np.iinfo(out.dtype)
    if not finite:
        if bias is not None:
            v += bias
            bias = None
        np.nan_to_num(v, copy=False, nan=0.0)
    if info.min == 0 and info.bits < 32 and not ties_to_even:
        if not biased:
            v += bias + np.float32(0.5) if bias is not None else np.float32(0.5)
        elif bias is not None:
            v += bias
        np.clip(v, 0.5, info.max + 0.5, out=v)
        np.copyto(out, v.reshape(out.shape), casting="unsafe")
        return
    assert not biased, "biased values need an unsigned output narrower than 32 bits"
    if bias is not None:
        v += bias
    v = v.reshape(-1)
    if ties_to_even:
        np.rint(v, out=v)
    if info.bits >= 32:  # float32 cannot hold INT32_MAX exactly: saturate in float64
        v = v.astype(np.float64)
    np.clip(v, float(info.min), float(info.max), out=v)
    if not ties_to_even:
        v += np.copysign(0.5, v) if info.min < 0 else 0.5
        if info.bits < 32:
            np.clip(v, float(info.min), float(info.max), out=v)
    with np.errstate(invalid="ignore"):  # 64-bit maxima round up in float64: fixed below
        np.copyto(out, v.reshape(out.shape), casting="unsafe")
    if info.bits == 64:
        out[(v >= float(info.max)).reshape(out.shape)] = info.max


def apply_affine(out: np.ndarray, inp: np.ndarray, matrix: np.ndarray, offset: np.ndarray) -> None:
    """`out[..., k] = Σ_c matrix[k, c] · inp[..., c] + offset[k]`; 1x1 matrices act elementwise.

    8-bit inputs with a 1x1 matrix go through a 256-entry table built by the float path itself
    (so the bytes are the same, `cv2.LUT`); other inputs use OpenCV's float32 `transform`
    (color_twist on 480x640x3 uint8, 1 thread: 0.74 vs 2.4 CPU ms for the torch path).
    uint8 -> uint8 samples first try the fixed-point paths (within 1 of exact, `_color_u8`).
    """
    if inp.size == 0 or apply_u8(out, inp, matrix, offset):
        return
    if matrix.shape == (1, 1) and inp.dtype.itemsize == 1 and inp.size >= LUT_MIN_ELEMENTS:
        _apply_lut(out, inp, matrix, offset)
    elif inp.flags.c_contiguous and out.flags.c_contiguous:
        _apply_transform(out, inp, matrix, offset)
    else:
        _apply_torch(out, inp, matrix, offset)


LUT_MIN_ELEMENTS = 4096  # below this, building the table costs more than it saves
LUT_DTYPES = tuple(np.dtype(t) for t in (np.uint8, np.int8, np.uint16, np.int16, np.int32,
                                         np.float32))  # fmt: skip  # depths cv2.LUT writes


def _apply_lut(out: np.ndarray, inp: np.ndarray, matrix: np.ndarray, offset: np.ndarray) -> None:
    """Elementwise affine of an 8-bit sample through a table of all 256 results."""
    levels = np.arange(256, dtype=np.uint8).view(inp.dtype)  # table index = the byte's value
    table = np.empty(256, out.dtype)
    _apply_torch(table, levels, matrix, offset)
    index = inp.reshape(1, -1).view(np.uint8)
    if table.dtype in LUT_DTYPES:
        target = out.reshape(1, -1) if out.flags.c_contiguous else None
        result = cv2_module().LUT(index, table, dst=target)
        if result is not target:
            out[...] = result.reshape(out.shape)
    else:
        out[...] = table[index].reshape(out.shape)


def _apply_transform(out: np.ndarray, inp: np.ndarray, matrix: np.ndarray,
                     offset: np.ndarray) -> None:  # fmt: skip
    """`cv2.transform` in float32 with `[matrix | offset (+0.5)]`, then `store_rounded`.

    The +0.5 of half-away rounding rides in the offset column (`rounding_bias`), as
    `store_rounded` itself would add `offset + 0.5` in float32: the same arithmetic. Pixels go
    in chunks through small float32 buffers that stay in cache: whole-image temporaries cost
    more in fresh pages than the arithmetic (1.1 vs 0.6 CPU ms on 480x640x3 uint8, measured).
    """
    cv2 = cv2_module()
    cout, cin = matrix.shape
    bias = rounding_bias(out.dtype)
    table = np.empty((cout, cin + 1), np.float32)
    table[:, :cin] = matrix
    table[:, cin] = offset.astype(np.float32) + np.float32(bias)
    src, dst = inp.reshape(-1, 1, cin), out.reshape(-1, 1, cout)
    step = min(len(src), CHUNK_PIXELS)
    pixels = np.empty((step, 1, cin), np.float32)
    values = np.empty((step, 1, cout), np.float32)
    finite = inp.dtype.kind in "iu"
    for start in range(0, len(src), step):
        stop = min(len(src), start + step)
        part = src[start:stop]
        if part.dtype != np.float32:
            np.copyto(pixels[:stop - start], part, casting="unsafe")
            part = pixels[:stop - start]
        target = values[:stop - start]
        result = cv2.transform(part, table, dst=target)
        if result is not target:  # OpenCV drops a trailing 1-channel axis
            target[...] = np.asarray(result).reshape(target.shape)
        store_rounded(dst[start:stop], target, finite=finite,
                      biased=bias != 0)  # fmt: skip


CHUNK_PIXELS = 65536  # pixels per cv2.transform call: float32 buffers of 768 KiB at 3 channels


def _apply_torch(out: np.ndarray, inp: np.ndarray, matrix: np.ndarray, offset: np.ndarray) -> None:
    """The same affine with torch float32 ops (any strides; builds the 8-bit tables)."""
    cout, cin = matrix.shape
    src = torch.from_numpy(np.ascontiguousarray(inp))
    finite = inp.dtype.kind in "iu"
    if cin == 1 and cout == 1:
        values = src.reshape(-1).to(torch.float32, copy=True).mul_(float(matrix[0, 0]))
        store_rounded(out, values, offset=torch.tensor(float(offset[0])), finite=finite)
        return
    pixels = src.reshape(-1, cin).to(torch.float32)
    values = pixels @ torch.from_numpy(np.ascontiguousarray(matrix.T, np.float32))
    bias = None if not offset.any() else torch.from_numpy(np.ascontiguousarray(offset, np.float32))
    store_rounded(out, values, offset=bias, finite=finite)


def _color_cpu(out: np.ndarray, inp: np.ndarray, arg: SampleArgs) -> None:
    """Apply this sample's colour matrix and offset."""
    apply_affine(out, inp, arg.color_matrix, arg.color_offset)


for _schema in color.schemas:
    register(_schema, "cpu")(_color_cpu)
