"""erase on the GPU: one launch; each element tests the sample's regions (a runtime loop).

Shapes are left-padded to rank 6; the region table holds `(start, end)` per padded axis, with
each sample's regions in a contiguous run (`FIRST`, `COUNT` columns). The fill table has one
row per sample in the sample type (`NFILL` values: 1, or one per channel along `CH_AXIS`).
"""

from __future__ import annotations

import numpy as np
import triton
import triton.language as tl

from ndd_triton.kernels import register
from ndd_triton.kernels.gpu._common import MAX_RANK, padded_shapes
from ndd_triton.kernels.gpu._tables import GpuBatch, GpuRun, tile_table
from ndd_triton.ops import erase
from ndd_triton.ops.schema import Call

IN_OFF: tl.constexpr = tl.constexpr(0)
OUT_OFF: tl.constexpr = tl.constexpr(1)
FIRST: tl.constexpr = tl.constexpr(2)
COUNT: tl.constexpr = tl.constexpr(3)
SHAPE: tl.constexpr = tl.constexpr(4)  # 6 extents
NCOL: tl.constexpr = tl.constexpr(10)
TILE = 1024


@triton.jit
def _erase_kernel(src, dst, samples, regions, fills, tiles, CH_AXIS: tl.constexpr,
                  NFILL: tl.constexpr, BLOCK: tl.constexpr):  # fmt: skip
    """One tile: copy, or the fill where the element lies in one of the sample's regions."""
    sample = tl.load(tiles + 2 * tl.program_id(0))
    first = tl.load(tiles + 2 * tl.program_id(0) + 1)
    row = samples + sample * NCOL
    idx = first + tl.arange(0, BLOCK).to(tl.int64)
    e0 = tl.load(row + SHAPE + 0)
    e1 = tl.load(row + SHAPE + 1)
    e2 = tl.load(row + SHAPE + 2)
    e3 = tl.load(row + SHAPE + 3)
    e4 = tl.load(row + SHAPE + 4)
    e5 = tl.load(row + SHAPE + 5)
    mask = idx < e0 * e1 * e2 * e3 * e4 * e5
    c5 = idx % e5
    c4 = (idx // e5) % e4
    c3 = (idx // (e5 * e4)) % e3
    c2 = (idx // (e5 * e4 * e3)) % e2
    c1 = (idx // (e5 * e4 * e3 * e2)) % e1
    c0 = idx // (e5 * e4 * e3 * e2 * e1)
    hit = idx < 0
    r0 = tl.load(row + FIRST)
    for r in range(tl.load(row + COUNT)):
        reg = regions + (r0 + r) * 12
        inside = (c0 >= tl.load(reg + 0)) & (c0 < tl.load(reg + 1))
        inside = inside & (c1 >= tl.load(reg + 2)) & (c1 < tl.load(reg + 3))
        inside = inside & (c2 >= tl.load(reg + 4)) & (c2 < tl.load(reg + 5))
        inside = inside & (c3 >= tl.load(reg + 6)) & (c3 < tl.load(reg + 7))
        inside = inside & (c4 >= tl.load(reg + 8)) & (c4 < tl.load(reg + 9))
        inside = inside & (c5 >= tl.load(reg + 10)) & (c5 < tl.load(reg + 11))
        hit = hit | inside
    if NFILL == 1:
        fidx = idx * 0
    elif CH_AXIS == 5:
        fidx = c5
    elif CH_AXIS == 4:
        fidx = c4
    elif CH_AXIS == 3:
        fidx = c3
    elif CH_AXIS == 2:
        fidx = c2
    elif CH_AXIS == 1:
        fidx = c1
    else:
        fidx = c0
    fill = tl.load(fills + sample * NFILL + fidx, mask=mask & hit, other=0)
    val = tl.load(src + tl.load(row + IN_OFF) + idx, mask=mask & ~hit, other=0)
    tl.store(dst + tl.load(row + OUT_OFF) + idx, tl.where(hit, fill, val), mask=mask)


@register(erase.schema, "gpu")
def erase_gpu(run: GpuRun, out: GpuBatch, inp: GpuBatch, call: Call) -> None:
    """Sample, region and fill tables; one launch."""
    n = inp.batch_size
    ndim = inp.shapes.shape[1]
    pad = MAX_RANK - ndim
    per_sample = [np.asarray(r, np.int64).reshape(-1, ndim, 2) for r in call.erase_regions]
    counts = np.array([len(r) for r in per_sample], np.int64)
    table = np.zeros((max(int(counts.sum()), 1), MAX_RANK, 2), np.int64)
    table[:, :, 1] = 1
    if counts.sum():
        table[:, pad:] = np.concatenate(per_sample)
    firsts = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
    samples = np.concatenate([inp.offsets[:, None], out.offsets[:, None], firsts[:, None],
                              counts[:, None], padded_shapes(inp.shapes)], axis=1)  # fmt: skip
    nfill = max(np.asarray(f).size for f in call.erase_fill)
    fills = np.zeros((n, nfill), out.dtype.numpy_dtype)
    for i, f in enumerate(call.erase_fill):
        fills[i] = np.asarray(f).ravel()  # one value broadcasts over the row
    ch_axis = call.erase_channel_axis + pad if call.erase_channel_axis >= 0 else MAX_RANK - 1
    tiles = tile_table(inp.sizes, TILE)
    run.launch(
        _erase_kernel,
        (len(tiles),),
        inp.data,
        out.data,
        samples.astype(np.int64),
        table.reshape(-1),
        fills,
        tiles,
        CH_AXIS=ch_axis,
        NFILL=nfill,
        BLOCK=TILE,
    )
