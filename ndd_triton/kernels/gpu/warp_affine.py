"""Affine sampling on the GPU, shared by warp_affine and rotate: one launch per ragged batch.

Images and volumes share the kernel (NDIM constexpr: 4 or 8 taps); images have D = 1.

Each program covers a block of BY output rows of one plane (frame x depth slice) of one sample
and walks them BX pixels at a time (a program finds its sample and its tile, plane major,
then row block, then column block, from a per-sample table: `_tiles`); each lane is one output
pixel and reads / writes its CH channels (constexpr when the batch has one channel count <= 4)
next to each other. Per-sample values (sizes, the map, the fill) are loaded once per program;
addresses inside a plane are int32 (int64 only for huge planes, I64). The per-sample inverse
map (3x4; images: z column and row zero) and fill value travel in a float32 table next to the
int64 sample table; the source point of output pixel `(x, y)` is `M @ [x + .5, y + .5, 1] - .5`
in pixel indices, sampled NN (`floor(p + .5)`; 2-D: DALI's accumulated row coordinates, see
`_affine_kernel`) or bilinearly, with `fill_value` for taps outside the source (FILL) or clamped
tap indices. fp32 math; integer outputs round half away, saturate.
"""

from __future__ import annotations

import numpy as np
import triton
import triton.language as tl

from ndd_triton.kernels import register
from ndd_triton.kernels.gpu._tables import GpuBatch, GpuRun
from ndd_triton.kernels.gpu._tiles import (
    _helper_find_tile,
    block_tile_counts,
    grid_of,
    tile_starts,
)
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
# Program shape: BY rows x BX pixels per step (4 warps; a warp covers a row segment), up to SPAN
# pixels per program. NN images walk whole rows (the accumulated x coordinate runs from the row
# start) in narrower steps: each step hands the row's running coordinate to its BX lanes one by
# one. Measured on an H100 (rotate 15 degrees, 32 480x640x3 uint8, LINEAR): 2x64 117 us, 4x32
# 136 us, 1x256 161 us, 16x8 (2-D warp footprints) 427 us; NN: 4x32 143 us, 2x64 244 us.
BLOCK_Y, BLOCK_X, SPAN = 2, 64, 512
ROW_BLOCK_Y, ROW_BLOCK_X = 4, 32
I32_LIMIT = 2**31


@triton.jit
def _helper_axis(i, n, I64: tl.constexpr):
    """Tap index `i` clamped to `[0, n)` (-1 on an empty axis; int64 when I64) and whether
    `i` lies inside."""
    inside = (i >= 0) & (i < n)
    ci = tl.minimum(tl.maximum(i, 0), n - 1)
    if I64:
        ci = ci.to(tl.int64)
    return ci, inside


@triton.jit
def _helper_bilinear_taps(sx, sy, w, h, I64: tl.constexpr):
    """The 2x2 taps around source point (sx, sy) (pixel indices): the fractions `fx`, `fy` and
    per axis the two clamped tap indices and whether each lies inside (`_helper_axis`)."""
    x0f = tl.floor(sx)
    y0f = tl.floor(sy)
    ix = x0f.to(tl.int32)
    iy = y0f.to(tl.int32)
    cx0, inx0 = _helper_axis(ix, w, I64)
    cx1, inx1 = _helper_axis(ix + 1, w, I64)
    cy0, iny0 = _helper_axis(iy, h, I64)
    cy1, iny1 = _helper_axis(iy + 1, h, I64)
    return sx - x0f, sy - y0f, cx0, inx0, cx1, inx1, cy0, iny0, cy1, iny1


@triton.jit
def _helper_tap(ptr, ok, inside, fill, FILL: tl.constexpr):
    """One tap as float32: `fill` where it lies outside the source (FILL), else the pixel at
    its clamped index (`ok`: lane in range and, without FILL, a non-empty source)."""
    if FILL:
        v = tl.load(ptr, mask=ok & inside, other=0).to(tl.float32)
        v = tl.where(inside, v, fill)
    else:
        v = tl.load(ptr, mask=ok, other=0).to(tl.float32)
    return v


