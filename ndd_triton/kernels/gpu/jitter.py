"""jitter on the GPU: one launch; per-pixel Philox offsets (key, base + 2 * pixel).

Each program covers a block of BY rows of one sample and walks them BX pixels at a time (it
finds its sample and its row and column block from a per-sample table: `_tiles`); each lane is one
output pixel: one Philox block gives its two draws, and it copies its CH channels (constexpr
when the batch has one channel count <= 4) from the source pixel. Addresses inside a sample are
int32 (int64 only for huge samples, I64); the Philox counter stays uint64.
"""

from __future__ import annotations

import numpy as np
import triton
import triton.language as tl

from ndd_triton.core.convert import convert_numpy
from ndd_triton.kernels import register
from ndd_triton.kernels.gpu._philox import _helper_philox_draw2
from ndd_triton.kernels.gpu._tables import GpuBatch, GpuRun
from ndd_triton.kernels.gpu._tiles import (
    _helper_find_tile,
    _helper_row_block,
    block_tile_counts,
    grid_of,
    tile_starts,
)
from ndd_triton.ops import jitter
from ndd_triton.ops.schema import Call

IN_OFF: tl.constexpr = tl.constexpr(0)
OUT_OFF: tl.constexpr = tl.constexpr(1)
H: tl.constexpr = tl.constexpr(2)
W: tl.constexpr = tl.constexpr(3)
C: tl.constexpr = tl.constexpr(4)
MASK: tl.constexpr = tl.constexpr(5)
BASE: tl.constexpr = tl.constexpr(6)  # uint64 bits
KEY_LO: tl.constexpr = tl.constexpr(7)
KEY_HI: tl.constexpr = tl.constexpr(8)
NCOL: tl.constexpr = tl.constexpr(9)
# Program shape: BY rows x BX pixels per step (4 warps), up to SPAN pixels per program (row
# segments measured fastest on an H100: 1x128 71 us, 2x64 77 us for 32 480x640x3 images).
BLOCK_Y, BLOCK_X, SPAN = 1, 128, 256
I32_LIMIT = 2**31


@triton.jit
def _jitter_kernel(src, dst, samples, tiles, fill, SPAN_DRAWS: tl.constexpr, HALF: tl.constexpr,
                   CH: tl.constexpr, I64: tl.constexpr, BY: tl.constexpr, BX: tl.constexpr,
                   SPAN: tl.constexpr):  # fmt: skip
    """Rows of one sample: out[y, x, ch] = in[y + dy, x + dx, ch] (fill outside), offsets per
    pixel from Philox draws `base + 2 * (y * w + x)` and the next one."""
    # program -> sample, rows y0 + [0, BY), columns x0 + [0, SPAN); lane (r, i) of a step at
    # column xb -> output pixel (xb + i, y0 + r), all its channels (one draw pair per pixel)
    sample, t = _helper_find_tile(tiles)
    row = samples + sample * NCOL
    h = tl.load(row + H)
    w = tl.load(row + W)
    y0, x0 = _helper_row_block(t, w.to(tl.int32), BY, SPAN)
    if CH > 0:  # noqa: SIM108 (constexpr: one channel count in the batch, checked by the host)
        nch = CH
    else:
        nch = tl.load(row + C)
    k0 = tl.load(row + KEY_LO).to(tl.uint32)
    k1 = tl.load(row + KEY_HI).to(tl.uint32)
    base = tl.load(row + BASE).to(tl.uint64, bitcast=True)
    keep = tl.load(row + MASK) == 0
    fill_value = tl.load(fill)
    idx_t = tl.int64 if I64 else tl.int32
    sw = w.to(idx_t)
    img = src + tl.load(row + IN_OFF)
    lx = tl.arange(0, BX)[None, :]
    ys = y0 + tl.arange(0, BY)[:, None]
    row_ok = ys < h
    dst_row = dst + tl.load(row + OUT_OFF) + ys.to(idx_t) * sw * nch
    x_end = tl.minimum(x0 + SPAN, w).to(tl.int32)
    for xb in range(x0, x_end, BX):
        xs = xb + lx
        mask = row_ok & (xs < x_end)
        pix = ys.to(tl.uint64) * w.to(tl.uint64) + xs.to(tl.uint64)
        u0, u1 = _helper_philox_draw2(k0, k1, base + 2 * pix)
        dx = (((u0 >> 8).to(tl.uint64) * SPAN_DRAWS) >> 24).to(tl.int64) - HALF
        dy = (((u1 >> 8).to(tl.uint64) * SPAN_DRAWS) >> 24).to(tl.int64) - HALF
        dx = tl.where(keep, 0, dx)
        dy = tl.where(keep, 0, dy)
        x = xs + dx
        y = ys + dy
        inside = (x >= 0) & (x < w) & (y >= 0) & (y < h)
        at = img + ((tl.where(inside, y, 0).to(idx_t) * sw + tl.where(inside, x, 0).to(idx_t))
                    * nch)  # fmt: skip
        out = dst_row + xs.to(idx_t) * nch
        for ch in range(nch):
            val = tl.load(at + ch, mask=mask & inside, other=0)
            val = tl.where(inside, val, fill_value)
            tl.store(out + ch, val, mask=mask)


@register(jitter.schema, "gpu")
def jitter_gpu(run: GpuRun, out: GpuBatch, inp: GpuBatch, call: Call) -> None:
    """Sample table with Philox key and bases; one launch."""
    n = inp.batch_size
    samples = np.zeros((n, int(NCOL)), np.int64)
    samples[:, 0], samples[:, 1] = inp.offsets, out.offsets
    samples[:, 2:5] = inp.shapes
    samples[:, int(MASK)] = np.asarray(call.mask, np.int64).reshape(-1)
    samples[:, int(BASE)] = np.asarray(call.rng_base, dtype=np.uint64).view(np.int64)
    samples[:, int(KEY_LO)] = call.rng_key & 0xFFFFFFFF
    samples[:, int(KEY_HI)] = call.rng_key >> 32
    fill = convert_numpy(np.array([call.fill_value], np.float64), out.dtype.numpy_dtype)
    channels = inp.shapes[:, 2]
    uniform = n > 0 and bool((channels == channels[0]).all()) and 1 <= channels[0] <= 4
    counts = block_tile_counts(channels > 0, inp.shapes[:, 0], inp.shapes[:, 1], BLOCK_Y, SPAN)
    tiles = tile_starts(counts)
    big = int(inp.sizes.max(initial=0)) >= I32_LIMIT
    degree = int(call.nDegree)
    run.launch(_jitter_kernel, (grid_of(tiles),), inp.data, out.data, samples, tiles, fill,
               SPAN_DRAWS=degree + 1, HALF=degree // 2, CH=int(channels[0]) if uniform else 0,
               I64=big, BY=BLOCK_Y, BX=BLOCK_X, SPAN=SPAN)  # fmt: skip
