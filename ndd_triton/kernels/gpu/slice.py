"""slice on the GPU: one launch for the whole ragged batch, any rank up to 6.

Each program writes one tile of one output sample. The flat output index is unravelled over
the output shape; on every axis the source coordinate `anchor + coord` is mapped by the
out-of-bounds policy (constexpr: edge clamps, wrap takes the modulus, reflect_1001 / reflect_101
fold with periods 2E / 2E-2, pad marks the element as outside). Outside elements take the fill
value of their channel; values are converted to the output dtype with DALI's rounding rules.
"""

from __future__ import annotations

import numpy as np
import triton
import triton.language as tl

from ndd_triton.kernels import register
from ndd_triton.kernels.gpu._common import MAX_RANK, padded_shapes
from ndd_triton.kernels.gpu._tables import GpuBatch, GpuRun, tile_table
from ndd_triton.kernels.gpu._tensor_copy import _helper_dali_convert, convert_meta
from ndd_triton.ops import slice as slice_op
from ndd_triton.ops.schema import Call

IN_OFF: tl.constexpr = tl.constexpr(0)
OUT_OFF: tl.constexpr = tl.constexpr(1)
OUT_SHAPE: tl.constexpr = tl.constexpr(2)  # 6 extents
IN_SHAPE: tl.constexpr = tl.constexpr(8)  # 6 extents
ANCHOR: tl.constexpr = tl.constexpr(14)  # 6 window starts (may be negative)
NCOL: tl.constexpr = tl.constexpr(20)
P_PAD: tl.constexpr = tl.constexpr(slice_op.PAD)
P_EDGE: tl.constexpr = tl.constexpr(slice_op.EDGE)
P_REFLECT_1001: tl.constexpr = tl.constexpr(slice_op.REFLECT_1001)
P_REFLECT_101: tl.constexpr = tl.constexpr(slice_op.REFLECT_101)
P_WRAP: tl.constexpr = tl.constexpr(slice_op.WRAP)
TILE = 1024


@triton.jit
def _helper_fold(c, extent, POLICY: tl.constexpr):
    """Map source coordinates `c` into [0, extent) by the out-of-bounds policy."""
    if POLICY == P_WRAP:
        m = c % extent
        c = tl.where(m < 0, m + extent, m)
    elif POLICY == P_REFLECT_1001:
        period = 2 * extent
        m = c % period
        m = tl.where(m < 0, m + period, m)
        c = tl.where(m >= extent, period - 1 - m, m)
    elif POLICY == P_REFLECT_101:
        period = tl.maximum(2 * extent - 2, 1)
        m = c % period
        m = tl.where(m < 0, m + period, m)
        c = tl.where(m >= extent, period - m, m)
    else:  # edge; pad and in-bounds windows are clamped only to keep the address valid
        c = tl.minimum(tl.maximum(c, 0), tl.maximum(extent - 1, 0))
    return c


@triton.jit
def _slice_kernel(src, dst, fills, samples, tiles, channel_axis, BLOCK: tl.constexpr,
                  POLICY: tl.constexpr, CONVERT: tl.constexpr, LO: tl.constexpr,
                  HI: tl.constexpr, NANV: tl.constexpr, LO_F: tl.constexpr,
                  HI_F: tl.constexpr):  # fmt: skip
    """Gather one tile of one output window."""
    sample = tl.load(tiles + 2 * tl.program_id(0))
    first = tl.load(tiles + 2 * tl.program_id(0) + 1)
    row = samples + sample * NCOL
    idx = first + tl.arange(0, BLOCK).to(tl.int64)
    rem = idx
    src_idx = tl.zeros([BLOCK], dtype=tl.int64)
    fill_idx = tl.zeros([BLOCK], dtype=tl.int64)
    inside = idx >= 0
    stride = 1
    total = 1
    for d in tl.static_range(6):
        axis = 5 - d
        extent = tl.load(row + OUT_SHAPE + axis)
        in_extent = tl.load(row + IN_SHAPE + axis)
        coord = rem % extent
        rem = rem // extent
        c = tl.load(row + ANCHOR + axis) + coord
        inside = inside & (c >= 0) & (c < in_extent)
        fill_idx = tl.where(channel_axis == axis, coord, fill_idx)
        src_idx += _helper_fold(c, in_extent, POLICY) * stride
        stride = stride * in_extent
        total = total * extent
    mask = idx < total
    if POLICY == P_PAD:  # noqa: SIM108 (Triton constexpr branch)
        read = mask & inside
    else:
        read = mask
    val = tl.load(src + tl.load(row + IN_OFF) + src_idx, mask=read)
    if CONVERT:
        val = _helper_dali_convert(val, dst.dtype.element_ty, LO, HI, NANV, LO_F, HI_F)
    if POLICY == P_PAD:
        val = tl.where(inside, val, tl.load(fills + fill_idx, mask=mask))
    tl.store(dst + tl.load(row + OUT_OFF) + idx, val, mask=mask)


@register(slice_op.schema, "gpu")
def slice_gpu(run: GpuRun, out: GpuBatch, data: GpuBatch, anchor: object, shape: object,
              arg: Call) -> None:  # fmt: skip
    """Build the sample and tile tables and launch once."""
    anchors = np.zeros((data.batch_size, MAX_RANK), dtype=np.int64)
    ndim = data.shapes.shape[1]
    if ndim:
        anchors[:, MAX_RANK - ndim :] = arg.anchor_full
    samples = np.concatenate([data.offsets[:, None], out.offsets[:, None],
                              padded_shapes(out.shapes), padded_shapes(data.shapes), anchors],
                             axis=1)  # fmt: skip
    channel = arg.channel_axis + MAX_RANK - ndim if arg.channel_axis >= 0 else -1
    fills = np.ascontiguousarray(arg.fill, dtype=out.dtype.numpy_dtype).reshape(-1)
    tiles = tile_table(out.sizes, TILE)
    with np.errstate(over="ignore"):
        run.launch(_slice_kernel, (len(tiles),), data.data, out.data, fills, samples, tiles,
                   channel, BLOCK=TILE, POLICY=arg.policy_code,
                   **convert_meta(data.dtype, out.dtype))  # fmt: skip
