"""zeros, ones, full and the `_like` forms on the GPU: one streaming launch each.

The output is a stream of elements (`_stream.py`): full tiles store 16 bytes per lane.
`zeros`/`ones` store a constant (a one-element host array uploaded with the tables, loaded
once per program); `full`/`full_like` read the fill sample at broadcast strides (0 on repeated
axes) over the collapsed axes (`_broadcast.py`: int32 multiply-shift divisions), converting to
the output dtype with DALI's rules where it differs.
"""

from __future__ import annotations

import numpy as np
import triton
import triton.language as tl

from ndd_triton.kernels import register
from ndd_triton.kernels.gpu._broadcast import (
    INT32_LIMIT,
    _helper_axis_step,
    collapse,
    magic_numbers,
)
from ndd_triton.kernels.gpu._common import padded_shapes, padded_strides
from ndd_triton.kernels.gpu._stream import S_START, _helper_stream_tile, block_for, plan_stream
from ndd_triton.kernels.gpu._tables import GpuBatch, GpuRun
from ndd_triton.kernels.gpu._tensor_copy import _helper_dali_convert, convert_meta
from ndd_triton.ops import constants
from ndd_triton.ops.schema import Call

# sample table after S_START, S_END: fill offset, collapsed extents, division constants, strides
F_OFF: tl.constexpr = tl.constexpr(2)
F_EXT: tl.constexpr = tl.constexpr(3)
F_MUL: tl.constexpr = tl.constexpr(9)
F_SHIFT: tl.constexpr = tl.constexpr(15)
F_STR: tl.constexpr = tl.constexpr(21)
F_NCOL: tl.constexpr = tl.constexpr(27)


@triton.jit
def _helper_fill(src, row, start, lanes, mask, R: tl.constexpr, MASKED: tl.constexpr):
    """Fill values of the sample elements `start - S_START + lanes` (R == 0: one per sample)."""
    base = src + tl.load(row + F_OFF)
    if R == 0:
        val = tl.broadcast_to(tl.load(base), lanes.shape)
    else:
        rem = tl.maximum((start - tl.load(row + S_START)).to(tl.int32) + lanes, 0)
        index = rem * 0
        for d in tl.static_range(R):  # collapsed axes, innermost first; the outermost: the rest
            axis = 5 - d
            if d == R - 1:
                coord = rem
            else:
                coord, rem = _helper_axis_step(row, rem, axis, F_EXT, F_MUL, F_SHIFT, False)
            index += coord * tl.load(row + F_STR + axis).to(tl.int32)
        if MASKED:  # noqa: SIM108 (a static if: Triton compiles one branch)
            val = tl.load(base + index, mask=mask)
        else:
            val = tl.load(base + index)
    return val


@triton.jit
def _fill_kernel(src, dst, samples, tiles, total, BLOCK: tl.constexpr, GLOBAL: tl.constexpr,
                 R: tl.constexpr, CONVERT: tl.constexpr, LO: tl.constexpr, HI: tl.constexpr,
                 NANV: tl.constexpr, LO_F: tl.constexpr, HI_F: tl.constexpr):  # fmt: skip
    """One stream tile: dst = convert(fill) (GLOBAL: one constant for the whole batch)."""
    _, row, start, lo, hi = _helper_stream_tile(tiles, samples, total, F_NCOL, BLOCK, GLOBAL)
    lanes = tl.arange(0, BLOCK)
    if hi - lo == BLOCK:  # a full tile: unmasked, vectorised
        val = _helper_fill(src, row, start, lanes, lanes, R, False)
        if CONVERT:
            val = _helper_dali_convert(val, dst.dtype.element_ty, LO, HI, NANV, LO_F, HI_F)
        tl.store(dst + start + lanes, val)
    else:
        mask = (lanes >= (lo - start).to(tl.int32)) & (lanes < (hi - start).to(tl.int32))
        val = _helper_fill(src, row, start, lanes, mask, R, True)
        if CONVERT:
            val = _helper_dali_convert(val, dst.dtype.element_ty, LO, HI, NANV, LO_F, HI_F)
        tl.store(dst + start + lanes, val, mask=mask)


def _launch_fill(run: GpuRun, out: GpuBatch, src: object, offsets: np.ndarray,
                 strides: np.ndarray | None, convert: dict[str, object]) -> None:  # fmt: skip
    """One launch: every output sample reads `src` at `offsets` with broadcast `strides`."""
    n = out.batch_size
    ext, rank = np.ones((n, 6), np.int64), 0
    fill_strides = np.zeros((n, 6), np.int64)
    if strides is not None and n:
        if int(out.sizes.max()) >= INT32_LIMIT:
            raise ValueError("full: GPU samples must have fewer than 2**31 elements")
        ext, (fill_strides,), rank = collapse(
            padded_shapes(out.shapes), [padded_strides(np.asarray(strides, np.int64))]
        )
        if not (fill_strides != 0).any():
            rank = 0  # a one-element fill per sample
    mul, shift = magic_numbers(ext)
    block = block_for(out.data.dtype)
    plan = plan_stream(out, block, global_ok=strides is None)
    samples, tiles = plan.tables(offsets, ext, mul, shift, fill_strides)
    # IEEE overflow to inf (f32 -> f16) and NaN from inf - inf in the rounding step are intended
    # (handled by the saturation); NumPy-backed evaluation (the Triton interpreter) would warn.
    with np.errstate(over="ignore", invalid="ignore"):
        run.launch(_fill_kernel, (plan.grid,), src, plan.out, samples, tiles, plan.total,
                   BLOCK=block, GLOBAL=plan.is_global, R=rank, **convert)  # fmt: skip


def _fill_constant(run: GpuRun, out: GpuBatch, value: int) -> None:
    src = np.full(1, value, dtype=out.dtype.numpy_dtype)
    _launch_fill(run, out, src, np.zeros(out.batch_size, np.int64), None,
                 convert_meta(out.dtype, out.dtype))  # fmt: skip


@register(constants.zeros, "gpu", replay=True)
@register(constants.zeros_like, "gpu", replay=True)
def zeros_gpu(run: GpuRun, out: GpuBatch, *rest: object) -> None:
    """Fill the batch with 0 in one launch."""
    _fill_constant(run, out, 0)


@register(constants.ones, "gpu", replay=True)
@register(constants.ones_like, "gpu", replay=True)
def ones_gpu(run: GpuRun, out: GpuBatch, *rest: object) -> None:
    """Fill the batch with 1 in one launch."""
    _fill_constant(run, out, 1)


@register(constants.full, "gpu", replay=True)
def full_gpu(run: GpuRun, out: GpuBatch, fill: GpuBatch, arg: Call) -> None:
    """Broadcast every fill sample in one launch."""
    _launch_fill(run, out, fill.data, fill.offsets, arg.fill_strides,
                 convert_meta(fill.dtype, out.dtype))  # fmt: skip


@register(constants.full_like, "gpu", replay=True)
def full_like_gpu(run: GpuRun, out: GpuBatch, like: GpuBatch, fill: GpuBatch, arg: Call) -> None:
    """Broadcast and convert every fill sample in one launch."""
    _launch_fill(run, out, fill.data, fill.offsets, arg.fill_strides,
                 convert_meta(fill.dtype, out.dtype))  # fmt: skip
