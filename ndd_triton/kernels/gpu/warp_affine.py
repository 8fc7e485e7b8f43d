"""Affine sampling on the GPU, shared by warp_affine and rotate: one launch per ragged batch.

Each program handles one tile of one sample's flat output (frames, rows, columns, channels).
The per-sample inverse map (2x3) and fill value travel in a float32 table next to the int64
sample table; the source point of output pixel `(x, y)` is `M @ [x + .5, y + .5, 1] - .5` in
pixel indices, sampled NN (`floor(p + .5)`) or bilinearly, with `fill_value` for taps outside
the source (FILL) or clamped tap indices. fp32 math; integer outputs round half away, saturate.
"""

from __future__ import annotations

import numpy as np
import triton
import triton.language as tl

from ndd_triton.kernels import register
from ndd_triton.kernels.gpu._tables import GpuBatch, GpuRun, tile_table
from ndd_triton.ops import warp_affine
from ndd_triton.schema import Call

IN_OFF: tl.constexpr = tl.constexpr(0)
OUT_OFF: tl.constexpr = tl.constexpr(1)
FRAMES: tl.constexpr = tl.constexpr(2)
H: tl.constexpr = tl.constexpr(3)
W: tl.constexpr = tl.constexpr(4)
C: tl.constexpr = tl.constexpr(5)
OUT_H: tl.constexpr = tl.constexpr(6)
OUT_W: tl.constexpr = tl.constexpr(7)
NCOL: tl.constexpr = tl.constexpr(8)
# float table: m00 m01 m02 m10 m11 m12 fill
FILL_VALUE: tl.constexpr = tl.constexpr(6)
NPAR: tl.constexpr = tl.constexpr(8)
TILE = 1024


@triton.jit
def _helper_tap(base, ix, iy, h, w, c, mask, fill, FILL: tl.constexpr):
    """Source value at integer pixel `(ix, iy)` (float32): fill outside, or clamped."""
    if FILL:
        inside = (ix >= 0) & (ix < w) & (iy >= 0) & (iy < h)
        xi = tl.minimum(tl.maximum(ix, 0), w - 1).to(tl.int64)
        yi = tl.minimum(tl.maximum(iy, 0), h - 1).to(tl.int64)
        v = tl.load(base + (yi * w + xi) * c, mask=mask & inside, other=0).to(tl.float32)
        v = tl.where(inside, v, fill)
    else:
        xi = tl.minimum(tl.maximum(ix, 0), w - 1).to(tl.int64)
        yi = tl.minimum(tl.maximum(iy, 0), h - 1).to(tl.int64)
        # an empty source has no pixel to clamp to: 0, as on the CPU
        # (clamped indices are -1 exactly then)
        v = tl.load(base + (yi * w + xi) * c, mask=mask & (xi >= 0) & (yi >= 0), other=0).to(
            tl.float32
        )
    return v


