"""grid_mask on the GPU: one streaming launch; each element tests its pixel's grid cell (float32).

The batch is a stream of elements (`_stream.py`): full tiles load and store 16 bytes per lane.
An element's pixel comes from its index inside the sample by two int32 multiply-shift
divisions (by C, then by W; `_broadcast.py`), not 64-bit `//` and `%`.
"""

from __future__ import annotations

import numpy as np
import triton
import triton.language as tl

from ndd_triton.kernels import register
from ndd_triton.kernels.gpu._broadcast import INT32_LIMIT, _helper_magic_div, magic_numbers
from ndd_triton.kernels.gpu._stream import (
    S_START,
    _helper_stream_tile,
    input_view,
    plan_stream,
)
from ndd_triton.kernels.gpu._tables import GpuBatch, GpuRun
from ndd_triton.ops import grid_mask
from ndd_triton.ops.schema import Call

# sample table after S_START, S_END: input delta, W, C and the division constants of C and W
DELTA: tl.constexpr = tl.constexpr(2)
W: tl.constexpr = tl.constexpr(3)
C: tl.constexpr = tl.constexpr(4)
C_MUL: tl.constexpr = tl.constexpr(5)
C_SHIFT: tl.constexpr = tl.constexpr(6)
W_MUL: tl.constexpr = tl.constexpr(7)
W_SHIFT: tl.constexpr = tl.constexpr(8)
NCOL: tl.constexpr = tl.constexpr(9)
NPAR: tl.constexpr = tl.constexpr(5)  # cos/tile sin/tile shift_x/tile shift_y/tile ratio


@triton.jit
def _helper_grid_hit(row, prow, start, lanes):
    """Whether the pixels of sample elements `start - S_START + lanes` lie in a grid square."""
    e = tl.maximum((start - tl.load(row + S_START)).to(tl.int32) + lanes, 0)
    pix = _helper_magic_div(e, tl.load(row + C_MUL), tl.load(row + C_SHIFT))
    yi = _helper_magic_div(pix, tl.load(row + W_MUL), tl.load(row + W_SHIFT))
    x = (pix - yi * tl.load(row + W).to(tl.int32)).to(tl.float32)
    y = yi.to(tl.float32)
    a = tl.load(prow + 0)
    b = tl.load(prow + 1)
    ratio = tl.load(prow + 4)
    u = a * x - b * y - tl.load(prow + 2)
    v = b * x + a * y - tl.load(prow + 3)
    return ((u - tl.floor(u)) < ratio) & ((v - tl.floor(v)) < ratio)


@triton.jit
def _grid_mask_kernel(src, dst, samples, ptable, tiles, BLOCK: tl.constexpr, SAME: tl.constexpr):
    """One stream tile of one sample: 0 inside a grid square, the input elsewhere.

    Element e of the sample (HWC): pixel e // C, x = pixel % W, y = pixel // W.
    """
    sample, row, start, lo, hi = _helper_stream_tile(tiles, samples, 0, NCOL, BLOCK, False)
    lanes = tl.arange(0, BLOCK)
    hit = _helper_grid_hit(row, ptable + sample * NPAR, start, lanes)
    if SAME:  # noqa: SIM108 (a static if: Triton compiles one branch)
        src = src + start
    else:
        src = src + (tl.load(row + DELTA) + start)
    if hi - lo == BLOCK:  # a full tile: unmasked, vectorised
        val = tl.load(src + lanes)
        tl.store(dst + start + lanes, tl.where(hit, tl.zeros_like(val), val))
    else:
        mask = (lanes >= (lo - start).to(tl.int32)) & (lanes < (hi - start).to(tl.int32))
        val = tl.load(src + lanes, mask=mask, other=0)
        tl.store(dst + start + lanes, tl.where(hit, tl.zeros_like(val), val), mask=mask)


@register(grid_mask.schema, "gpu", replay=True)
def grid_mask_gpu(run: GpuRun, out: GpuBatch, inp: GpuBatch, call: Call) -> None:
    """Sample table, float parameter table; one launch."""
    shapes = inp.shapes if inp.shapes.shape[1] == 3 else \
        np.concatenate([inp.shapes, np.ones((inp.batch_size, 1), np.int64)], axis=1)  # fmt: skip
    if inp.batch_size and int(inp.sizes.max()) >= INT32_LIMIT:
        raise ValueError("grid_mask: GPU samples must have fewer than 2**31 elements")
    w, c = shapes[:, 1], shapes[:, 2]
    c_mul, c_shift = magic_numbers(c)
    w_mul, w_shift = magic_numbers(w)
    block = 2048  # 16 elements per lane: the float cell test needs registers per element
    view, delta, same = input_view(inp, out)
    plan = plan_stream(out, block, global_ok=False)
    samples, tiles = plan.tables(delta, w, c, c_mul, c_shift, w_mul, w_shift)
    run.launch(
        _grid_mask_kernel,
        (plan.grid,),
        view,
        plan.out,
        samples,
        np.asarray(call.grid_params, np.float32),
        tiles,
        BLOCK=block,
        SAME=same,
    )
