"""water (and sphere) on the GPU: one launch per ragged batch of a coordinate-map kernel.

Each program covers a block of BY output rows of one sample and walks them BX pixels at a time
(it finds its sample and its row and column block from a per-sample table: `_tiles`); each lane is
one output pixel and reads / writes its CH channels (constexpr when the batch has one channel
count <= 4) next to each other; addresses inside a sample are int32 (int64 only for huge
samples, I64). MODE selects the map (0 water's sine displacement, 1 sphere's radial map; see
`kernels/cpu/water.py` for the fitted shifts): water's x shift depends on the row only and its
y shift on the column only, so each is computed once per row / column of the block. NN reads
`floor(s + NN_SHIFT)`, LINEAR blends around `s + LIN_SHIFT`; taps outside read the fill.
Samples with mask 0 are copied. fp32 math; uint8 outputs round half away and saturate.
"""

from __future__ import annotations

import numpy as np
import triton
import triton.language as tl

from ndd_triton.kernels import register
from ndd_triton.kernels.gpu._tables import GpuBatch, GpuRun
from ndd_triton.kernels.gpu._tiles import (
    _helper_find_tile,
    _helper_row_block,
    block_tile_counts,
    grid_of,
    tile_starts,
)
from ndd_triton.kernels.gpu.warp_affine import _helper_axis, _helper_bilinear_taps
from ndd_triton.ops import water
from ndd_triton.ops.schema import Call

IN_OFF: tl.constexpr = tl.constexpr(0)
OUT_OFF: tl.constexpr = tl.constexpr(1)
H: tl.constexpr = tl.constexpr(2)
W: tl.constexpr = tl.constexpr(3)
C: tl.constexpr = tl.constexpr(4)
MASK: tl.constexpr = tl.constexpr(5)
NCOL: tl.constexpr = tl.constexpr(6)
# Program shape: BY rows x BX pixels per step (4 warps; a warp covers a row segment), up to SPAN
# pixels per program. Measured on an H100 (water LINEAR, 32 480x640x3 uint8): 2x64 96 us, 4x32
# 108 us, 16x8 327 us.
BLOCK_Y, BLOCK_X, SPAN = 2, 64, 256
I32_LIMIT = 2**31


@triton.jit
def _helper_remap_tap(ptr, mask, inside, fill):
    """One tap as float32, or `fill` outside the source."""
    v = tl.load(ptr, mask=mask & inside, other=0).to(tl.float32)
    return tl.where(inside, v, fill)


