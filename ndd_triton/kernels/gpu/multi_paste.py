"""multi_paste on the GPU: one Triton launch; each canvas element finds the last region that
covers it (a runtime loop over its sample's run of the region table).

Several input batches are first packed into one buffer (`torch.cat`, a device copy) so the
kernel sees one source pointer; region rows carry absolute source offsets.
"""

from __future__ import annotations

import numpy as np
import torch
import triton
import triton.language as tl

from ndd_triton.kernels import register
from ndd_triton.kernels.gpu._tables import GpuBatch, GpuRun, tile_table
from ndd_triton.ops import multi_paste
from ndd_triton.ops.schema import Call

OUT_OFF: tl.constexpr = tl.constexpr(0)
OUT_H: tl.constexpr = tl.constexpr(1)
OUT_W: tl.constexpr = tl.constexpr(2)
FIRST: tl.constexpr = tl.constexpr(3)
COUNT: tl.constexpr = tl.constexpr(4)
NCOL: tl.constexpr = tl.constexpr(5)
R_SRC: tl.constexpr = tl.constexpr(0)  # region row: source sample offset, source width,
R_IN_W: tl.constexpr = tl.constexpr(1)  # source top-left, extents, destination top-left
R_IY: tl.constexpr = tl.constexpr(2)
R_IX: tl.constexpr = tl.constexpr(3)
R_H: tl.constexpr = tl.constexpr(4)
R_W: tl.constexpr = tl.constexpr(5)
R_OY: tl.constexpr = tl.constexpr(6)
R_OX: tl.constexpr = tl.constexpr(7)
NREG: tl.constexpr = tl.constexpr(8)
TILE = 1024


@triton.jit
def _multi_paste_kernel(src, dst, samples, regions, tiles, C: tl.constexpr,
                        SAME: tl.constexpr, ROUND: tl.constexpr, LO: tl.constexpr,
                        HI: tl.constexpr, BLOCK: tl.constexpr):  # fmt: skip
    """One canvas tile: the value of the last covering region, else 0."""
    sample = tl.load(tiles + 2 * tl.program_id(0))
    first = tl.load(tiles + 2 * tl.program_id(0) + 1)
    row = samples + sample * NCOL
    out_w = tl.load(row + OUT_W)
    idx = first + tl.arange(0, BLOCK).to(tl.int64)
    mask = idx < tl.load(row + OUT_H) * out_w * C
    ch = idx % C
    x = (idx // C) % out_w
    y = idx // (C * out_w)
    src_idx = idx * 0
    hit = idx < 0
    r0 = tl.load(row + FIRST)
    for r in range(tl.load(row + COUNT)):
        reg = regions + (r0 + r) * NREG
        dy = y - tl.load(reg + R_OY)
        dx = x - tl.load(reg + R_OX)
        inside = (dy >= 0) & (dy < tl.load(reg + R_H)) & (dx >= 0) & (dx < tl.load(reg + R_W))
        at = (
            tl.load(reg + R_SRC)
            + ((dy + tl.load(reg + R_IY)) * tl.load(reg + R_IN_W) + dx + tl.load(reg + R_IX)) * C
            + ch
        )
        src_idx = tl.where(inside, at, src_idx)
        hit = hit | inside
    val = tl.load(src + src_idx, mask=mask & hit, other=0)
    if not SAME:  # convert through float32 (round half away, saturate for integer outputs)
        val = val.to(tl.float32)
    if ROUND:
        val = tl.where(val < 0, tl.ceil(val - 0.5), tl.floor(val + 0.5))
        val = tl.minimum(tl.maximum(val, LO), HI)
    tl.store(dst + tl.load(row + OUT_OFF) + idx, val.to(dst.dtype.element_ty), mask=mask)


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
    counts = np.bincount(table[:, 0], minlength=n).astype(np.int64)
    firsts = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
    regions = np.zeros((max(len(table), 1), int(NREG)), np.int64)
    for r, (_, k, j, iy, ix, h, w, oy, ox) in enumerate(table.tolist()):
        regions[r] = (bases[k] + inputs[k].offsets[j], inputs[k].shapes[j, 1], iy, ix, h, w, oy, ox)
    samples = np.stack([out.offsets, out.shapes[:, 0], out.shapes[:, 1], firsts, counts],
                       axis=1).astype(np.int64)  # fmt: skip
    tiles = tile_table(out.sizes, TILE)
    is_int = not out.dtype.is_float and data.dtype.is_floating_point
    info = np.iinfo(out.dtype.numpy_dtype) if not out.dtype.is_float else None
    run.launch(_multi_paste_kernel, (len(tiles),), data, out.data, samples, regions, tiles,
               C=int(out.shapes[0, 2]) if n else 1, SAME=data.dtype == out.data.dtype,
               ROUND=is_int,
               LO=float(info.min) if info is not None else 0.0,
               HI=float(info.max) if info is not None else 0.0, BLOCK=TILE)  # fmt: skip
