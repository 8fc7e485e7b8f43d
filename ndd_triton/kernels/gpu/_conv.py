"""Tiled dense 1-3-D correlation on the GPU (filter), plus helpers shared with the separable passes.

One launch covers the whole ragged batch. Each sample is seen as `[outer, D, H, W, inner]`
(see kernels/_conv_tables.py); a program computes a `[BY, BX]` output block of one
`(outer, z)` plane: BY rows by BX contiguous elements of the channel-interleaved row (`x·C + c`).
Per tap the input window of the block is one 2-D load; the weight is a scalar load, zero weights
are skipped (as OpenCV's and the CPU kernel's dense filters do). Blocks whose whole window lies
inside the sample read it directly; only edge blocks map coordinates through the border rule
(cheap folds; an int32 `%` only where the kernel reaches further than the sample is long).
Coordinates and extents are int32 (a row and the row count of a sample stay below 2^31); only
row offsets (row index x row length) are int64, for samples of 2^31+ elements (IDX64), so no
64-bit division or remainder is ever compiled; the sample base is int64. Summation order:
`acc = fma(x, w, acc)` over the taps in row-major order, starting from 0, which is OpenCV's
`filter2D` (float32, FMA on x86) and the CPU kernel's torch path.
"""

from __future__ import annotations

import numpy as np
import triton
import triton.language as tl

from ndd_triton.kernels._conv_tables import BORDERS
from ndd_triton.kernels.gpu._tables import GpuBatch, GpuRun
from ndd_triton.kernels.gpu._tiles import (
    _helper_find_tile,
    _helper_plane_block,
    block_tile_counts,
    grid_of,
    tile_starts,
)
from ndd_triton.kernels.gpu.color import _helper_store_converted, dtype_bounds

IN_OFF: tl.constexpr = tl.constexpr(0)
OUT_OFF: tl.constexpr = tl.constexpr(1)
IDIMS: tl.constexpr = tl.constexpr(2)  # input D, H, W
ODIMS: tl.constexpr = tl.constexpr(5)  # output D, H, W
KDIMS: tl.constexpr = tl.constexpr(8)  # kernel D, H, W
ANCHOR: tl.constexpr = tl.constexpr(11)  # anchor D, H, W
CHANNELS: tl.constexpr = tl.constexpr(14)
W_OFF: tl.constexpr = tl.constexpr(15)
FILL_OFF: tl.constexpr = tl.constexpr(16)
NCOL: tl.constexpr = tl.constexpr(17)
CONSTANT: tl.constexpr = tl.constexpr(4)
# rounding of the stored result: float output, half away from zero, ties to even, or
# "biased" (the +0.5 already added by the producer, as OpenCV's `delta`: clamp and truncate)
ROUND_NONE, ROUND_HALF_AWAY, ROUND_EVEN, ROUND_BIASED = 0, 1, 2, 3
BLOCK_ELEMENTS = 2048  # outputs per program
MAX_BX = 256
INT32_LIMIT = 2**31


@triton.jit
def _helper_border(p, n, wide, BORDER: tl.constexpr):
    """Map int coordinates `p` into [0, n) by the border rule; `ok` is False where fill applies.

    One fold covers `-n < p < 2n - 1`; `wide` (the window reaches further) takes the periodic
    form first, an int32 `%` (only samples smaller than the window get there).
    BORDER: 0 reflect_101, 1 reflect_1001, 2 wrap, 3 clamp, 4 constant.
    """
    ok = p == p
    if BORDER == 0:  # ... c b | a b c d | c b ...
        m = n - 1
        if wide:
            p = tl.abs(p) % tl.maximum(2 * m, 1)
        p = m - tl.abs(m - tl.abs(p))
    elif BORDER == 1:  # ... b a | a b c d | d c ...
        p = tl.where(p < 0, -1 - p, p)
        if wide:
            p = p % (2 * n)
        p = tl.minimum(p, 2 * n - 1 - p)
    elif BORDER == 2:  # ... c d | a b c d | a b ...
        if wide:
            p = p % n
        p = tl.where(p < 0, p + n, p)
        p = tl.where(p >= n, p - n, p)
    elif BORDER == 3:
        p = tl.minimum(tl.maximum(p, 0), n - 1)
    else:
        ok = (p >= 0) & (p < n)
        p = tl.minimum(tl.maximum(p, 0), n - 1)
    return p, ok


@triton.jit
def _helper_store_rounded(ptrs, value, mask, ROUND: tl.constexpr, LO: tl.constexpr,
                          HI: tl.constexpr):  # fmt: skip
    """Store fp32 `value` as the pointee type, rounded by ROUND (see ROUND_* above)."""
    if ROUND == 3:  # value already holds +0.5 (unsigned outputs): clamp, then truncate
        value = tl.floor(tl.minimum(tl.maximum(value, 0.5), HI + 0.5))
        tl.store(ptrs, value.to(ptrs.dtype.element_ty), mask=mask)
    else:
        _helper_store_converted(ptrs, value, mask, ROUND != 0, LO, HI, ROUND == 2)


