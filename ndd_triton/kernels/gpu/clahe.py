"""clahe on the GPU: one launch, one program per (sample, plane, cell).

A cell is the block of pixels that blend the same four tile LUTs (pixels between tile
centres). Its program builds those (up to) four LUTs itself - histogram of the tile with
`tl.histogram` (bottom/right padding of OpenCV mapped by reflect-101 coordinates), clip and
redistribution, cumulative sum, `rint(cdf · 255 / area)` - writes them to a scratch row, then
blends them for its pixels in fp32 exactly like the CPU kernel. Tile histograms are recomputed
by up to four neighbouring cells: the price of needing no second launch. LUMA: RGB input,
equalise `rint(0.299R + 0.587G + 0.114B)` and scale the channels by the luma gain.
"""

from __future__ import annotations

import numpy as np
import torch
import triton
import triton.language as tl

from ndd_triton.kernels import register
from ndd_triton.kernels.gpu._tables import GpuBatch, GpuRun
from ndd_triton.ops import clahe
from ndd_triton.ops.schema import Call

IN_OFF: tl.constexpr = tl.constexpr(0)
OUT_OFF: tl.constexpr = tl.constexpr(1)
H: tl.constexpr = tl.constexpr(2)
W: tl.constexpr = tl.constexpr(3)
C: tl.constexpr = tl.constexpr(4)
CH: tl.constexpr = tl.constexpr(5)
TH: tl.constexpr = tl.constexpr(6)
TW: tl.constexpr = tl.constexpr(7)
TILES: tl.constexpr = tl.constexpr(8)  # ty_a, ty_b, tx_a, tx_b
LIMIT: tl.constexpr = tl.constexpr(12)
RANGE: tl.constexpr = tl.constexpr(13)  # y_lo, y_hi, x_lo, x_hi
NCOL: tl.constexpr = tl.constexpr(17)
BINS: tl.constexpr = tl.constexpr(256)
TILE = 1024


@triton.jit
def _helper_reflect(p, n):
    """Reflect-101 coordinate into [0, n)."""
    period = tl.maximum(2 * n - 2, 1)
    p = tl.abs(p) % period
    return tl.where(p >= n, period - p, p)


@triton.jit
def _helper_value(ptr, c, ch, LUMA: tl.constexpr, mask):
    """The equalised quantity of a pixel: its channel, or its rounded luma (fp32)."""
    if LUMA:
        r = tl.load(ptr, mask=mask, other=0).to(tl.float32)
        g = tl.load(ptr + 1, mask=mask, other=0).to(tl.float32)
        b = tl.load(ptr + 2, mask=mask, other=0).to(tl.float32)
        luma = r * 0.299 + g * 0.587 + b * 0.114
        return tl.minimum(tl.maximum(_helper_rint(luma), 0.0), 255.0), luma
    v = tl.load(ptr + ch, mask=mask, other=0).to(tl.float32)
    return v, v


@triton.jit
def _helper_rint(x):
    """Round half to even."""
    r = tl.floor(x + 0.5)
    odd = (r - 2.0 * tl.floor(r * 0.5)) != 0.0
    return tl.where(((r - x) == 0.5) & odd, r - 1.0, r)


