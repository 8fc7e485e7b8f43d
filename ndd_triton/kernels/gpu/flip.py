"""flip on the GPU: one launch for the whole ragged batch, any layout up to rank 6.

Each program copies one tile of one sample: the flat output index is unravelled over the
sample's (left-padded) shape, flipped axes are mirrored, and the source index is ravelled back.
"""

from __future__ import annotations

import numpy as np
import triton
import triton.language as tl

from ndd_triton.kernels import register
from ndd_triton.kernels.gpu._common import MAX_RANK, padded_shapes
from ndd_triton.kernels.gpu._tables import GpuBatch, GpuRun, tile_table
from ndd_triton.ops import flip
from ndd_triton.ops.schema import Call

IN_OFF: tl.constexpr = tl.constexpr(0)
OUT_OFF: tl.constexpr = tl.constexpr(1)
SHAPE: tl.constexpr = tl.constexpr(2)  # 6 extents
FLIPS: tl.constexpr = tl.constexpr(8)  # 6 flags
NCOL: tl.constexpr = tl.constexpr(14)
TILE = 1024


@triton.jit
def _flip_kernel(src, dst, samples, tiles, BLOCK: tl.constexpr):
    """Copy one tile of one sample, mirroring the flagged axes."""
    sample = tl.load(tiles + 2 * tl.program_id(0))
    first = tl.load(tiles + 2 * tl.program_id(0) + 1)
    row = samples + sample * NCOL
    idx = first + tl.arange(0, BLOCK).to(tl.int64)
    rem = idx
    src_idx = tl.zeros([BLOCK], dtype=tl.int64)
    stride = 1
    total = 1
    for d in tl.static_range(6):
        axis = 5 - d
        extent = tl.load(row + SHAPE + axis)
        coord = rem % extent
        rem = rem // extent
        coord = tl.where(tl.load(row + FLIPS + axis) != 0, extent - 1 - coord, coord)
        src_idx += coord * stride
        stride = stride * extent
        total = total * extent
    mask = idx < total
    val = tl.load(src + tl.load(row + IN_OFF) + src_idx, mask=mask)
    tl.store(dst + tl.load(row + OUT_OFF) + idx, val, mask=mask)


@register(flip.schema, "gpu")
def flip_gpu(run: GpuRun, out: GpuBatch, inp: GpuBatch, arg: Call) -> None:
    """Build the sample and tile tables and launch once."""
    layout = arg.inputs[0].layout or ""
    n = inp.batch_size
    flags = np.zeros((n, MAX_RANK), dtype=np.int64)
    offset = MAX_RANK - len(layout)
    for name, values in (("W", arg.horizontal), ("H", arg.vertical), ("D", arg.depthwise)):
        if name in layout:
            flags[:, offset + layout.index(name)] = np.asarray(values) != 0
    samples = np.concatenate([inp.offsets[:, None], out.offsets[:, None],
                              padded_shapes(inp.shapes), flags], axis=1)  # fmt: skip
    tiles = tile_table(inp.sizes, TILE)
    run.launch(_flip_kernel, (len(tiles),), inp.data, out.data, samples, tiles, BLOCK=TILE)