@triton.jit
def _affine_kernel(src, dst, samples, params, tiles, INTERP: tl.constexpr, FILL: tl.constexpr,
                   ROUND: tl.constexpr, LO: tl.constexpr, HI: tl.constexpr,
                   BLOCK: tl.constexpr):  # fmt: skip
    """One tile of one sample: dst[f, y, x, ch] = src sampled at M @ (x + .5, y + .5, 1)."""
    sample = tl.load(tiles + 2 * tl.program_id(0))
    first = tl.load(tiles + 2 * tl.program_id(0) + 1)
    row = samples + sample * NCOL
    prow = params + sample * NPAR
    h = tl.load(row + H)
    w = tl.load(row + W)
    c = tl.load(row + C)
    out_h = tl.load(row + OUT_H)
    out_w = tl.load(row + OUT_W)
    idx = first + tl.arange(0, BLOCK).to(tl.int64)
    mask = idx < tl.load(row + FRAMES) * out_h * out_w * c
    ch = idx % c
    pix = idx // c
    x = (pix % out_w).to(tl.float32) + 0.5
    y = ((pix // out_w) % out_h).to(tl.float32) + 0.5
    frame = pix // (out_w * out_h)
    sx = tl.load(prow + 0) * x + tl.load(prow + 1) * y + tl.load(prow + 2) - 0.5
    sy = tl.load(prow + 3) * x + tl.load(prow + 4) * y + tl.load(prow + 5) - 0.5
    # keep coordinates in a range where the int conversion cannot overflow
    sx = tl.minimum(tl.maximum(sx, -4.0), w.to(tl.float32) + 4.0)
    sy = tl.minimum(tl.maximum(sy, -4.0), h.to(tl.float32) + 4.0)
    fill = tl.load(prow + FILL_VALUE)
    base = src + tl.load(row + IN_OFF) + frame * h * w * c + ch
    if INTERP == 0:
        ix = tl.floor(sx + 0.5).to(tl.int32)
        iy = tl.floor(sy + 0.5).to(tl.int32)
        acc = _helper_tap(base, ix, iy, h, w, c, mask, fill, FILL)
    else:
        x0 = tl.floor(sx)
        y0 = tl.floor(sy)
        fx = sx - x0
        fy = sy - y0
        ix = x0.to(tl.int32)
        iy = y0.to(tl.int32)
        v00 = _helper_tap(base, ix, iy, h, w, c, mask, fill, FILL)
        v01 = _helper_tap(base, ix + 1, iy, h, w, c, mask, fill, FILL)
        v10 = _helper_tap(base, ix, iy + 1, h, w, c, mask, fill, FILL)
        v11 = _helper_tap(base, ix + 1, iy + 1, h, w, c, mask, fill, FILL)
        top = v00 + fx * (v01 - v00)
        bottom = v10 + fx * (v11 - v10)
        acc = top + fy * (bottom - top)
    if ROUND:  # integer output: round half away from zero, then saturate
        acc = tl.where(acc < 0, tl.ceil(acc - 0.5), tl.floor(acc + 0.5))
        acc = tl.minimum(tl.maximum(acc, LO), HI)
    tl.store(dst + tl.load(row + OUT_OFF) + idx, acc.to(dst.dtype.element_ty), mask=mask)


def affine_sample_gpu(run: GpuRun, out: GpuBatch, inp: GpuBatch, call: Call) -> None:
    """Build the sample (int64) and parameter (float32) tables; launch once."""
    layout = call.inputs[0].layout or "HWC"
    n = inp.batch_size
    frames = inp.extents("F", layout)[:, 0]
    in_hwc = inp.extents("HWC", layout)
    out_hw = out.extents("HW", layout)
    samples = np.concatenate([inp.offsets[:, None], out.offsets[:, None], frames[:, None],
                              in_hwc, out_hw], axis=1).astype(np.int64)  # fmt: skip
    params = np.zeros((n, int(NPAR)), np.float32)
    params[:, :6] = np.asarray(call.affine_matrix, np.float64).reshape(n, 6)
    fill = call.affine_fill
    params[:, int(FILL_VALUE)] = 0.0 if fill is None else fill
    out_sizes = frames * out_hw[:, 0] * out_hw[:, 1] * in_hwc[:, 2]
    tiles = tile_table(out_sizes, TILE)
    is_int = not out.dtype.is_float
    info = np.iinfo(out.dtype.numpy_dtype) if is_int else None
    run.launch(_affine_kernel, (len(tiles),), inp.data, out.data, samples, params, tiles,
               INTERP=int(call.affine_interp), FILL=fill is not None, ROUND=is_int,
               LO=float(info.min) if info is not None else 0.0,
               HI=float(info.max) if info is not None else 0.0, BLOCK=TILE)  # fmt: skip


@register(warp_affine.schema, "gpu")
def warp_affine_gpu(run: GpuRun, out: GpuBatch, inp: GpuBatch, mtx: GpuBatch | None,
                    call: Call) -> None:  # fmt: skip
    """The matrix input (if any) was folded into `call.affine_matrix` by infer."""
    affine_sample_gpu(run, out, inp, call)
