"""multi_paste on the GPU: one row-tiled Triton launch; each canvas element takes the last
region that covers it (a runtime loop over its sample's run of the region table).

A program handles ROWS canvas rows x BLOCK elements of the contiguous `out_w * C` row. Per
region the row test and the row's source address are computed once per row, and the column
test compares the element index with `ox * C` and `(ox + w) * C`: no division per element
(C is constexpr). Several input batches are first packed into one buffer (`torch.cat`, a
device copy) so the kernel sees one source pointer; region rows carry absolute source offsets.
"""

from __future__ import annotations

import numpy as np
import torch
import triton
import triton.language as tl

from ndd_triton.kernels import register
from ndd_triton.kernels.gpu._tables import GpuBatch, GpuRun, row_block
from ndd_triton.kernels.gpu._tiles import (
    _helper_find_tile,
    _helper_row_block,
    grid_of,
    row_tile_counts,
    tile_starts,
)
from ndd_triton.ops import multi_paste
from ndd_triton.ops.schema import Call

OUT_OFF: tl.constexpr = tl.constexpr(0)
OUT_H: tl.constexpr = tl.constexpr(1)
ROWLEN: tl.constexpr = tl.constexpr(2)  # out_w * C
FIRST: tl.constexpr = tl.constexpr(3)
COUNT: tl.constexpr = tl.constexpr(4)
NCOL: tl.constexpr = tl.constexpr(5)
R_SRC: tl.constexpr = tl.constexpr(0)  # region row: source offset of the element that lands
R_ROW: tl.constexpr = tl.constexpr(1)  # on canvas (0, 0), source row length (in_w * C),
R_Y0: tl.constexpr = tl.constexpr(2)  # canvas rows [y0, y1) and row elements [x0 * C, x1 * C)
R_Y1: tl.constexpr = tl.constexpr(3)
R_X0: tl.constexpr = tl.constexpr(4)
R_X1: tl.constexpr = tl.constexpr(5)
NREG: tl.constexpr = tl.constexpr(6)


@triton.jit
def _multi_paste_kernel(src, dst, samples, regions, tiles, SAME: tl.constexpr,
                        ROUND: tl.constexpr, LO: tl.constexpr, HI: tl.constexpr,
                        ALIGN: tl.constexpr, ROWS: tl.constexpr, BLOCK: tl.constexpr):  # fmt: skip
    """ROWS x BLOCK canvas elements: the value of the last covering region, else 0.

    Canvas element (y, j) of a region reads src[R_SRC + y * R_ROW + j] (the region's source
    offset is shifted on the host so that one multiply-add per row addresses it).
    """
    sample, t = _helper_find_tile(tiles)
    sample = sample.to(tl.int64)
    row = samples + sample * NCOL
    rowlen = tl.multiple_of(tl.load(row + ROWLEN).to(tl.int32), ALIGN)
    y0, j0 = _helper_row_block(t, rowlen, ROWS, BLOCK)
    y = y0 + tl.arange(0, ROWS)
    j = tl.multiple_of(j0, BLOCK) + tl.arange(0, BLOCK)
    mask = (y < tl.load(row + OUT_H).to(tl.int32))[:, None] & (j < rowlen)[None, :]
    src_idx = tl.zeros([ROWS, BLOCK], dtype=tl.int64)
    hit = (y < 0)[:, None] & (j < 0)[None, :]
    r0 = tl.load(row + FIRST)
    for r in range(tl.load(row + COUNT)):
        reg = regions + (r0 + r) * NREG
        rows_in = (y >= tl.load(reg + R_Y0).to(tl.int32)) & (y < tl.load(reg + R_Y1).to(tl.int32))
        cols_in = (j >= tl.load(reg + R_X0).to(tl.int32)) & (j < tl.load(reg + R_X1).to(tl.int32))
        start = tl.load(reg + R_SRC) + y.to(tl.int64) * tl.load(reg + R_ROW)  # per row
        inside = rows_in[:, None] & cols_in[None, :]
        src_idx = tl.where(inside, start[:, None] + j[None, :], src_idx)
        hit = hit | inside
    val = tl.load(src + src_idx, mask=mask & hit, other=0)
    if not SAME:  # convert through float32 (round half away, saturate for integer outputs)
        val = val.to(tl.float32)
    if ROUND:
        val = tl.where(val < 0, tl.ceil(val - 0.5), tl.floor(val + 0.5))
        val = tl.minimum(tl.maximum(val, LO), HI)
    out_row = tl.multiple_of(y * rowlen, ALIGN)
    out = dst + tl.multiple_of(tl.load(row + OUT_OFF), ALIGN) + out_row[:, None] + j[None, :]
    tl.store(out, val.to(dst.dtype.element_ty), mask=mask)


