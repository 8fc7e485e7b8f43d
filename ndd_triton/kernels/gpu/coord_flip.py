"""coord_flip on the GPU: one launch; a program flips BLOCK points of one sample.

Sample table: offsets, point count, one flip flag per column; float table: the centres by
column. D (1..3) is a constexpr.
"""

from __future__ import annotations

import numpy as np
import triton
import triton.language as tl

from ndd_triton.kernels import register
from ndd_triton.kernels.gpu._box_rows import (
    R_IN,
    R_NCOL,
    R_OUT,
    _helper_row_tile,
    row_plan,
)
from ndd_triton.kernels.gpu._tables import GpuBatch, GpuRun
from ndd_triton.kernels.gpu._tiles import grid_of
from ndd_triton.ops import coord_flip
from ndd_triton.ops.schema import Call

FLIP0: tl.constexpr = tl.constexpr(R_NCOL)  # flags of columns 0..D-1 follow
NCOL: tl.constexpr = tl.constexpr(R_NCOL + 3)


@triton.jit
def _coord_flip_kernel(src, dst, samples, centers, tiles, D: tl.constexpr, BLOCK: tl.constexpr):
    """BLOCK points of one sample: `where(flip, 2 * center - c, c)` per column."""
    s, row, points, mask = _helper_row_tile(samples, tiles, NCOL, BLOCK)
    i_off = tl.load(row + R_IN) + points * D
    o_off = tl.load(row + R_OUT) + points * D
    for c in tl.static_range(D):
        v = tl.load(src + i_off + c, mask=mask, other=0.0)
        flipped = 2.0 * tl.load(centers + 3 * s + c) - v
        v = tl.where(tl.load(row + FLIP0 + c) != 0, flipped, v)
        tl.store(dst + o_off + c, v, mask=mask)


@register(coord_flip.schema, "gpu", replay=True)
def coord_flip_gpu(run: GpuRun, out: GpuBatch, inp: GpuBatch, arg: Call) -> None:
    """Tables and one launch."""
    n, d = arg.column_flip.shape
    flags = np.zeros((n, 3), np.int64)
    flags[:, :d] = arg.column_flip
    centers = np.zeros((n, 3), np.float32)
    centers[:, :d] = arg.column_center
    rows = inp.shapes[:, 0] if inp.shapes.size else np.zeros(n, np.int64)
    samples, tiles, block = row_plan(inp.offsets, out.offsets, rows, *flags.T)
    run.launch(_coord_flip_kernel, (grid_of(tiles),), inp.data, out.data, samples, centers, tiles,
               D=d, BLOCK=block)  # fmt: skip
