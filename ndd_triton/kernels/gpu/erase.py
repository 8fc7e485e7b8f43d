"""erase on the GPU: one row-tiled launch; each row tests the sample's regions (a runtime loop).

A sample is seen as rows (up to five outer axes), a column axis and, when the last axis has the
same extent 2..4 in every sample, a group axis of G (constexpr) elements (the channels of HWC),
so a row is the contiguous `W * C` run. Per region, the row test is done once per row (on the
outer axes the batch's rank has: NOUT, constexpr) and the column test compares the element
index with the region's bounds times G; only the group test takes `j % G` (constexpr), and only
when a region leaves out channels. The region table holds `(start, end)` per kernel axis (5
outer, column in elements, group), each sample's regions in a contiguous run (`FIRST`,
`COUNT`). The fill table has one row per sample in the sample type (`NF` values: 1, or one per
channel). The loaded tile is what the region loop carries and rewrites, so every element-wise
value keeps the load's vectorised layout (kernel report: 16-byte accesses, no shared memory).
"""

from __future__ import annotations

import numpy as np
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
from ndd_triton.kernels.gpu._window_rows import _helper_group_fill
from ndd_triton.ops import erase
from ndd_triton.ops.schema import Call

IN_OFF: tl.constexpr = tl.constexpr(0)
OUT_OFF: tl.constexpr = tl.constexpr(1)
FIRST: tl.constexpr = tl.constexpr(2)
COUNT: tl.constexpr = tl.constexpr(3)
NROWS: tl.constexpr = tl.constexpr(4)
ROWLEN: tl.constexpr = tl.constexpr(5)
EXT: tl.constexpr = tl.constexpr(6)  # 5 outer extents, outermost first
NCOL: tl.constexpr = tl.constexpr(11)
RCOL: tl.constexpr = tl.constexpr(14)  # region row: (start, end) of 5 outer, column, group
C_GROUP: tl.constexpr = tl.constexpr(6)
C_COLUMN: tl.constexpr = tl.constexpr(5)
NOUTER = 5


@triton.jit
def _helper_inside(o, reg, axis):
    """Whether coordinates `o` lie in the region's [start, end) on `axis`."""
    start = tl.load(reg + 2 * axis).to(o.dtype)
    return (o >= start) & (o < tl.load(reg + 2 * axis + 1).to(o.dtype))


@triton.jit
def _helper_outer(r, row, NOUT: tl.constexpr):
    """Row r's outer coordinates o0..o4 (o4 fastest). Only the NOUT innermost outer axes can
    exceed 1 in this batch: the others are 0, and the outermost of the NOUT needs no modulo
    (a coordinate tile per axis costs a register per row a thread holds)."""
    zero = r * 0
    o0, o1, o2, o3, o4 = zero, zero, zero, zero, r
    if NOUT > 1:
        e4 = tl.load(row + EXT + 4).to(r.dtype)
        o4 = r % e4
        o3 = r // e4
        if NOUT > 2:
            e3 = tl.load(row + EXT + 3).to(r.dtype)
            o2 = o3 // e3
            o3 = o3 % e3
            if NOUT > 3:
                e2 = tl.load(row + EXT + 2).to(r.dtype)
                o1 = o2 // e2
                o2 = o2 % e2
                if NOUT > 4:
                    e1 = tl.load(row + EXT + 1).to(r.dtype)
                    o0 = o1 // e1
                    o1 = o1 % e1
    return o0, o1, o2, o3, o4


@triton.jit
def _helper_rows_inside(o0, o1, o2, o3, o4, reg, NOUT: tl.constexpr):
    """Whether rows lie in the region on every outer axis that can exceed 1 (`_helper_outer`)."""
    inside = _helper_inside(o4, reg, 4)
    if NOUT > 1:
        inside = inside & _helper_inside(o3, reg, 3)
    if NOUT > 2:
        inside = inside & _helper_inside(o2, reg, 2)
    if NOUT > 3:
        inside = inside & _helper_inside(o1, reg, 1)
    if NOUT > 4:
        inside = inside & _helper_inside(o0, reg, 0)
    return inside