def _store_alignment(out: GpuBatch, row_len: np.ndarray) -> int:
    """16 bytes' worth of elements when every canvas row starts at such a multiple, else 1."""
    vec = max(16 // out.data.element_size(), 1)
    live = row_len * out.shapes[:, 0] > 0
    aligned = not ((out.offsets[live] % vec).any() or (row_len[live] % vec).any())
    return vec if vec > 1 and aligned else 1


@register(multi_paste.schema, "gpu")
def multi_paste_gpu(run: GpuRun, out: GpuBatch, *args: object) -> None:
    """Pack the inputs, build sample and region tables, launch once."""
    call = args[-1]
    assert isinstance(call, Call)
    inputs = [b for b in args[:-1] if isinstance(b, GpuBatch)]
    bases = np.cumsum([0] + [int(b.data.numel()) for b in inputs])
    data = inputs[0].data if len(inputs) == 1 else torch.cat([b.data for b in inputs])
    table = np.asarray(call.paste_regions, np.int64).reshape(-1, 9)
    n = out.batch_size
    c = int(out.shapes[0, 2]) if n else 1
    counts = np.bincount(table[:, 0], minlength=n).astype(np.int64)
    firsts = np.cumsum(counts) - counts
    k, j, iy, ix, h, w, oy, ox = table[:, 1:].T
    # every input's samples in one list: input k's sample j is entry first[k] + j
    first = np.cumsum([0] + [b.batch_size for b in inputs])
    starts = zip(inputs, bases[:-1], strict=True)
    all_offsets = np.concatenate([b.offsets + base for b, base in starts])
    all_widths = np.concatenate([b.shapes[:, 1] for b in inputs]).astype(np.int64)
    offsets, in_w = all_offsets[first[k] + j], all_widths[first[k] + j]
    regions = np.zeros((max(len(table), 1), int(NREG)), np.int64)
    if len(table):  # source element of canvas (y, x): ((y - oy + iy) * in_w + x - ox + ix) * C
        regions[:len(table)] = np.stack([offsets + ((iy - oy) * in_w + ix - ox) * c, in_w * c,
                                         oy, oy + h, ox * c, (ox + w) * c], axis=1)  # fmt: skip
    samples = np.stack([out.offsets, out.shapes[:, 0], out.shapes[:, 1] * c, firsts, counts],
                       axis=1).astype(np.int64)  # fmt: skip
    rows, row_len = samples[:, 1], samples[:, 2]
    rows_per_tile, block = row_block(rows, row_len)
    tiles = tile_starts(row_tile_counts(rows, row_len, rows_per_tile, block))
    is_int = not out.dtype.is_float and data.dtype.is_floating_point
    info = np.iinfo(out.dtype.numpy_dtype) if not out.dtype.is_float else None
    run.launch(_multi_paste_kernel, (grid_of(tiles),), data, out.data, samples, regions, tiles,
               SAME=data.dtype == out.data.dtype, ROUND=is_int,
               LO=float(info.min) if info is not None else 0.0,
               HI=float(info.max) if info is not None else 0.0,
               ALIGN=_store_alignment(out, row_len), ROWS=rows_per_tile,
               BLOCK=block)  # fmt: skip