@triton.jit
def _remap_kernel(src, dst, samples, tiles, fill, ampl_x, ampl_y, freq_x, freq_y, phase_x,
                  phase_y, MODE: tl.constexpr, LINEAR: tl.constexpr, NN_SHIFT: tl.constexpr,
                  LIN_SHIFT: tl.constexpr, ROUND: tl.constexpr, CH: tl.constexpr,
                  I64: tl.constexpr, BY: tl.constexpr, BX: tl.constexpr,
                  SPAN: tl.constexpr):  # fmt: skip
    """Rows of one sample: out[y, x, ch] = in sampled at map(x, y)."""
    # program -> sample, rows y0 + [0, BY), columns x0 + [0, SPAN); lane (r, i) of a step at
    # column xb -> output pixel (xb + i, y0 + r), all its channels
    sample, t = _helper_find_tile(tiles)
    row = samples + sample * NCOL
    h = tl.load(row + H)
    w = tl.load(row + W)
    y0, x0 = _helper_row_block(t, w.to(tl.int32), BY, SPAN)
    if CH > 0:  # noqa: SIM108 (constexpr: one channel count in the batch, checked by the host)
        nch = CH
    else:
        nch = tl.load(row + C)
    keep = tl.load(row + MASK) == 0  # pass-through sample
    img = src + tl.load(row + IN_OFF)
    idx_t = tl.int64 if I64 else tl.int32
    sh = h.to(idx_t)
    sw = w.to(idx_t)
    lx = tl.arange(0, BX)[None, :]
    ys = y0 + tl.arange(0, BY)[:, None]
    row_ok = ys < h
    y = ys.to(tl.float32)
    dst_row = dst + tl.load(row + OUT_OFF) + ys.to(idx_t) * sw * nch
    src_row = img + ys.to(idx_t) * sw * nch
    x_end = tl.minimum(x0 + SPAN, w).to(tl.int32)
    if MODE == 0:
        wave_x = ampl_x * tl.sin(freq_x * y + phase_x)  # per row
    else:
        cx = (w - 1).to(tl.float32) * 0.5
        cy = (h - 1).to(tl.float32) * 0.5
        d = (tl.maximum(w, h) // 2).to(tl.float32)
        vy = y - cy
        degenerate = d == 0  # a 1x1 image: NN reads the fill, LINEAR gives NaN
    for xb in range(x0, x_end, BX):
        xs = xb + lx
        mask = row_ok & (xs < x_end)
        x = xs.to(tl.float32)
        if MODE == 0:
            sx = x + wave_x
            sy = y + ampl_y * tl.cos(freq_y * x + phase_y)
        else:
            vx = x - cx
            r = tl.sqrt(vx * vx + vy * vy) / tl.maximum(d, 1.0)
            sx = tl.where(degenerate, -4.0, cx + vx * r)
            sy = tl.where(degenerate, -4.0, cy + vy * r)
        sx = tl.minimum(tl.maximum(sx, -4.0), w.to(tl.float32) + 4.0)
        sy = tl.minimum(tl.maximum(sy, -4.0), h.to(tl.float32) + 4.0)
        if LINEAR:
            sx = sx + LIN_SHIFT
            sy = sy + LIN_SHIFT
            fx, fy, cx0, inx0, cx1, inx1, cy0, iny0, cy1, iny1 = _helper_bilinear_taps(
                sx, sy, sw, sh, I64)  # fmt: skip
            ra = img + cy0 * sw * nch
            rb = img + cy1 * sw * nch
            ox0 = cx0 * nch
            ox1 = cx1 * nch
            p00 = ra + ox0
            p01 = ra + ox1
            p10 = rb + ox0
            p11 = rb + ox1
            i00 = iny0 & inx0
            i01 = iny0 & inx1
            i10 = iny1 & inx0
            i11 = iny1 & inx1
        else:
            cx0, inx0 = _helper_axis(tl.floor(sx + NN_SHIFT).to(tl.int32), sw, I64)
            cy0, iny0 = _helper_axis(tl.floor(sy + NN_SHIFT).to(tl.int32), sh, I64)
            p00 = img + (cy0 * sw + cx0) * nch
            i00 = iny0 & inx0
        pix = xs.to(idx_t) * nch
        for ch in range(nch):
            if keep:
                acc = tl.load(src_row + pix + ch, mask=mask, other=0).to(tl.float32)
            else:
                v00 = _helper_remap_tap(p00 + ch, mask, i00, fill)
                if LINEAR:
                    v01 = _helper_remap_tap(p01 + ch, mask, i01, fill)
                    v10 = _helper_remap_tap(p10 + ch, mask, i10, fill)
                    v11 = _helper_remap_tap(p11 + ch, mask, i11, fill)
                    top = v00 + fx * (v01 - v00)
                    bottom = v10 + fx * (v11 - v10)
                    acc = top + fy * (bottom - top)
                    if MODE == 1:
                        acc = tl.where(degenerate, float("nan"), acc)
                else:
                    acc = v00
            if ROUND:
                acc = tl.minimum(tl.maximum(tl.floor(acc + 0.5), 0.0), 255.0)
                acc = tl.where(acc != acc, 0.0, acc)  # NaN -> 0
            tl.store(dst_row + pix + ch, acc.to(dst.dtype.element_ty), mask=mask)


def remap_gpu(run: GpuRun, out: GpuBatch, inp: GpuBatch, call: Call, mode: int) -> None:
    """Sample and tile tables, one launch; `mode` 0 water, 1 sphere."""
    hwc = inp.extents("HWC", "HWC")
    mask = np.asarray(call.mask, np.int64).reshape(-1)
    samples = np.concatenate([inp.offsets[:, None], out.offsets[:, None], hwc, mask[:, None]],
                             axis=1).astype(np.int64)  # fmt: skip
    channels = hwc[:, 2]
    uniform = len(channels) > 0 and bool((channels == channels[0]).all()) and 1 <= channels[0] <= 4
    tiles = tile_starts(block_tile_counts(channels > 0, hwc[:, 0], hwc[:, 1], BLOCK_Y, SPAN))
    big = int(np.prod(hwc, axis=1).max(initial=0)) >= I32_LIMIT
    waves = [float(call.values.get(k) or 0.0) for k in
             ("ampl_x", "ampl_y", "freq_x", "freq_y", "phase_x", "phase_y")]  # fmt: skip
    run.launch(_remap_kernel, (grid_of(tiles),), inp.data, out.data, samples, tiles,
               float(call.fill_value), *waves, MODE=mode, LINEAR=int(call.interp_type) == 1,
               NN_SHIFT=0.0 if mode == 0 else 0.5, LIN_SHIFT=-0.5 if mode == 0 else 0.0,
               ROUND=not out.dtype.is_float, CH=int(channels[0]) if uniform else 0, I64=big,
               BY=BLOCK_Y, BX=BLOCK_X, SPAN=SPAN)  # fmt: skip


@register(water.schema, "gpu", replay=True)
def water_gpu(run: GpuRun, out: GpuBatch, inp: GpuBatch, call: Call) -> None:
    """Sine displacement; NN floors the source coordinate."""
    remap_gpu(run, out, inp, call, 0)
