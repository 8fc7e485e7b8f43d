"""water (and sphere) on the GPU: one launch per ragged batch of a coordinate-map kernel.

Each program handles one tile of one sample's flat HWC output. MODE selects the map (0 water's
sine displacement, 1 sphere's radial map; see `kernels/cpu/water.py` for the fitted shifts);
NN reads `floor(s + NN_SHIFT)`, LINEAR blends around `s + LIN_SHIFT`; taps outside read the
fill. Samples with mask 0 are copied. fp32 math; uint8 outputs round half away and saturate.
"""

from __future__ import annotations

import numpy as np
import triton
import triton.language as tl

from ndd_triton.kernels import register
from ndd_triton.kernels.gpu._tables import GpuBatch, GpuRun, tile_table
from ndd_triton.ops import water
from ndd_triton.ops.schema import Call

IN_OFF: tl.constexpr = tl.constexpr(0)
OUT_OFF: tl.constexpr = tl.constexpr(1)
H: tl.constexpr = tl.constexpr(2)
W: tl.constexpr = tl.constexpr(3)
C: tl.constexpr = tl.constexpr(4)
MASK: tl.constexpr = tl.constexpr(5)
NCOL: tl.constexpr = tl.constexpr(6)
TILE = 1024


@triton.jit
def _helper_remap_tap(base, ix, iy, h, w, c, mask, fill):
    """Pixel `(ix, iy)` of the sample as float32, or `fill` outside."""
    inside = (ix >= 0) & (ix < w) & (iy >= 0) & (iy < h)
    xi = tl.minimum(tl.maximum(ix, 0), w - 1).to(tl.int64)
    yi = tl.minimum(tl.maximum(iy, 0), h - 1).to(tl.int64)
    v = tl.load(base + (yi * w + xi) * c, mask=mask & inside, other=0).to(tl.float32)
    return tl.where(inside, v, fill)


@triton.jit
def _remap_kernel(src, dst, samples, tiles, fill, ampl_x, ampl_y, freq_x, freq_y, phase_x,
                  phase_y, MODE: tl.constexpr, LINEAR: tl.constexpr, NN_SHIFT: tl.constexpr,
                  LIN_SHIFT: tl.constexpr, ROUND: tl.constexpr, BLOCK: tl.constexpr):  # fmt: skip
    """One tile of one sample: out[y, x, ch] = in sampled at map(x, y)."""
    sample = tl.load(tiles + 2 * tl.program_id(0))
    first = tl.load(tiles + 2 * tl.program_id(0) + 1)
    row = samples + sample * NCOL
    h = tl.load(row + H)
    w = tl.load(row + W)
    c = tl.load(row + C)
    idx = first + tl.arange(0, BLOCK).to(tl.int64)
    mask = idx < h * w * c
    ch = idx % c
    xi = (idx // c) % w
    yi = idx // (c * w)
    x = xi.to(tl.float32)
    y = yi.to(tl.float32)
    degenerate = w < 0  # sphere on a 1x1 image (d = 0): NN reads the fill, LINEAR gives NaN
    if MODE == 0:
        sx = x + ampl_x * tl.sin(freq_x * y + phase_x)
        sy = y + ampl_y * tl.cos(freq_y * x + phase_y)
    else:
        cx = (w - 1).to(tl.float32) * 0.5
        cy = (h - 1).to(tl.float32) * 0.5
        d = (tl.maximum(w, h) // 2).to(tl.float32)
        vx = x - cx
        vy = y - cy
        r = tl.sqrt(vx * vx + vy * vy) / tl.maximum(d, 1.0)
        degenerate = d == 0
        sx = tl.where(degenerate, -4.0, cx + vx * r)
        sy = tl.where(degenerate, -4.0, cy + vy * r)
    sx = tl.minimum(tl.maximum(sx, -4.0), w.to(tl.float32) + 4.0)
    sy = tl.minimum(tl.maximum(sy, -4.0), h.to(tl.float32) + 4.0)
    base = src + tl.load(row + IN_OFF) + ch
    if LINEAR:
        sx = sx + LIN_SHIFT
        sy = sy + LIN_SHIFT
        x0 = tl.floor(sx)
        y0 = tl.floor(sy)
        fx = sx - x0
        fy = sy - y0
        ix = x0.to(tl.int32)
        iy = y0.to(tl.int32)
        v00 = _helper_remap_tap(base, ix, iy, h, w, c, mask, fill)
        v01 = _helper_remap_tap(base, ix + 1, iy, h, w, c, mask, fill)
        v10 = _helper_remap_tap(base, ix, iy + 1, h, w, c, mask, fill)
        v11 = _helper_remap_tap(base, ix + 1, iy + 1, h, w, c, mask, fill)
        top = v00 + fx * (v01 - v00)
        bottom = v10 + fx * (v11 - v10)
        acc = top + fy * (bottom - top)
        acc = tl.where(degenerate, float("nan"), acc)
    else:
        ix = tl.floor(sx + NN_SHIFT).to(tl.int32)
        iy = tl.floor(sy + NN_SHIFT).to(tl.int32)
        acc = _helper_remap_tap(base, ix, iy, h, w, c, mask, fill)
    if tl.load(row + MASK) == 0:  # pass-through sample
        acc = tl.load(base + (yi * w + xi) * c, mask=mask, other=0).to(tl.float32)
    if ROUND:
        acc = tl.minimum(tl.maximum(tl.floor(acc + 0.5), 0.0), 255.0)
        acc = tl.where(acc != acc, 0.0, acc)  # NaN -> 0
    tl.store(dst + tl.load(row + OUT_OFF) + idx, acc.to(dst.dtype.element_ty), mask=mask)


def remap_gpu(run: GpuRun, out: GpuBatch, inp: GpuBatch, call: Call, mode: int) -> None:
    """Sample and tile tables, one launch; `mode` 0 water, 1 sphere."""
    hwc = inp.extents("HWC", "HWC")
    mask = np.asarray(call.mask, np.int64).reshape(-1)
    samples = np.concatenate([inp.offsets[:, None], out.offsets[:, None], hwc, mask[:, None]],
                             axis=1).astype(np.int64)  # fmt: skip
    tiles = tile_table(np.prod(hwc, axis=1), TILE)
    waves = [float(call.values.get(k) or 0.0) for k in
             ("ampl_x", "ampl_y", "freq_x", "freq_y", "phase_x", "phase_y")]  # fmt: skip
    run.launch(_remap_kernel, (len(tiles),), inp.data, out.data, samples, tiles,
               float(call.fill_value), *waves, MODE=mode, LINEAR=int(call.interp_type) == 1,
               NN_SHIFT=0.0 if mode == 0 else 0.5, LIN_SHIFT=-0.5 if mode == 0 else 0.0,
               ROUND=not out.dtype.is_float, BLOCK=TILE)  # fmt: skip


@register(water.schema, "gpu")
def water_gpu(run: GpuRun, out: GpuBatch, inp: GpuBatch, call: Call) -> None:
    """Sine displacement; NN floors the source coordinate."""
    remap_gpu(run, out, inp, call, 0)
