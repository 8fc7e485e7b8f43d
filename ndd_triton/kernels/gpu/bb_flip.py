"""bb_flip on the GPU: one launch; a program flips BLOCK boxes of one sample.

Box `k` of a sample is the 4 floats at `off + 4k`; corners as in the CPU kernel
(`r = x + w`, `l' = 1 - r`, `r' = 1 - l`, `w' = r' - l'`), fp32 without FMA.
"""

from __future__ import annotations

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
from ndd_triton.ops import bb_flip
from ndd_triton.ops.schema import Call

FLIP_X: tl.constexpr = tl.constexpr(R_NCOL)
FLIP_Y: tl.constexpr = tl.constexpr(R_NCOL + 1)
NCOL: tl.constexpr = tl.constexpr(R_NCOL + 2)


@triton.jit
def _helper_flip_axis(src, dst, i_off, o_off, lo_col: tl.constexpr, flip, mask,
                      LTRB: tl.constexpr):  # fmt: skip
    """One axis of the boxes: start column `lo_col`, end (or size) column `lo_col + 2`."""
    lo = tl.load(src + i_off + lo_col, mask=mask, other=0.0)
    second = tl.load(src + i_off + lo_col + 2, mask=mask, other=0.0)
    if LTRB:  # noqa: SIM108 (a constexpr branch)
        hi = second
    else:
        hi = lo + second
    new_lo = tl.where(flip, 1.0 - hi, lo)
    new_hi = tl.where(flip, 1.0 - lo, hi)
    tl.store(dst + o_off + lo_col, new_lo, mask=mask)
    if LTRB:
        tl.store(dst + o_off + lo_col + 2, new_hi, mask=mask)
    else:
        tl.store(dst + o_off + lo_col + 2, new_hi - new_lo, mask=mask)  # as DALI, also unflipped


@triton.jit
def _bb_flip_kernel(src, dst, samples, tiles, LTRB: tl.constexpr, BLOCK: tl.constexpr):
    """BLOCK boxes of one sample."""
    _, row, boxes, mask = _helper_row_tile(samples, tiles, NCOL, BLOCK)
    i_off = tl.load(row + R_IN) + boxes * 4
    o_off = tl.load(row + R_OUT) + boxes * 4
    _helper_flip_axis(src, dst, i_off, o_off, 0, tl.load(row + FLIP_X) != 0, mask, LTRB)
    _helper_flip_axis(src, dst, i_off, o_off, 1, tl.load(row + FLIP_Y) != 0, mask, LTRB)


@register(bb_flip.schema, "gpu", replay=True)
def bb_flip_gpu(run: GpuRun, out: GpuBatch, inp: GpuBatch, arg: Call) -> None:
    """Sample table (offsets, box count, flags) and one launch for the batch."""
    samples, tiles, block = row_plan(inp.offsets, out.offsets, inp.sizes // 4, arg.horizontal != 0,
                              arg.vertical != 0)  # fmt: skip
    run.launch(_bb_flip_kernel, (grid_of(tiles),), inp.data, out.data, samples, tiles,
               LTRB=bool(arg.ltrb), BLOCK=block)  # fmt: skip
