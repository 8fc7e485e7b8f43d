"""Affine sampling on the GPU, shared by warp_affine and rotate: one launch per ragged batch.

Images and volumes share the kernel (NDIM constexpr: 4 or 8 taps); images have D = 1.

Each program handles one tile of one sample's flat output (frames, rows, columns, channels).
The per-sample inverse map (2x3) and fill value travel in a float32 table next to the int64
sample table; the source point of output pixel `(x, y)` is `M @ [x + .5, y + .5, 1] - .5` in
pixel indices, sampled NN (`floor(p + .5)`; 2-D: DALI's accumulated row coordinates, see
`_affine_kernel`) or bilinearly, with `fill_value` for taps outside
the source (FILL) or clamped tap indices. fp32 math; integer outputs round half away, saturate.
"""

from __future__ import annotations

import numpy as np
import triton
import triton.language as tl

from ndd_triton.kernels import register
from ndd_triton.kernels.gpu._tables import GpuBatch, GpuRun, tile_table
from ndd_triton.ops import warp_affine
from ndd_triton.ops.schema import Call

IN_OFF: tl.constexpr = tl.constexpr(0)
OUT_OFF: tl.constexpr = tl.constexpr(1)
FRAMES: tl.constexpr = tl.constexpr(2)
D: tl.constexpr = tl.constexpr(3)  # 1 for images
H: tl.constexpr = tl.constexpr(4)
W: tl.constexpr = tl.constexpr(5)
C: tl.constexpr = tl.constexpr(6)
OUT_D: tl.constexpr = tl.constexpr(7)
OUT_H: tl.constexpr = tl.constexpr(8)
OUT_W: tl.constexpr = tl.constexpr(9)
NCOL: tl.constexpr = tl.constexpr(10)
# float table: the 3x4 map row by row (images: z column and row zero), then the fill
FILL_VALUE: tl.constexpr = tl.constexpr(12)
NPAR: tl.constexpr = tl.constexpr(16)
TILE = 1024


@triton.jit
def _helper_tap(base, ix, iy, iz, d, h, w, c, mask, fill, FILL: tl.constexpr):
    """Source value at integer voxel `(ix, iy, iz)` (float32): fill outside, or clamped."""
    xi = tl.minimum(tl.maximum(ix, 0), w - 1).to(tl.int64)
    yi = tl.minimum(tl.maximum(iy, 0), h - 1).to(tl.int64)
    zi = tl.minimum(tl.maximum(iz, 0), d - 1).to(tl.int64)
    at = base + ((zi * h + yi) * w + xi) * c
    if FILL:
        inside = (ix >= 0) & (ix < w) & (iy >= 0) & (iy < h) & (iz >= 0) & (iz < d)
        v = tl.load(at, mask=mask & inside, other=0).to(tl.float32)
        v = tl.where(inside, v, fill)
    else:
        # an empty source has no pixel to clamp to (clamped indices are -1 then): 0, as on
        # the CPU
        ok = mask & (xi >= 0) & (yi >= 0) & (zi >= 0)
        v = tl.load(at, mask=ok, other=0).to(tl.float32)
    return v


@triton.jit
def _helper_bilinear(base, x0, y0, iz, fx, fy, d, h, w, c, mask, fill, FILL: tl.constexpr):
    """Bilinear blend of the 2x2 taps at `(x0, y0)` in plane `iz`."""
    v00 = _helper_tap(base, x0, y0, iz, d, h, w, c, mask, fill, FILL)
    v01 = _helper_tap(base, x0 + 1, y0, iz, d, h, w, c, mask, fill, FILL)
    v10 = _helper_tap(base, x0, y0 + 1, iz, d, h, w, c, mask, fill, FILL)
    v11 = _helper_tap(base, x0 + 1, y0 + 1, iz, d, h, w, c, mask, fill, FILL)
    top = v00 + fx * (v01 - v00)
    bottom = v10 + fx * (v11 - v10)
    return top + fy * (bottom - top)