@triton.jit
def _clahe_kernel(src, dst, cells, ptable, luts, BLOCK: tl.constexpr, LUMA: tl.constexpr):
    """Four tile LUTs, then the bilinear blend, for one cell of one plane."""
    cell = tl.program_id(0).to(tl.int64)
    row = cells + cell * NCOL
    # coordinates and extents in int32 (no 64-bit division in the loops); pixel offsets int64
    h, w = tl.load(row + H).to(tl.int32), tl.load(row + W).to(tl.int32)
    c, ch = tl.load(row + C).to(tl.int32), tl.load(row + CH).to(tl.int32)
    th, tw, limit = tl.load(row + TH).to(tl.int32), tl.load(row + TW).to(tl.int32), \
        tl.load(row + LIMIT).to(tl.int32)  # fmt: skip
    base = src + tl.load(row + IN_OFF)
    bins = tl.arange(0, BINS)
    area = th * tw
    for k in range(0, 4):  # a loop, not unrolled: four copies spilled
        ty = tl.load(row + TILES + k // 2).to(tl.int32)
        tx = tl.load(row + TILES + 2 + k % 2).to(tl.int32)
        hist = tl.zeros([BINS], dtype=tl.int32)
        for start in range(0, area, BLOCK):
            p = start + tl.arange(0, BLOCK)
            mask = p < area
            yy = _helper_reflect(ty * th + p // tw, h)
            xx = _helper_reflect(tx * tw + p % tw, w)
            v, _ = _helper_value(base + (yy * w + xx).to(tl.int64) * c, c, ch, LUMA, mask)
            hist += tl.histogram(v.to(tl.int32), BINS, mask=mask)
        if limit > 0:
            clipped = tl.sum(tl.maximum(hist - limit, 0), 0)
            hist = tl.minimum(hist, limit) + clipped // BINS
            residual = clipped % BINS
            step = tl.maximum(BINS // tl.maximum(residual, 1), 1)
            hist += ((bins % step == 0) & (bins // step < residual)).to(tl.int32)
        scale = 255.0 / area.to(tl.float32)
        lut = _helper_rint(tl.cumsum(hist, 0).to(tl.float32) * scale)
        tl.store(luts + (cell * 4 + k) * BINS + bins, tl.minimum(lut, 255.0))
    tl.debug_barrier()
    inv_th = tl.load(ptable + cell * 2)
    inv_tw = tl.load(ptable + cell * 2 + 1)
    y_lo, y_hi = tl.load(row + RANGE).to(tl.int32), tl.load(row + RANGE + 1).to(tl.int32)
    x_lo, x_hi = tl.load(row + RANGE + 2).to(tl.int32), tl.load(row + RANGE + 3).to(tl.int32)
    cw = x_hi - x_lo
    lut_row = luts + cell * 4 * BINS
    out_base = dst + tl.load(row + OUT_OFF)
    for start in range(0, (y_hi - y_lo) * cw, BLOCK):
        p = start + tl.arange(0, BLOCK)
        mask = p < (y_hi - y_lo) * cw
        y = y_lo + p // tl.maximum(cw, 1)
        x = x_lo + p % tl.maximum(cw, 1)
        fy = y.to(tl.float32) * inv_th - 0.5
        fx = x.to(tl.float32) * inv_tw - 0.5
        ya = fy - tl.floor(fy)
        xa = fx - tl.floor(fx)
        pix = (y * w + x).to(tl.int64) * c
        v, luma = _helper_value(base + pix, c, ch, LUMA, mask)
        vi = v.to(tl.int32)
        top = tl.load(lut_row + vi, mask=mask, other=0.0) * (1.0 - xa) \
            + tl.load(lut_row + BINS + vi, mask=mask, other=0.0) * xa
        bot = tl.load(lut_row + 2 * BINS + vi, mask=mask, other=0.0) * (1.0 - xa) \
            + tl.load(lut_row + 3 * BINS + vi, mask=mask, other=0.0) * xa
        res = top * (1.0 - ya) + bot * ya
        res = tl.minimum(tl.maximum(_helper_rint(res), 0.0), 255.0)
        if LUMA:
            gain = res / tl.maximum(luma, 1e-3)
            for j in tl.static_range(3):
                chan = tl.load(base + pix + j, mask=mask, other=0).to(tl.float32)
                out = tl.minimum(tl.maximum(_helper_rint(chan * gain), 0.0), 255.0)
                tl.store(out_base + pix + j, out.to(tl.uint8), mask=mask)
        else:
            tl.store(out_base + pix + ch, res.to(tl.uint8), mask=mask)


def _cells_of_axis(n: int, tile: int, tiles: int) -> list[tuple[int, int, int, int]]:
    """`(lo, hi, tile_a, tile_b)` pixel ranges sharing tiles (the CPU kernel's f32 formula)."""
    pos = np.arange(n, dtype=np.float32) * (np.float32(1.0) / np.float32(tile)) - np.float32(0.5)
    first = np.floor(pos).astype(np.int64)
    out = []
    for value in np.unique(first):
        where = np.flatnonzero(first == value)
        out.append((int(where[0]), int(where[-1]) + 1, max(int(value), 0),
                    min(int(value) + 1, tiles - 1)))  # fmt: skip
    return out


def _sample_cells(shape: np.ndarray, arg: Call) -> tuple[list[list[int]], list[list[float]]]:
    h, w, c = (int(s) for s in shape)
    tx, ty = int(arg.tiles_x), int(arg.tiles_y)
    # OpenCV pads both axes (by tiles - size % tiles, a whole tile row when divisible) as
    # soon as either one is not a multiple of the grid
    padded = bool(h % ty or w % tx)
    eh, ew = (h + ty - h % ty, w + tx - w % tx) if padded else (h, w)
    th, tw = eh // ty, ew // tx
    limit = max(int(min(arg.clip_limit * th * tw / 256, th * tw)), 1) if arg.clip_limit > 0 else 0
    planes = [0] if c == 3 and arg.luma_only else list(range(c))
    rows, params = [], []
    inv = [float(np.float32(1.0) / np.float32(th)), float(np.float32(1.0) / np.float32(tw))]
    for ch in planes:
        for y_lo, y_hi, ty_a, ty_b in _cells_of_axis(h, th, ty):
            for x_lo, x_hi, tx_a, tx_b in _cells_of_axis(w, tw, tx):
                rows.append([h, w, c, ch, th, tw, ty_a, ty_b, tx_a, tx_b, limit,
                             y_lo, y_hi, x_lo, x_hi])  # fmt: skip
                params.append(inv)
    return rows, params


@register(clahe.schema, "gpu", replay=True)
def clahe_gpu(run: GpuRun, out: GpuBatch, inp: GpuBatch, arg: Call) -> None:
    """One program per cell of every plane of every sample."""
    rows, params = [], []
    luma = bool(arg.luma_only) and bool((inp.shapes[:, 2] == 3).all())  # infer checked mixes
    for i, shape in enumerate(inp.shapes):
        if np.prod(shape) == 0:
            continue
        sample_rows, sample_params = _sample_cells(shape, arg)
        rows += [[int(inp.offsets[i]), int(out.offsets[i]), *r] for r in sample_rows]
        params += sample_params
    cells = np.array(rows, dtype=np.int64).reshape(len(rows), 17)
    luts = run.empty(max(len(rows), 1) * 4 * 256, torch.float32)
    run.launch(_clahe_kernel, (len(rows),), inp.data, out.data, cells,
               np.array(params, dtype=np.float32).reshape(len(rows), 2), luts, BLOCK=TILE,
               LUMA=luma)  # fmt: skip
