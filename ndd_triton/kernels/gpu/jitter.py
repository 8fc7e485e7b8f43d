"""jitter on the GPU: one launch; per-pixel Philox offsets (key, base + 2 * pixel)."""

from __future__ import annotations

import numpy as np
import triton
import triton.language as tl

from ndd_triton.core.convert import convert_numpy
from ndd_triton.kernels import register
from ndd_triton.kernels.gpu._philox import _helper_philox_draw2
from ndd_triton.kernels.gpu._tables import GpuBatch, GpuRun, tile_table
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
TILE = 512


@triton.jit
def _jitter_kernel(src, dst, samples, tiles, fill, SPAN: tl.constexpr, HALF: tl.constexpr,
                   BLOCK: tl.constexpr):  # fmt: skip
    """One tile: out[y, x, ch] = in[y + dy, x + dx, ch] (fill outside), offsets per pixel."""
    sample = tl.load(tiles + 2 * tl.program_id(0))
    first = tl.load(tiles + 2 * tl.program_id(0) + 1)
    row = samples + sample * NCOL
    h = tl.load(row + H)
    w = tl.load(row + W)
    c = tl.load(row + C)
    idx = first + tl.arange(0, BLOCK).to(tl.int64)
    mask = idx < h * w * c
    pix = idx // c
    k0 = tl.load(row + KEY_LO).to(tl.uint32)
    k1 = tl.load(row + KEY_HI).to(tl.uint32)
    base = tl.load(row + BASE).to(tl.uint64, bitcast=True)
    u0, u1 = _helper_philox_draw2(k0, k1, base + 2 * pix.to(tl.uint64))
    dx = (((u0 >> 8).to(tl.uint64) * SPAN) >> 24).to(tl.int64) - HALF
    dy = (((u1 >> 8).to(tl.uint64) * SPAN) >> 24).to(tl.int64) - HALF
    keep = tl.load(row + MASK) == 0
    dx = tl.where(keep, 0, dx)
    dy = tl.where(keep, 0, dy)
    x = pix % w + dx
    y = pix // w + dy
    inside = (x >= 0) & (x < w) & (y >= 0) & (y < h)
    val = tl.load(
        src + tl.load(row + IN_OFF) + (y * w + x) * c + idx % c, mask=mask & inside, other=0
    )
    val = tl.where(inside, val, tl.load(fill))
    tl.store(dst + tl.load(row + OUT_OFF) + idx, val, mask=mask)


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
    tiles = tile_table(inp.sizes, TILE)
    degree = int(call.nDegree)
    run.launch(
        _jitter_kernel,
        (len(tiles),),
        inp.data,
        out.data,
        samples,
        tiles,
        fill,
        SPAN=degree + 1,
        HALF=degree // 2,
        BLOCK=TILE,
    )
