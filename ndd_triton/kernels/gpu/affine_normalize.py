"""An affine warp with crop_mirror_normalize's store in one pass (compile mode's fusion of
`rotate`/`warp_affine` -> [`flip`] -> `crop_mirror_normalize` on the GPU, `affine_cmn`).

Each output pixel of the normalisation's window (a lane) is the warp's pixel it is, computed
as `warp_affine._affine_kernel` computes it for LINEAR 2-D images: the source point
`M @ (x + .5, y + .5, .5, 1) - .5` by the same helper (`_helper_coord`), found once per pixel,
and per channel the same four taps with the same clamping and fill (`_helper_axis`,
`_helper_blend`), the same blend order and the warp's rounding to its uint8 output.
crop_mirror_normalize's `v * gain[c] + bias[c]` follows and the value is stored at its HWC or
CHW position, mirrored per sample. Only the window is computed; no warped image is written or
read. So the bytes are those of the ops run one by one (launched without FMA contraction, as
every kernel here). `affine_geometry` (no normalisation) stores `v * 1 + 0` into uint8: `v`.

The warp may read its input through slices, crops and flips folded into the pass
(`runtime/fusion_geometry.py`): pixel `(row, col)` of the warp's input is element
`IN_OFF + (row * ROW_STEP + col * COL_STEP) * 3` of the source buffer (signed steps; the
warp's extents are the view's).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import triton
import triton.language as tl

from ndd_triton.kernels.gpu._tables import GpuBatch, GpuRun
from ndd_triton.kernels.gpu._tiles import _helper_find_tile, grid_of, tile_starts
from ndd_triton.kernels.gpu.warp_affine import (
    _helper_bilinear_taps,
    _helper_blend,
    _helper_coord,
)

IN_OFF: tl.constexpr = tl.constexpr(0)
OUT_OFF: tl.constexpr = tl.constexpr(1)
ROW_STEP: tl.constexpr = tl.constexpr(2)  # source pixels from one input row to the next
COL_STEP: tl.constexpr = tl.constexpr(3)  # ... and from one input column to the next
H_IN: tl.constexpr = tl.constexpr(4)
W_IN: tl.constexpr = tl.constexpr(5)
H_OUT: tl.constexpr = tl.constexpr(6)  # the window's rows and columns
W_OUT: tl.constexpr = tl.constexpr(7)
Y0: tl.constexpr = tl.constexpr(8)  # the window's first row and column of the warped image
X0: tl.constexpr = tl.constexpr(9)
MIRROR: tl.constexpr = tl.constexpr(10)
WARP_H: tl.constexpr = tl.constexpr(11)  # the warped image's extents (`PAD` only)
WARP_W: tl.constexpr = tl.constexpr(12)
NCOL: tl.constexpr = tl.constexpr(13)
# float table: the warp's 2x4 map row by row (z column zero), the fill, gains, biases, and
# crop_mirror_normalize's pad fill
FILL_VALUE: tl.constexpr = tl.constexpr(8)
GAIN: tl.constexpr = tl.constexpr(9)
BIAS: tl.constexpr = tl.constexpr(12)
PAD_FILL: tl.constexpr = tl.constexpr(15)
NPAR: tl.constexpr = tl.constexpr(18)
TILE = 256  # pixels per program


@triton.jit
def _affine_normalize_kernel(src, dst, samples, ptable, tiles, FILL: tl.constexpr,
                             CHW: tl.constexpr, STEPS: tl.constexpr,
                             BLOCK: tl.constexpr, PAD: tl.constexpr = False):  # fmt: skip
    """One tile of one sample's window pixels (HWC, 3 channels): each lane one pixel, its
    source point and taps found once, then per channel warped, normalised and stored
    (`STEPS`: a sample's column step may be other than 1, a flip folded into the read; `PAD`:
    the window may reach beyond the warped image, whose missing pixels take the pad fill)."""
    sample, tile = _helper_find_tile(tiles)
    sample = sample.to(tl.int64)
    row = samples + sample * NCOL
    prow = ptable + sample * NPAR
    h = tl.load(row + H_IN).to(tl.int32)
    w = tl.load(row + W_IN).to(tl.int32)
    h_out = tl.load(row + H_OUT).to(tl.int32)
    w_out = tl.load(row + W_OUT).to(tl.int32)
    y0 = tl.load(row + Y0).to(tl.int32)
    x0 = tl.load(row + X0).to(tl.int32)
    mirror = tl.load(row + MIRROR)
    row_step = tl.load(row + ROW_STEP).to(tl.int32)
    pix = tile * BLOCK + tl.arange(0, BLOCK)
    mask = pix < h_out * w_out
    col = pix % w_out
    j = pix // w_out
    m00 = tl.load(prow)
    m01 = tl.load(prow + 1)
    m02 = tl.load(prow + 2)
    m03 = tl.load(prow + 3)
    m10 = tl.load(prow + 4)
    m11 = tl.load(prow + 5)
    m12 = tl.load(prow + 6)
    m13 = tl.load(prow + 7)
    fill = tl.load(prow + FILL_VALUE)
    # the warp's output pixel (x0 + col, y0 + j) of plane z = 0, as `_affine_kernel` maps it
    xf = (x0 + col).to(tl.float32) + 0.5
    yf = (y0 + j).to(tl.float32) + 0.5
    zf = tl.zeros([BLOCK], tl.int32).to(tl.float32) + 0.5
    sx = _helper_coord(m00, m01, m02, m03, xf, yf, zf, w)
    sy = _helper_coord(m10, m11, m12, m13, xf, yf, zf, h)
    fx, fy, cx0, inx0, cx1, inx1, cy0, iny0, cy1, iny1 = _helper_bilinear_taps(sx, sy, w, h,
                                                                               False)  # fmt: skip
    if FILL:  # noqa: SIM108 (a static if: Triton compiles one branch)
        ok = mask
    else:  # an empty source has no pixel to clamp to: 0, as the warp stores there
        ok = pix < tl.where((h > 0) & (w > 0), h_out * w_out, 0)
    if PAD:  # pixels beyond the warped image read nothing
        inside = (y0 + j >= 0) & (y0 + j < tl.load(row + WARP_H).to(tl.int32)) & \
            (x0 + col >= 0) & (x0 + col < tl.load(row + WARP_W).to(tl.int32))  # fmt: skip
        ok = ok & inside
    if STEPS:
        col_step = tl.load(row + COL_STEP).to(tl.int32)
        ox0 = cx0 * col_step
        ox1 = cx1 * col_step
    else:
        ox0 = cx0
        ox1 = cx1
    base = src + tl.load(row + IN_OFF)
    p00 = base + ((cy0 * row_step + ox0) * 3).to(tl.int64)
    p01 = base + ((cy0 * row_step + ox1) * 3).to(tl.int64)
    p10 = base + ((cy1 * row_step + ox0) * 3).to(tl.int64)
    p11 = base + ((cy1 * row_step + ox1) * 3).to(tl.int64)
    out_col = tl.where(mirror != 0, w_out - 1 - col, col)
    if CHW:  # noqa: SIM108 (a static if: Triton compiles one branch)
        at = j * w_out + out_col  # channel c's plane starts c * h_out * w_out further
    else:
        at = (j * w_out + out_col) * 3
    out = dst + tl.load(row + OUT_OFF) + at.to(tl.int64)
    for c in tl.static_range(3):
        acc = _helper_blend(p00 + c, p01 + c, p10 + c, p11 + c, ok, iny0 & inx0, iny0 & inx1,
                            iny1 & inx0, iny1 & inx1, fx, fy, fill, FILL)  # fmt: skip
        acc = tl.minimum(tl.maximum(tl.floor(acc + 0.5), 0.0), 255.0)  # the warp's uint8 store
        value = acc * tl.load(prow + GAIN + c) + tl.load(prow + BIAS + c)
        if PAD:
            value = tl.where(inside, value, tl.load(prow + PAD_FILL + c))
        if CHW:  # noqa: SIM108 (a static if: Triton compiles one branch)
            dst_c = out + c * (h_out * w_out).to(tl.int64)
        else:
            dst_c = out + c
        tl.store(dst_c, value.to(dst.dtype.element_ty), mask=mask)


def launch_affine_normalize(run: GpuRun, out: GpuBatch, inp: GpuBatch, warp: Any,
                            gain: np.ndarray, bias: np.ndarray, mirror: np.ndarray, chw: bool,
                            window: tuple[np.ndarray, np.ndarray],
                            source: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
                            pad: tuple[np.ndarray, np.ndarray] | None = None) -> None:  # fmt: skip
    """Warp HWC uint8 RGB images as the LINEAR 2-D rotate/warp_affine call `warp` does (its
    `affine_matrix`, `affine_fill`), keep crop_mirror_normalize's `window` (`(start, size)`,
    `[N, 2]` rows and columns, inside the warped image unless `pad` is given: the warped
    image's extents `[N, 2]` and the fill `[N, 3]` stored beyond them) and store
    `v * gain + bias` (`[N, 3]`) mirrored per sample, in one launch. `source`: per sample,
    the element offset of the warp's input pixel (0, 0) in `inp.data` and the pixel steps from
    one of its rows and one of its columns to the next (default: `inp`'s samples
    themselves)."""
    n = len(out.offsets)
    extents = np.asarray(warp.inputs[0].shapes, np.int64)[:, :2]
    if source is None:
        source = (inp.offsets, extents[:, 1], np.ones(n, np.int64))
    start, size = (np.asarray(v, np.int64).reshape(n, 2) for v in window)
    samples = np.empty((n, int(NCOL)), np.int64)
    samples[:, 0], samples[:, 1] = source[0], out.offsets
    samples[:, 2], samples[:, 3] = source[1], source[2]
    samples[:, 4:6], samples[:, 6:8], samples[:, 8:10] = extents, size, start
    samples[:, 10] = np.asarray(mirror).reshape(n) != 0
    samples[:, 11:13] = 0 if pad is None else np.asarray(pad[0], np.int64).reshape(n, 2)
    maps = np.asarray(warp.affine_matrix, np.float64).reshape(n, 2, 3)
    params = np.zeros((n, int(NPAR)), np.float32)
    params[:, 0:2], params[:, 3] = maps[:, 0, :2], maps[:, 0, 2]  # (z column zero)
    params[:, 4:6], params[:, 7] = maps[:, 1, :2], maps[:, 1, 2]
    fill = warp.affine_fill
    params[:, int(FILL_VALUE)] = 0.0 if fill is None else fill
    params[:, 9:12], params[:, 12:15] = np.asarray(gain)[:, :3], np.asarray(bias)[:, :3]
    if pad is not None:
        params[:, 15:18] = np.asarray(pad[1])[:, :3]
    tiles = tile_starts(-(-(size[:, 0] * size[:, 1]) // TILE))
    run.launch(_affine_normalize_kernel, (grid_of(tiles),), inp.data, out.data, samples,
               params, tiles, FILL=fill is not None, CHW=chw,
               STEPS=bool((np.asarray(source[2]) != 1).any()), BLOCK=TILE,
               PAD=pad is not None)  # fmt: skip