@triton.jit
def _helper_load3(ptr):
    """Three consecutive table entries (D, H, W) as int32 (extents and coordinates always fit;
    only element offsets need int64, see `_correlate_kernel`)."""
    return tl.load(ptr).to(tl.int32), tl.load(ptr + 1).to(tl.int32), tl.load(ptr + 2).to(tl.int32)


@triton.jit
def _correlate_kernel(src, dst, weights, fill, samples, tiles, BORDER: tl.constexpr,
                      HAS_FILL: tl.constexpr, ROUND: tl.constexpr, LO: tl.constexpr,
                      HI: tl.constexpr, C: tl.constexpr, ALIGNED: tl.constexpr,
                      IDX64: tl.constexpr, BY: tl.constexpr, BX: tl.constexpr):  # fmt: skip
    """One [BY, BX] block of one output plane (o, z): rows y, row elements e = x·C + c.

    out[o, z, y, x, c] = Σ_{i,j,l} w[i, j, l] · in[o, z - az + i, y - ay + j, x - ax + l, c]
    (coordinates through the border rule; row-major tap order).
    """
    ity = tl.int64 if IDX64 else tl.int32
    sample, t = _helper_find_tile(tiles)
    row = samples + sample * NCOL
    d, h, w = _helper_load3(row + IDIMS)
    od, oh, ow = _helper_load3(row + ODIMS)
    kd, kh, kw = _helper_load3(row + KDIMS)
    az, ay, ax = _helper_load3(row + ANCHOR)
    if C > 0:  # noqa: SIM108 (a constexpr branch: only one side is compiled)
        ch = C
    else:
        ch = tl.load(row + CHANNELS).to(tl.int32)
    out_off = tl.load(row + OUT_OFF)
    out_len = ow * ch
    plane, y0, e0 = _helper_plane_block(t, oh, out_len, BY, BX)  # plane = o·od + z
    first_row = plane * oh + y0  # of the block in the sample's output rows
    if ALIGNED:  # the host checked: output offsets and rows are multiples of 16 elements
        e0 = tl.multiple_of(e0, 16)
        out_off = tl.multiple_of(out_off, 16)
        out_len = tl.multiple_of(out_len, 16)
    z = plane % od
    o = plane // od
    ys = y0 + tl.arange(0, BY)
    es = e0 + tl.arange(0, BX)
    mask = (ys < oh)[:, None] & (es < out_len)[None, :]
    x = es // ch
    c = es - x * ch
    base = src + tl.load(row + IN_OFF)
    w_base = weights + tl.load(row + W_OFF)
    fill_value = 0.0
    if HAS_FILL:
        fill_value = tl.load(fill + tl.load(row + FILL_OFF)).to(tl.float32)
    y_last = tl.minimum(y0 + BY, oh) - 1
    x_last = (tl.minimum(e0 + BX, out_len) - 1) // ch
    interior = (y0 >= ay) & (y_last - ay + kh <= h) & (e0 // ch >= ax) & \
        (x_last - ax + kw <= w) & (z >= az) & (z - az + kd <= d)  # fmt: skip
    # one border fold suffices unless the window reaches further than the sample is long
    wide = (tl.maximum(az, kd - 1 - az) >= d) | (tl.maximum(ay, kh - 1 - ay) >= h) | \
        (tl.maximum(ax, kw - 1 - ax) >= w)  # fmt: skip
    acc = tl.zeros([BY, BX], dtype=tl.float32)
    row_len = (w * ch).to(ity)
    for i in range(0, kd):
        zz, okz = _helper_border(z - az + i, d, wide, BORDER)
        plane_row = (o * d + zz) * h
        for j in range(0, kh):
            if interior:
                yy = ys - ay + j
                oky = ys == ys
            else:
                yy, oky = _helper_border(ys - ay + j, h, wide, BORDER)
            rows = base + ((plane_row + yy).to(ity) * row_len)[:, None]
            w_row = w_base + (i * kh + j) * kw
            for k in range(0, kw):
                weight = tl.load(w_row + k)
                if weight != 0:
                    if interior:
                        value = tl.load(rows + (es + (k - ax) * ch)[None, :], mask=mask,
                                        other=0).to(tl.float32)  # fmt: skip
                    else:
                        xx, okx = _helper_border(x - ax + k, w, wide, BORDER)
                        value = tl.load(rows + (xx * ch + c)[None, :], mask=mask,
                                        other=0).to(tl.float32)  # fmt: skip
                        if BORDER == CONSTANT:
                            ok = okz & oky[:, None] & okx[None, :]
                            value = tl.where(ok, value, fill_value)
                    acc = tl.fma(value, weight, acc)
    # one int32 kept across the tap loops (plane and oh kept live made ptxas spill)
    out_row = first_row + tl.arange(0, BY)
    out_rows = dst + out_off + (out_row.to(ity) * out_len.to(ity))[:, None]
    _helper_store_rounded(out_rows + es[None, :], acc, mask, ROUND, LO, HI)


def view_table(shapes: np.ndarray, first: int, count: int) -> np.ndarray:
    """`[N, 5]` views `(outer, D, H, W, inner)` of `[N, ndim]` shapes (kernels/_conv_tables)."""
    shapes = np.asarray(shapes, dtype=np.int64).reshape(len(shapes), -1)
    view = np.ones((len(shapes), 5), dtype=np.int64)
    view[:, 0] = np.prod(shapes[:, :first], axis=1, dtype=np.int64)
    view[:, 4 - count : 4] = shapes[:, first : first + count]
    view[:, 4] = np.prod(shapes[:, first + count :], axis=1, dtype=np.int64)
    return view


def block_shape(length: np.ndarray, rows: np.ndarray, tall: bool = False) -> tuple[int, int]:
    """`(BY, BX)`: powers of two, BX up to MAX_BX row elements, about BLOCK_ELEMENTS in all.

    `tall` halves the widest BX (so doubles BY): a pass across rows then re-reads fewer halo rows.
    """
    longest = int(np.max(length, initial=1))
    bx = min(MAX_BX // 2 if tall else MAX_BX, triton.next_power_of_2(max(longest, 16)))
    tallest = int(np.max(rows, initial=1))
    by = min(triton.next_power_of_2(max(tallest, 1)), max(1, BLOCK_ELEMENTS // bx))
    return by, bx


def channel_constexpr(inner: np.ndarray) -> int:
    """Channel count as a constexpr (uniform and <= 4), else 0: read from the sample table."""
    values = np.unique(inner)
    return int(values[0]) if len(values) == 1 and 1 <= values[0] <= 4 else 0


def round_mode(dtype: np.dtype, ties_to_even: bool = False) -> tuple[int, float, float]:
    """`(ROUND, LO, HI)` of an output dtype for `_helper_store_rounded`."""
    is_int, lo, hi = dtype_bounds(dtype)
    if not is_int:
        return ROUND_NONE, 0.0, 0.0
    return (ROUND_EVEN if ties_to_even else ROUND_HALF_AWAY), lo, hi


def launch_correlate(
    run: GpuRun,
    out: GpuBatch,
    inp: GpuBatch,
    span: tuple[int, int],
    weights: object,
    weight_offsets: np.ndarray,
    kernel_dims: np.ndarray,
    anchors: np.ndarray,
    border: str = "reflect_101",
    fill: GpuBatch | None = None,
    ties_to_even: bool = False,
) -> None:
    """One launch over the batch; `kernel_dims`/`anchors` are `[N, 3]` (D, H, W) int arrays."""
    n = inp.batch_size
    dims = view_table(inp.shapes, *span)
    odims = view_table(out.shapes, *span)
    fill_off = fill.offsets if fill is not None else np.zeros(n, np.int64)
    samples = np.concatenate([inp.offsets[:, None], out.offsets[:, None], dims[:, 1:4],
                              odims[:, 1:4], kernel_dims, anchors, dims[:, 4:5],
                              np.asarray(weight_offsets).reshape(n, 1),
                              fill_off[:, None]], axis=1).astype(np.int64)  # fmt: skip
    length = odims[:, 3] * odims[:, 4]
    by, bx = block_shape(length, odims[:, 2])
    tiles = tile_starts(block_tile_counts(odims[:, 0] * odims[:, 1], odims[:, 2], length, by, bx))
    rounding, lo, hi = round_mode(out.dtype.numpy_dtype, ties_to_even)
    idx64 = max(int(inp.sizes.max(initial=0)), int(out.sizes.max(initial=0))) >= INT32_LIMIT
    aligned = not np.any(out.offsets % 16) and not np.any(length % 16) and bx % 16 == 0
    run.launch(_correlate_kernel, (grid_of(tiles),), inp.data, out.data, weights,
               fill.data if fill is not None else inp.data, samples, tiles,
               BORDER=BORDERS[border], HAS_FILL=fill is not None, ROUND=rounding, LO=lo, HI=hi,
               C=channel_constexpr(dims[:, 4]), ALIGNED=aligned, IDX64=idx64, BY=by,
               BX=bx)  # fmt: skip