@triton.jit
def _helper_coord(prow, r: tl.constexpr, x, y, z, extent):
    """Source pixel-index coordinate `M[r] @ (x, y, z, 1) - .5`, clamped to a safe range."""
    v = tl.load(prow + 4 * r) * x + tl.load(prow + 4 * r + 1) * y
    v = v + tl.load(prow + 4 * r + 2) * z + tl.load(prow + 4 * r + 3) - 0.5
    # keep coordinates in a range where the int conversion cannot overflow
    return tl.minimum(tl.maximum(v, -4.0), extent.to(tl.float32) + 4.0)


@triton.jit
def _affine_kernel(src, dst, samples, ptable, tiles, starts, start_offs, NDIM: tl.constexpr,
                   INTERP: tl.constexpr, FILL: tl.constexpr, ROUND: tl.constexpr,
                   LO: tl.constexpr, HI: tl.constexpr, BLOCK: tl.constexpr):  # fmt: skip
    """One tile of one sample: dst[f, z, y, x, ch] = src sampled at M @ (p + .5, 1) - .5.

    2-D NN follows DALI's CPU warp: row `y` starts at `starts[y]` (float32, from the host) and
    adds the x step once per pixel, in float32, so near-ties round as in DALI."""
    sample = tl.load(tiles + 2 * tl.program_id(0))
    first = tl.load(tiles + 2 * tl.program_id(0) + 1)
    row = samples + sample * NCOL
    prow = ptable + sample * NPAR
    d = tl.load(row + D)
    h = tl.load(row + H)
    w = tl.load(row + W)
    c = tl.load(row + C)
    out_d = tl.load(row + OUT_D)
    out_h = tl.load(row + OUT_H)
    out_w = tl.load(row + OUT_W)
    idx = first + tl.arange(0, BLOCK).to(tl.int64)
    mask = idx < tl.load(row + FRAMES) * out_d * out_h * out_w * c
    ch = idx % c
    pix = idx // c
    x = (pix % out_w).to(tl.float32) + 0.5
    y = ((pix // out_w) % out_h).to(tl.float32) + 0.5
    z = ((pix // (out_w * out_h)) % out_d).to(tl.float32) + 0.5
    frame = pix // (out_w * out_h * out_d)
    sx = _helper_coord(prow, 0, x, y, z, w)
    sy = _helper_coord(prow, 1, x, y, z, h)
    fill = tl.load(prow + FILL_VALUE)
    base = src + tl.load(row + IN_OFF) + frame * d * h * w * c + ch
    if NDIM == 3:  # noqa: SIM108 (a constexpr branch: only one side is compiled)
        sz = _helper_coord(prow, 2, x, y, z, d)
    else:
        sz = tl.zeros_like(sx)
    if INTERP == 0 and NDIM == 2:
        xi = pix % out_w
        yi = (pix // out_w) % out_h
        soff = tl.load(start_offs + sample)
        ax = tl.load(starts + soff + yi, mask=mask, other=0.0)
        ay = tl.load(starts + soff + out_h + yi, mask=mask, other=0.0)
        step_x = tl.load(prow)
        step_y = tl.load(prow + 4)
        for k in range(0, tl.max(tl.where(mask, xi, 0), axis=0)):
            more = k < xi
            ax = tl.where(more, ax + step_x, ax)
            ay = tl.where(more, ay + step_y, ay)
        ax = tl.minimum(tl.maximum(ax, -4.0), w.to(tl.float32) + 4.0)
        ay = tl.minimum(tl.maximum(ay, -4.0), h.to(tl.float32) + 4.0)
        ix = tl.floor(ax).to(tl.int32)
        iy = tl.floor(ay).to(tl.int32)
        acc = _helper_tap(base, ix, iy, tl.zeros_like(ix), d, h, w, c, mask, fill, FILL)
    elif INTERP == 0:
        ix = tl.floor(sx + 0.5).to(tl.int32)
        iy = tl.floor(sy + 0.5).to(tl.int32)
        iz = tl.floor(sz + 0.5).to(tl.int32)
        acc = _helper_tap(base, ix, iy, iz, d, h, w, c, mask, fill, FILL)
    else:
        x0 = tl.floor(sx)
        y0 = tl.floor(sy)
        fx = sx - x0
        fy = sy - y0
        ix = x0.to(tl.int32)
        iy = y0.to(tl.int32)
        if NDIM == 3:
            z0 = tl.floor(sz)
            fz = sz - z0
            iz = z0.to(tl.int32)
            near = _helper_bilinear(base, ix, iy, iz, fx, fy, d, h, w, c, mask, fill, FILL)
            far = _helper_bilinear(base, ix, iy, iz + 1, fx, fy, d, h, w, c, mask, fill, FILL)
            acc = near + fz * (far - near)
        else:
            iz = tl.zeros_like(ix)
            acc = _helper_bilinear(base, ix, iy, iz, fx, fy, d, h, w, c, mask, fill, FILL)
    if ROUND:  # integer output: round half away from zero, then saturate
        acc = tl.where(acc < 0, tl.ceil(acc - 0.5), tl.floor(acc + 0.5))
        acc = tl.minimum(tl.maximum(acc, LO), HI)
    tl.store(dst + tl.load(row + OUT_OFF) + idx, acc.to(dst.dtype.element_ty), mask=mask)


def _nn_row_starts(params: np.ndarray, out_h: np.ndarray, needed: bool
                   ) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """float32 `(m0 * .5 + m2) + m1 * (y + .5)` per output row (x then y rows of each sample),
    rounded step by step as DALI's CPU warp does (NumPy float32: no fused multiply-add)."""
    if not needed:
        return np.zeros(1, np.float32), np.zeros(len(out_h), np.int64)
    parts, offs, at = [], np.zeros(len(out_h), np.int64), 0
    for i, rows in enumerate(out_h):
        ys = np.arange(int(rows), dtype=np.float32) + np.float32(0.5)
        m = params[i]
        for r in (0, 4):  # x row, y row of the 3x4 table
            parts.append((m[r] * np.float32(0.5) + m[r + 3]) + m[r + 1] * ys)
        offs[i] = at
        at += 2 * int(rows)
    return (np.concatenate(parts) if parts else np.zeros(1, np.float32)), offs


def affine_sample_gpu(run: GpuRun, out: GpuBatch, inp: GpuBatch, call: Call) -> None:
    """Build the sample (int64) and parameter (float32) tables; launch once."""
    layout = call.inputs[0].layout or "HWC"
    n = inp.batch_size
    frames = inp.extents("F", layout)[:, 0]
    in_dhwc = inp.extents("DHWC", layout)
    out_dhw = out.extents("DHW", layout)
    samples = np.concatenate([inp.offsets[:, None], out.offsets[:, None], frames[:, None],
                              in_dhwc, out_dhw], axis=1).astype(np.int64)  # fmt: skip
    mats = np.asarray(call.affine_matrix, np.float64).reshape(n, -1)
    ndim = 3 if "D" in layout else 2
    full = np.zeros((n, 3, 4))
    if ndim == 3:
        full[:] = mats.reshape(n, 3, 4)
    else:  # (x, y) rows; the z column and row stay zero
        m2 = mats.reshape(n, 2, 3)
        full[:, :2, :2], full[:, :2, 3] = m2[:, :, :2], m2[:, :, 2]
    params = np.zeros((n, int(NPAR)), np.float32)
    params[:, :12] = full.reshape(n, 12)
    fill = call.affine_fill
    params[:, int(FILL_VALUE)] = 0.0 if fill is None else fill
    out_sizes = frames * np.prod(out_dhw, axis=1) * in_dhwc[:, 3]
    tiles = tile_table(out_sizes, TILE)
    is_int = not out.dtype.is_float
    info = np.iinfo(out.dtype.numpy_dtype) if is_int else None
    starts, start_offs = _nn_row_starts(params, out_dhw[:, 1], ndim == 2 and
                                        int(call.affine_interp) == 0)  # fmt: skip
    run.launch(_affine_kernel, (len(tiles),), inp.data, out.data, samples, params, tiles,
               starts, start_offs, NDIM=ndim, INTERP=int(call.affine_interp),
               FILL=fill is not None, ROUND=is_int,
               LO=float(info.min) if info is not None else 0.0,
               HI=float(info.max) if info is not None else 0.0, BLOCK=TILE)  # fmt: skip


@register(warp_affine.schema, "gpu")
def warp_affine_gpu(run: GpuRun, out: GpuBatch, inp: GpuBatch, mtx: GpuBatch | None,
                    call: Call) -> None:  # fmt: skip
    """The matrix input (if any) was folded into `call.affine_matrix` by infer."""
    affine_sample_gpu(run, out, inp, call)