@triton.jit
def _helper_coord(m0, m1, m2, m3, x, y, z, extent):
    """Source pixel-index coordinate `M[r] @ (x, y, z, 1) - .5`, clamped to a safe range."""
    v = m0 * x + m1 * y
    v = v + m2 * z + m3 - 0.5
    # keep coordinates in a range where the int conversion cannot overflow
    return tl.minimum(tl.maximum(v, -4.0), extent.to(tl.float32) + 4.0)


@triton.jit
def _helper_blend(p00, p01, p10, p11, ok, i00, i01, i10, i11, fx, fy, fill,
                  FILL: tl.constexpr):  # fmt: skip
    """Bilinear blend of the 2x2 taps at `p..` (inside flags `i..`)."""
    v00 = _helper_tap(p00, ok, i00, fill, FILL)
    v01 = _helper_tap(p01, ok, i01, fill, FILL)
    v10 = _helper_tap(p10, ok, i10, fill, FILL)
    v11 = _helper_tap(p11, ok, i11, fill, FILL)
    top = v00 + fx * (v01 - v00)
    bottom = v10 + fx * (v11 - v10)
    return top + fy * (bottom - top)


@triton.jit
def _affine_kernel(src, dst, samples, ptable, tiles, NDIM: tl.constexpr, INTERP: tl.constexpr,
                   FILL: tl.constexpr, ROUND: tl.constexpr, LO: tl.constexpr, HI: tl.constexpr,
                   CH: tl.constexpr, I64: tl.constexpr, BY: tl.constexpr, BX: tl.constexpr,
                   SPAN: tl.constexpr):  # fmt: skip
    """Rows of one output plane: dst[f, z, y, x, ch] = src sampled at M @ (p + .5, 1) - .5.

    2-D NN follows DALI's CPU warp: row `y` starts at `(m00 * .5 + m03) + m01 * (y + .5)`
    and adds the x step once per pixel, in float32 (the program walks the whole row, x0 = 0),
    so near-ties round as in DALI."""
    # program -> sample, plane = frame * out_d + z, rows y0 + [0, BY), columns x0 + [0, SPAN);
    # lane (r, i) of a step at column xb -> output pixel (xb + i, y0 + r), all its channels
    sample, t = _helper_find_tile(tiles)
    row = samples + sample * NCOL
    prow = ptable + sample * NPAR
    d = tl.load(row + D)
    h = tl.load(row + H)
    w = tl.load(row + W)
    out_d = tl.load(row + OUT_D)
    out_h = tl.load(row + OUT_H)
    out_w = tl.load(row + OUT_W)
    # tile t of the sample: plane major, then row block, then column block (int32 divmods)
    row_blocks = ((out_h.to(tl.int32) - 1) // BY + 1).to(tl.int32)
    if SPAN == 0:  # whole rows: one column block
        plane = t // row_blocks
        y0 = (t - plane * row_blocks) * BY
        x0 = t * 0
    else:
        col_blocks = (out_w.to(tl.int32) - 1) // SPAN + 1
        plane_row = t // col_blocks
        x0 = (t - plane_row * col_blocks) * SPAN
        plane = plane_row // row_blocks
        y0 = (plane_row - plane * row_blocks) * BY
    if CH > 0:  # noqa: SIM108 (constexpr: one channel count in the batch, checked by the host)
        nch = CH
    else:
        nch = tl.load(row + C)
    frame = plane // out_d.to(tl.int32)
    z = plane - frame * out_d.to(tl.int32)
    src_plane = src + tl.load(row + IN_OFF) + frame * (d * h * w * nch)
    dst_plane = dst + tl.load(row + OUT_OFF) + plane.to(tl.int64) * (out_h * out_w * nch)
    idx_t = tl.int64 if I64 else tl.int32
    sd = d.to(idx_t)
    sh = h.to(idx_t)
    sw = w.to(idx_t)
    ow = out_w.to(idx_t)
    m00 = tl.load(prow)
    m01 = tl.load(prow + 1)
    m02 = tl.load(prow + 2)
    m03 = tl.load(prow + 3)
    m10 = tl.load(prow + 4)
    m11 = tl.load(prow + 5)
    m12 = tl.load(prow + 6)
    m13 = tl.load(prow + 7)
    fill = tl.load(prow + FILL_VALUE)
    nonempty = (d > 0) & (h > 0) & (w > 0)
    lx = tl.arange(0, BX)[None, :]
    ys = y0 + tl.arange(0, BY)[:, None]
    row_ok = ys < out_h
    if FILL:  # noqa: SIM108 (a constexpr branch)
        load_rows = row_ok
    else:  # an empty source has no pixel to clamp to: 0, as on the CPU
        load_rows = ys < tl.where(nonempty, out_h, 0)
    yf = ys.to(tl.float32) + 0.5
    zf = z.to(tl.float32) + 0.5
    dst_row = dst_plane + ys.to(idx_t) * ow * nch
    if SPAN > 0:  # noqa: SIM108 (a constexpr branch: only one side is compiled)
        x_end = tl.minimum(x0 + SPAN, out_w).to(tl.int32)
    else:
        x_end = out_w.to(tl.int32)
    if NDIM == 3:
        m20 = tl.load(prow + 8)
        m21 = tl.load(prow + 9)
        m22 = tl.load(prow + 10)
        m23 = tl.load(prow + 11)
    if NDIM == 2 and INTERP == 0:  # DALI's row starts (x0 is 0 here)
        ax = (m00 * 0.5 + m03) + m01 * yf
        ay = (m10 * 0.5 + m13) + m11 * yf
    for xb in range(x0, x_end, BX):
        xs = xb + lx
        col_ok = xs < x_end
        mask = row_ok & col_ok
        ok = load_rows & col_ok
        dst_pix = dst_row + xs.to(idx_t) * nch
        if NDIM == 2 and INTERP == 0:
            # accumulate: lane i gets the row start plus i + xb steps, added one by one
            sx = tl.zeros([BY, BX], tl.float32)
            sy = tl.zeros([BY, BX], tl.float32)
            for k in tl.static_range(BX):
                sx = tl.where(lx == k, ax, sx)
                sy = tl.where(lx == k, ay, sy)
                ax = ax + m00
                ay = ay + m10
            sx = tl.minimum(tl.maximum(sx, -4.0), w.to(tl.float32) + 4.0)
            sy = tl.minimum(tl.maximum(sy, -4.0), h.to(tl.float32) + 4.0)
            cx, inx = _helper_axis(tl.floor(sx).to(tl.int32), sw, I64)
            cy, iny = _helper_axis(tl.floor(sy).to(tl.int32), sh, I64)
            p = src_plane + (cy * sw + cx) * nch
            inside = inx & iny
        else:
            xf = xs.to(tl.float32) + 0.5
            sx = _helper_coord(m00, m01, m02, m03, xf, yf, zf, w)
            sy = _helper_coord(m10, m11, m12, m13, xf, yf, zf, h)
            if NDIM == 3:
                sz = _helper_coord(m20, m21, m22, m23, xf, yf, zf, d)
            if INTERP == 0:  # volumes: nearest pixel centre
                cx, inx = _helper_axis(tl.floor(sx + 0.5).to(tl.int32), sw, I64)
                cy, iny = _helper_axis(tl.floor(sy + 0.5).to(tl.int32), sh, I64)
                cz, inz = _helper_axis(tl.floor(sz + 0.5).to(tl.int32), sd, I64)
                p = src_plane + ((cz * sh + cy) * sw + cx) * nch
                inside = inx & iny & inz
            else:
                fx, fy, cx0, inx0, cx1, inx1, cy0, iny0, cy1, iny1 = _helper_bilinear_taps(
                    sx, sy, sw, sh, I64)  # fmt: skip
                if NDIM == 3:
                    z0f = tl.floor(sz)
                    fz = sz - z0f
                    iz = z0f.to(tl.int32)
                    cz0, inz0 = _helper_axis(iz, sd, I64)
                    cz1, inz1 = _helper_axis(iz + 1, sd, I64)
                    ra = src_plane + (cz0 * sh + cy0) * sw * nch  # near plane, top row
                    rb = src_plane + (cz0 * sh + cy1) * sw * nch
                    rc = src_plane + (cz1 * sh + cy0) * sw * nch  # far plane
                    rd = src_plane + (cz1 * sh + cy1) * sw * nch
                    ia = iny0 & inz0
                    ib = iny1 & inz0
                    ic = iny0 & inz1
                    idd = iny1 & inz1
                else:
                    ra = src_plane + cy0 * sw * nch
                    rb = src_plane + cy1 * sw * nch
                    ia = iny0
                    ib = iny1
                ox0 = cx0 * nch
                ox1 = cx1 * nch
        for ch in range(nch):
            if INTERP == 0:
                acc = _helper_tap(p + ch, ok, inside, fill, FILL)
            elif NDIM == 3:
                near = _helper_blend(ra + ox0 + ch, ra + ox1 + ch, rb + ox0 + ch, rb + ox1 + ch,
                                     ok, ia & inx0, ia & inx1, ib & inx0, ib & inx1, fx, fy,
                                     fill, FILL)  # fmt: skip
                far = _helper_blend(rc + ox0 + ch, rc + ox1 + ch, rd + ox0 + ch, rd + ox1 + ch,
                                    ok, ic & inx0, ic & inx1, idd & inx0, idd & inx1, fx, fy,
                                    fill, FILL)  # fmt: skip
                acc = near + fz * (far - near)
            else:
                acc = _helper_blend(ra + ox0 + ch, ra + ox1 + ch, rb + ox0 + ch, rb + ox1 + ch,
                                    ok, ia & inx0, ia & inx1, ib & inx0, ib & inx1, fx, fy,
                                    fill, FILL)  # fmt: skip
            if ROUND and LO == 0.0:  # unsigned output: negatives saturate to 0 either way
                acc = tl.minimum(tl.maximum(tl.floor(acc + 0.5), LO), HI)
            elif ROUND:  # integer output: round half away from zero, then saturate
                acc = tl.where(acc < 0, tl.ceil(acc - 0.5), tl.floor(acc + 0.5))
                acc = tl.minimum(tl.maximum(acc, LO), HI)
            tl.store(dst_pix + ch, acc.to(dst.dtype.element_ty), mask=mask)


def affine_sample_gpu(run: GpuRun, out: GpuBatch, inp: GpuBatch, call: Call) -> None:
    """Build the sample (int64), parameter (float32) and tile tables; launch once."""
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
    interp = int(call.affine_interp)
    channels = in_dhwc[:, 3]
    uniform = n > 0 and bool((channels == channels[0]).all()) and 1 <= channels[0] <= 4
    whole_rows = ndim == 2 and interp == 0  # DALI's NN coordinates accumulate along the row
    span = 0 if whole_rows else SPAN
    by, bx = (ROW_BLOCK_Y, ROW_BLOCK_X) if whole_rows else (BLOCK_Y, BLOCK_X)
    tiles = tile_starts(
        block_tile_counts(
            frames * out_dhw[:, 0] * (channels > 0),
            out_dhw[:, 1],
            out_dhw[:, 2],
            by,
            span or max(int(out_dhw[:, 2].max(initial=0)), 1),
        )
    )
    planes_in = np.prod(in_dhwc, axis=1)
    planes_out = out_dhw[:, 1] * out_dhw[:, 2] * channels
    big = max(int(planes_in.max(initial=0)), int(planes_out.max(initial=0))) >= I32_LIMIT
    is_int = not out.dtype.is_float
    info = np.iinfo(out.dtype.numpy_dtype) if is_int else None
    run.launch(_affine_kernel, (grid_of(tiles),), inp.data, out.data, samples, params, tiles,
               NDIM=ndim, INTERP=interp, FILL=fill is not None, ROUND=is_int,
               LO=float(info.min) if info is not None else 0.0,
               HI=float(info.max) if info is not None else 0.0,
               CH=int(channels[0]) if uniform else 0, I64=big, BY=by, BX=bx,
               SPAN=span)  # fmt: skip


@register(warp_affine.schema, "gpu", replay=True)
def warp_affine_gpu(run: GpuRun, out: GpuBatch, inp: GpuBatch, mtx: GpuBatch | None,
                    call: Call) -> None:  # fmt: skip
    """The matrix input (if any) was folded into `call.affine_matrix` by infer."""
    affine_sample_gpu(run, out, inp, call)
