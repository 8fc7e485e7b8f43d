"""pad on the GPU: one launch for the whole ragged batch, any rank up to 6.

Each program writes one tile of one output sample: the flat output index is unravelled over
the padded output shape; coordinates inside the input copy the input element, the others get
the sample's fill value (stored in the output dtype, so integer wrap-around is exact).
"""

from __future__ import annotations

import numpy as np
import triton
import triton.language as tl

from ndd_triton.kernels import register
from ndd_triton.kernels.gpu._common import padded_shapes
from ndd_triton.kernels.gpu._tables import GpuBatch, GpuRun, tile_table
from ndd_triton.ops import pad
from ndd_triton.ops.schema import Call

IN_OFF: tl.constexpr = tl.constexpr(0)
OUT_OFF: tl.constexpr = tl.constexpr(1)
OUT_SHAPE: tl.constexpr = tl.constexpr(2)  # 6 extents
IN_SHAPE: tl.constexpr = tl.constexpr(8)  # 6 extents
NCOL: tl.constexpr = tl.constexpr(14)
TILE = 1024


@triton.jit
def _pad_kernel(src, dst, fills, samples, tiles, BLOCK: tl.constexpr):
    """Copy or fill one tile of one padded sample."""
    sample = tl.load(tiles + 2 * tl.program_id(0))
    first = tl.load(tiles + 2 * tl.program_id(0) + 1)
    row = samples + sample * NCOL
    idx = first + tl.arange(0, BLOCK).to(tl.int64)
    rem = idx
    src_idx = tl.zeros([BLOCK], dtype=tl.int64)
    inside = idx >= 0
    stride = 1
    total = 1
    for d in tl.static_range(6):
        axis = 5 - d
        extent = tl.load(row + OUT_SHAPE + axis)
        in_extent = tl.load(row + IN_SHAPE + axis)
        coord = rem % extent
        rem = rem // extent
        inside = inside & (coord < in_extent)
        src_idx += coord * stride
        stride = stride * in_extent
        total = total * extent
    mask = idx < total
    val = tl.load(src + tl.load(row + IN_OFF) + src_idx, mask=mask & inside)
    fill = tl.load(fills + sample)
    tl.store(dst + tl.load(row + OUT_OFF) + idx, tl.where(inside, val, fill), mask=mask)


@register(pad.schema, "gpu")
def pad_gpu(run: GpuRun, out: GpuBatch, inp: GpuBatch, arg: Call) -> None:
    """Build the sample and tile tables and launch once."""
    columns = [
        inp.offsets[:, None],
        out.offsets[:, None],
        padded_shapes(out.shapes),
        padded_shapes(inp.shapes),
    ]
    samples = np.concatenate(columns, axis=1)
    fills = np.ascontiguousarray(arg.fill, dtype=out.dtype.numpy_dtype).reshape(-1)
    tiles = tile_table(out.sizes, TILE)
    run.launch(_pad_kernel, (len(tiles),), inp.data, out.data, fills, samples, tiles, BLOCK=TILE)