@triton.jit
def _erase_rows_kernel(src, dst, samples, regions, fills, tiles, G: tl.constexpr,
                       CH: tl.constexpr, NF: tl.constexpr, ALIGN: tl.constexpr,
                       IDX64: tl.constexpr, ROWS: tl.constexpr, BLOCK: tl.constexpr,
                       NOUT: tl.constexpr, FULL_GROUP: tl.constexpr):  # fmt: skip
    """ROWS x BLOCK elements of one sample: the fill inside one of its regions, else a copy.

    Row r unravels to outer coordinates o0..o4 (o4 fastest); element j of a row has column
    j // G and group index j % G (the column bounds are stored times G: no division; the
    group test only when some region leaves out channels: FULL_GROUP false). The region loop
    carries the loaded tile (a carried boolean tile was converted to the load's vectorised
    layout through shared memory).
    """
    ity = tl.int64 if IDX64 else tl.int32
    sample, t = _helper_find_tile(tiles)
    sample = sample.to(tl.int64)
    row = samples + sample * NCOL
    rowlen = tl.multiple_of(tl.load(row + ROWLEN).to(ity), ALIGN)
    r0, j0 = _helper_row_block(t.to(ity), rowlen, ROWS, BLOCK)
    r = r0 + tl.arange(0, ROWS)
    j = tl.multiple_of(j0, BLOCK) + tl.arange(0, BLOCK)
    mask = (r < tl.load(row + NROWS).to(ity))[:, None] & (j < rowlen)[None, :]
    offsets = tl.multiple_of(r * rowlen, ALIGN)[:, None] + j[None, :]
    base = tl.multiple_of(tl.load(row + IN_OFF), ALIGN)
    val = tl.load(src + base + offsets, mask=mask, other=0)
    o0, o1, o2, o3, o4 = _helper_outer(r, row, NOUT)
    g = j % G
    frow = fills + sample * NF
    if CH == C_GROUP:
        fill = _helper_group_fill(frow, g, G)[None, :]
    elif CH == C_COLUMN:
        fill = tl.load(frow + j // G, mask=j < rowlen, other=0)[None, :]
    elif CH >= 0:
        och = tl.where(CH == 0, o0, tl.where(CH == 1, o1, tl.where(CH == 2, o2, tl.where(
            CH == 3, o3, o4))))  # fmt: skip
        fill = tl.load(frow + och, mask=och < NF, other=0)[:, None]
    else:
        fill = tl.load(frow)
    first = tl.load(row + FIRST)
    for k in range(tl.load(row + COUNT)):
        reg = regions + (first + k) * RCOL
        rows_in = _helper_rows_inside(o0, o1, o2, o3, o4, reg, NOUT)
        cols_in = _helper_inside(j, reg, 5)
        if not FULL_GROUP:
            cols_in = cols_in & _helper_inside(g, reg, 6)
        val = tl.where(rows_in[:, None] & cols_in[None, :], fill, val)
    out = dst + tl.multiple_of(tl.load(row + OUT_OFF), ALIGN) + offsets
    tl.store(out, val, mask=mask)


def _pad_left(values: np.ndarray, rank: int, fill: int) -> np.ndarray:
    """`[..., rank]` values left-padded with `fill` along the last axis."""
    out = np.full((*values.shape[:-1], rank), fill, np.int64)
    if values.shape[-1]:
        out[..., rank - values.shape[-1] :] = values
    return out


def _group(shapes: np.ndarray) -> int:
    """G: the last axis' extent when it is 2..4 in every sample (and not the only axis)."""
    if shapes.shape[1] < 2 or not len(shapes):
        return 1
    extent = int(shapes[0, -1])
    return extent if (shapes[:, -1] == extent).all() and 2 <= extent <= 4 else 1


@register(erase.schema, "gpu", replay=True)
def erase_gpu(run: GpuRun, out: GpuBatch, inp: GpuBatch, call: Call) -> None:
    """Sample, region and fill tables; one launch."""
    n, ndim = inp.shapes.shape
    g = _group(inp.shapes)
    cols = ndim - 1 if g > 1 else ndim
    per_sample = [np.asarray(r, np.int64).reshape(-1, ndim, 2) for r in call.erase_regions]
    counts = np.array([len(r) for r in per_sample], np.int64)
    bounds = np.concatenate(per_sample) if counts.sum() else np.zeros((0, ndim, 2), np.int64)
    table = np.zeros((max(len(bounds), 1), NOUTER + 2, 2), np.int64)
    table[:, :, 1] = 1
    if len(bounds) and cols:
        starts, ends = bounds[:, :cols, 0], bounds[:, :cols, 1]
        table[: len(bounds), : NOUTER + 1, 0] = _pad_left(starts, NOUTER + 1, 0)
        table[: len(bounds), : NOUTER + 1, 1] = _pad_left(ends, NOUTER + 1, 1)
        table[: len(bounds), NOUTER] *= g  # column bounds in elements of the row
        if g > 1:
            table[: len(bounds), NOUTER + 1] = bounds[:, -1]
    extents = _pad_left(inp.shapes[:, :cols], NOUTER + 1, 1)
    rows, row_len = np.prod(extents[:, :NOUTER], axis=1), extents[:, NOUTER] * g
    firsts = np.cumsum(counts) - counts
    samples = np.concatenate([inp.offsets[:, None], out.offsets[:, None], firsts[:, None],
                              counts[:, None], rows[:, None], row_len[:, None],
                              extents[:, :NOUTER]], axis=1).astype(np.int64)  # fmt: skip
    nfill = max(np.asarray(f).size for f in call.erase_fill)
    fills = np.zeros((n, nfill), out.dtype.numpy_dtype)
    for i, f in enumerate(call.erase_fill):
        fills[i] = np.asarray(f).ravel()  # one value broadcasts over the row
    channel = call.erase_channel_axis
    ch = -1 if nfill == 1 or channel < 0 else 6 if channel >= cols else \
        5 if channel == cols - 1 else channel + NOUTER - (cols - 1)  # fmt: skip
    rows_per_tile, block = row_block(rows, row_len)
    tiles = tile_starts(row_tile_counts(rows, row_len, rows_per_tile, block))
    vec = max(16 // out.data.element_size(), 1)
    live = rows * row_len > 0
    aligned = not any((v[live] % vec).any() for v in (inp.offsets, out.offsets, row_len))
    run.launch(_erase_rows_kernel, (grid_of(tiles),), inp.data, out.data, samples,
               table.reshape(-1), fills, tiles, G=g, CH=ch, NF=nfill,
               ALIGN=vec if aligned else 1, IDX64=bool((rows * row_len >= 2**31).any()),
               ROWS=rows_per_tile, BLOCK=block, NOUT=max(cols - 1, 1),
               FULL_GROUP=_full_group(table, g))  # fmt: skip


def _full_group(table: np.ndarray, g: int) -> bool:
    """Whether every region spans the whole group axis (every channel of HWC, or no group
    axis): the kernel then skips the per-element group test."""
    group = table[:, NOUTER + 1]
    return g == 1 or bool(((group[:, 0] <= 0) & (group[:, 1] >= g)).all())
