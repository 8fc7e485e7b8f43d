"""grid_mask on the GPU: one launch; each element tests its pixel's grid cell (float32).

Samples of one channel count up to 4 (HW, HWC images) take the row kernel
(`_grid_mask_rows_kernel`): a program owns ROWS x BLOCK elements of a sample's rows (a row is
W * C elements), so y is the row, x one division by the constant C, and the row terms of the
cell test (b y, a y) are computed once per row; ~46 -> ~21 PTX instructions per element on
the bench batch (the last H100 run measured the element-stream kernel at 2.4x the copy
roofline, instruction-bound). Rows whose starts are 16-byte aligned load and store 16 bytes
per lane. Other channel counts take the element-stream kernel (`_stream.py`), whose pixel
comes from two int32 multiply-shift divisions (by C, then by W; `_broadcast.py`). Both
evaluate `u = (a x - b y) - tx`, `v = (b x + a y) - ty` in float32 in the same order (no FMA:
`_tables.LAUNCH_OPTIONS`), as the CPU kernel does.
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
from ndd_triton.kernels.gpu._tables import GpuBatch, GpuRun, row_block
from ndd_triton.kernels.gpu._tiles import (
    _helper_find_tile,
    _helper_row_tile,
    grid_of,
    row_tile_counts,
    tile_starts,
)
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


# the row kernel's sample table: input and output offsets, rows, elements per row
R_IN: tl.constexpr = tl.constexpr(0)
R_OUT: tl.constexpr = tl.constexpr(1)
R_H: tl.constexpr = tl.constexpr(2)
R_LEN: tl.constexpr = tl.constexpr(3)
R_NCOL: tl.constexpr = tl.constexpr(4)
ROWS_MAX_C = 4  # channel counts the row kernel is compiled for (one specialisation each)


@triton.jit
def _grid_mask_rows_kernel(src, dst, samples, ptable, tiles, C: tl.constexpr,
                           ALIGN: tl.constexpr, ROWS: tl.constexpr,
                           BLOCK: tl.constexpr):  # fmt: skip
    """ROWS x BLOCK elements of one sample's rows: 0 where the element's pixel (x = element
    // C, y = row) lies in a grid square, the input elsewhere. Int32 offsets within a sample
    (the host checks that they fit)."""
    sample, t = _helper_find_tile(tiles)
    sample = sample.to(tl.int64)
    row = samples + sample * R_NCOL
    h = tl.load(row + R_H).to(tl.int32)
    length = tl.multiple_of(tl.load(row + R_LEN).to(tl.int32), ALIGN)
    r, j, mask = _helper_row_tile(t, h, length, ROWS, BLOCK)
    prow = ptable + sample * NPAR
    a = tl.load(prow + 0)
    b = tl.load(prow + 1)
    x = (j // C).to(tl.float32)
    y = r.to(tl.float32)
    u = ((a * x)[None, :] - (b * y)[:, None]) - tl.load(prow + 2)
    v = ((b * x)[None, :] + (a * y)[:, None]) - tl.load(prow + 3)
    ratio = tl.load(prow + 4)
    hit = ((u - tl.floor(u)) < ratio) & ((v - tl.floor(v)) < ratio)
    offs = (r * length)[:, None] + j[None, :]
    src = src + tl.multiple_of(tl.load(row + R_IN), ALIGN)
    val = tl.load(src + offs, mask=mask, other=0)
    dst = dst + tl.multiple_of(tl.load(row + R_OUT), ALIGN)
    tl.store(dst + offs, tl.where(hit, tl.zeros_like(val), val), mask=mask)


def _rows_launch(run: GpuRun, out: GpuBatch, inp: GpuBatch, shapes: np.ndarray,
                 params: np.ndarray) -> bool:  # fmt: skip
    """Launch `_grid_mask_rows_kernel` when every sample has the same channel count, at most
    ROWS_MAX_C (else False, nothing launched)."""
    if not len(shapes):
        return False
    c = int(shapes[0, 2])
    if not 1 <= c <= ROWS_MAX_C or (shapes[:, 2] != c).any():
        return False
    h, length = shapes[:, 0], shapes[:, 1] * c
    vec = max(16 // out.data.element_size(), 1)
    live = h * length > 0
    aligned = not ((inp.offsets[live] % vec).any() or (out.offsets[live] % vec).any() or
                   (length[live] % vec).any())  # fmt: skip
    rows_per_tile, block = row_block(h, length)
    tiles = tile_starts(row_tile_counts(h, length, rows_per_tile, block))
    samples = np.stack([inp.offsets, out.offsets, h, length], axis=1).astype(np.int64)
    run.launch(_grid_mask_rows_kernel, (grid_of(tiles),), inp.data, out.data, samples, params,
               tiles, C=c, ALIGN=vec if aligned else 1, ROWS=rows_per_tile,
               BLOCK=block)  # fmt: skip
    return True


@register(grid_mask.schema, "gpu", replay=True)
def grid_mask_gpu(run: GpuRun, out: GpuBatch, inp: GpuBatch, call: Call) -> None:
    """Sample table, float parameter table; one launch."""
    shapes = inp.shapes if inp.shapes.shape[1] == 3 else \
        np.concatenate([inp.shapes, np.ones((inp.batch_size, 1), np.int64)], axis=1)  # fmt: skip
    if inp.batch_size and int(inp.sizes.max()) >= INT32_LIMIT:
        raise ValueError("grid_mask: GPU samples must have fewer than 2**31 elements")
    params = np.asarray(call.grid_params, np.float32)
    if _rows_launch(run, out, inp, shapes, params):
        return
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
        params,
        tiles,
        BLOCK=block,
        SAME=same,
    )
