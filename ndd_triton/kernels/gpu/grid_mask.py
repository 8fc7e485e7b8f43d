"""grid_mask on the GPU: one launch; each element tests its pixel's grid cell (float32)."""

from __future__ import annotations

import numpy as np
import triton
import triton.language as tl

from ndd_triton.kernels import register
from ndd_triton.kernels.gpu._tables import GpuBatch, GpuRun, tile_table
from ndd_triton.ops import grid_mask
from ndd_triton.ops.schema import Call

IN_OFF: tl.constexpr = tl.constexpr(0)
OUT_OFF: tl.constexpr = tl.constexpr(1)
H: tl.constexpr = tl.constexpr(2)
W: tl.constexpr = tl.constexpr(3)
C: tl.constexpr = tl.constexpr(4)
NCOL: tl.constexpr = tl.constexpr(5)
NPAR: tl.constexpr = tl.constexpr(5)  # cos/tile sin/tile shift_x/tile shift_y/tile ratio
TILE = 1024


@triton.jit
def _grid_mask_kernel(src, dst, samples, ptable, tiles, BLOCK: tl.constexpr):
    """One tile: 0 inside a grid square, the input elsewhere."""
    sample = tl.load(tiles + 2 * tl.program_id(0))
    first = tl.load(tiles + 2 * tl.program_id(0) + 1)
    row = samples + sample * NCOL
    prow = ptable + sample * NPAR
    w = tl.load(row + W)
    c = tl.load(row + C)
    idx = first + tl.arange(0, BLOCK).to(tl.int64)
    mask = idx < tl.load(row + H) * w * c
    x = ((idx // c) % w).to(tl.float32)
    y = (idx // (c * w)).to(tl.float32)
    a = tl.load(prow + 0)
    b = tl.load(prow + 1)
    ratio = tl.load(prow + 4)
    u = a * x - b * y - tl.load(prow + 2)
    v = b * x + a * y - tl.load(prow + 3)
    hit = ((u - tl.floor(u)) < ratio) & ((v - tl.floor(v)) < ratio)
    val = tl.load(src + tl.load(row + IN_OFF) + idx, mask=mask & ~hit, other=0)
    tl.store(dst + tl.load(row + OUT_OFF) + idx, val, mask=mask)


@register(grid_mask.schema, "gpu")
def grid_mask_gpu(run: GpuRun, out: GpuBatch, inp: GpuBatch, call: Call) -> None:
    """Sample table, float parameter table; one launch."""
    shapes = inp.shapes if inp.shapes.shape[1] == 3 else \
        np.concatenate([inp.shapes, np.ones((inp.batch_size, 1), np.int64)], axis=1)  # fmt: skip
    samples = np.concatenate([inp.offsets[:, None], out.offsets[:, None], shapes],
                             axis=1).astype(np.int64)  # fmt: skip
    tiles = tile_table(inp.sizes, TILE)
    run.launch(
        _grid_mask_kernel,
        (len(tiles),),
        inp.data,
        out.data,
        samples,
        np.asarray(call.grid_params, np.float32),
        tiles,
        BLOCK=TILE,
    )
