"""A 2-D resample with crop_mirror_normalize's store in one pass (compile mode's fusion of
`random_resized_crop`/`resize` -> [`flip`] -> `crop_mirror_normalize`, the RN50 chain).

Each output element evaluates both separable passes of `kernels/gpu/resize.py` itself, in the
same fp32 order: for each H tap, the W pass's sum over its taps (what the W pass would store as
its float32 intermediate), then the H pass's weighted sum of those, then the resize's rounding
to the uint8 output (saturate, round half away from zero). crop_mirror_normalize's
`v * gain[c] + bias[c]` follows and the value is stored at its HWC or CHW position, mirrored
per sample. No intermediate batch is written: one read of the source taps, one write. When
crop_mirror_normalize crops (a window inside the resized image: the validation recipe's
`resize(resize_shorter=256) -> crop_mirror_normalize(crop=224)`), only the window's elements
are computed, with the taps of the resized rows and columns they are.
The taps are resize's: for the triangle filters the pass computes them itself (one launch per
batch, `_resample_normalize_taps_kernel`, with the tap-table kernel's helpers of
`_resample_tables`), or reads them from tables built by one launch before it where a sample has
more than `MAX_INLINE_TAPS` taps on an axis; other filters read tables built on the host
(`kernels._resample`). Either way the bytes are those of the three ops run one by one.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import triton
import triton.language as tl

from ndd_triton.kernels._resample import axis_tables
from ndd_triton.kernels.gpu._philox import _helper_position
from ndd_triton.kernels.gpu._resample_tables import (
    TrianglePlan,
    _helper_plan_taps,
    _helper_tap,
    _helper_tap_total,
    call_triangle_plan,
    launch_triangle_tables,
)
from ndd_triton.kernels.gpu._tables import GpuBatch, GpuRun, draw_words
from ndd_triton.kernels.gpu._tiles import _helper_find_tile, grid_of, tile_starts
from ndd_triton.kernels.gpu.random_resized_crop import _helper_axis_plan, _helper_window
from ndd_triton.ops.random_resized_crop import tap_bound
from ndd_triton.ops.schema import DRAWS_ON_DEVICE

IN_OFF: tl.constexpr = tl.constexpr(0)
OUT_OFF: tl.constexpr = tl.constexpr(1)
ROW_STEP: tl.constexpr = tl.constexpr(2)  # source pixels from one row to the next (signed)
H_OUT: tl.constexpr = tl.constexpr(3)
W_OUT: tl.constexpr = tl.constexpr(4)
TAB_H: tl.constexpr = tl.constexpr(5)  # first row of the sample in the H tap tables
TAB_W: tl.constexpr = tl.constexpr(6)
MIRROR: tl.constexpr = tl.constexpr(7)
COL_STEP: tl.constexpr = tl.constexpr(8)  # source pixels from one column to the next (signed)
Y0: tl.constexpr = tl.constexpr(9)  # the window's first resized row and column (`PAD` only)
X0: tl.constexpr = tl.constexpr(10)
RES_H: tl.constexpr = tl.constexpr(11)  # the resize's output extents (`PAD` only)
RES_W: tl.constexpr = tl.constexpr(12)
NCOL: tl.constexpr = tl.constexpr(13)
AFFINE: tl.constexpr = tl.constexpr(9)  # per sample: gain, bias, fill of the 3 channels
TILE = 1024


@triton.jit
def _resample_normalize_kernel(src, dst, samples, tiles, index_h, weight_h, index_w, weight_w,
                               affine, TAPS_H: tl.constexpr, TAPS_W: tl.constexpr,
                               CHW: tl.constexpr, BLOCK: tl.constexpr,
                               STEPS: tl.constexpr = False, PAD: tl.constexpr = False):  # fmt: skip
    """One tile of one sample's resized HWC (3-channel) elements, normalised and stored
    (`STEPS`: a sample's column step may be other than 1, a flip folded into the pass; `PAD`:
    the window may reach beyond the resized image, whose missing elements take the fill)."""
    sample, tile = _helper_find_tile(tiles)
    sample = sample.to(tl.int64)
    first = tile.to(tl.int64) * BLOCK
    row = samples + sample * NCOL
    row_step = tl.load(row + ROW_STEP).to(tl.int32)
    h_out = tl.load(row + H_OUT).to(tl.int32)
    w_out = tl.load(row + W_OUT).to(tl.int32)
    tab_h = tl.load(row + TAB_H).to(tl.int32)
    tab_w = tl.load(row + TAB_W).to(tl.int32)
    mirror = tl.load(row + MIRROR)
    src_base = src + tl.load(row + IN_OFF)
    idx = first.to(tl.int32) + tl.arange(0, BLOCK)
    mask = idx < h_out * w_out * 3
    c = idx % 3
    jw = idx // 3
    w = jw % w_out
    j = jw // w_out
    live = mask
    if PAD:  # elements beyond the resized image read nothing (their table rows do not exist)
        ry = tl.load(row + Y0).to(tl.int32) + j
        rx = tl.load(row + X0).to(tl.int32) + w
        inside = (ry >= 0) & (ry < tl.load(row + RES_H).to(tl.int32)) & (rx >= 0) & \
            (rx < tl.load(row + RES_W).to(tl.int32))  # fmt: skip
        live = mask & inside
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for kh in range(TAPS_H):
        th = (tab_h + j) * TAPS_H + kh
        sh = tl.load(index_h + th, mask=live, other=0)
        wh = tl.load(weight_h + th, mask=live, other=0.0)
        at_row = sh * row_step
        part = tl.zeros([BLOCK], dtype=tl.float32)  # the W pass's value at row `sh`
        for kw in range(TAPS_W):
            tw = (tab_w + w) * TAPS_W + kw
            sw = tl.load(index_w + tw, mask=live, other=0)
            ww = tl.load(weight_w + tw, mask=live, other=0.0)
            if STEPS:  # noqa: SIM108 (a static if: Triton compiles one branch)
                at = at_row + sw * tl.load(row + COL_STEP).to(tl.int32)
            else:
                at = at_row + sw
            v = tl.load(src_base + (at * 3 + c).to(tl.int64), mask=live,
                        other=0).to(tl.float32)  # fmt: skip
            part += ww * v
        acc += wh * part
    acc = tl.minimum(tl.maximum(acc, 0.0), 255.0)  # the resize's uint8 store
    acc = tl.where(acc < 0, tl.ceil(acc - 0.5), tl.floor(acc + 0.5))
    gain = tl.load(affine + sample * AFFINE + c, mask=mask, other=0.0)
    bias = tl.load(affine + sample * AFFINE + 3 + c, mask=mask, other=0.0)
    value = acc * gain + bias
    if PAD:
        fill = tl.load(affine + sample * AFFINE + 6 + c, mask=mask, other=0.0)
        value = tl.where(inside, value, fill)
    col = tl.where(mirror != 0, w_out - 1 - w, w)
    if CHW:  # noqa: SIM108 (a static if: Triton compiles one branch)
        pos = c * (h_out * w_out) + j * w_out + col
    else:
        pos = (j * w_out + col) * 3 + c
    tl.store(dst + tl.load(row + OUT_OFF) + pos.to(tl.int64),
             value.to(dst.dtype.element_ty), mask=mask)  # fmt: skip


# The one-launch form (triangle filters): its sample table's columns (`_launch_inline_taps`
# stacks them in this order) and the plan rows (H origin, step, widen, radius, then W's)
T_IN_OFF: tl.constexpr = tl.constexpr(0)
T_OUT_OFF: tl.constexpr = tl.constexpr(1)
T_W_IN: tl.constexpr = tl.constexpr(2)
T_H_OUT: tl.constexpr = tl.constexpr(3)  # the window's rows and columns
T_W_OUT: tl.constexpr = tl.constexpr(4)
T_Y0: tl.constexpr = tl.constexpr(5)  # the window's first resized row and column
T_X0: tl.constexpr = tl.constexpr(6)
T_MIRROR: tl.constexpr = tl.constexpr(7)
T_IN_H: tl.constexpr = tl.constexpr(8)
T_OUT_H: tl.constexpr = tl.constexpr(9)  # the resize's output extents (the plans' n_out)
T_OUT_W: tl.constexpr = tl.constexpr(10)
T_BLOCKS: tl.constexpr = tl.constexpr(11)  # programs across the output columns
T_ROW_STEP: tl.constexpr = tl.constexpr(12)  # source pixels from one row, column to the next
T_COL_STEP: tl.constexpr = tl.constexpr(13)  # (signed: a flip folded into the pass)
T_NCOL: tl.constexpr = tl.constexpr(14)
TILE_TAPS = 256  # output columns x H taps per program (registers: a [cols, KH, 4] fp32 tile)
MAX_INLINE_TAPS = 32  # bound of a sample's taps per axis for the inline form (registers)
ROWS_PER_PROGRAM = 16  # output rows per program of the inline form (W taps, draw made once)
NUM_WARPS = 0  # the inline form's warps per program (0: Triton's default, 4)


@triton.jit
def _resample_normalize_taps_kernel(src, dst, samples, plans, tiles, affine, draws, attempts,
                                    K: tl.constexpr, KH: tl.constexpr, KW: tl.constexpr,
                                    CHW: tl.constexpr,
                                    COLS: tl.constexpr, DRAWN: tl.constexpr,
                                    ANTIALIAS: tl.constexpr, A: tl.constexpr,
                                    PAD: tl.constexpr = False, ROWS: tl.constexpr = 1):  # fmt: skip
    """`ROWS` output rows' block of `COLS` columns of one sample, its taps computed here (`PAD`:
    the window may reach beyond the resized image, whose missing pixels take the fill). What
    depends only on the columns (the W taps, the draw of the window) is made once per program.

    `DRAWN`: the resample is a random_resized_crop drawing on the device; `plans` holds its
    constants and `draws` its RNG position, and the program draws the sample's window and
    makes its plans (`kernels/gpu/random_resized_crop`) instead of reading plan rows.

    The taps are those `_triangle_tables_kernel` writes (the same helpers: the plan's tap
    count, NumPy's pairwise weight sum, each weight's division and float32 cast), so the
    bytes are those of the tables + pass form. The H taps of the row are computed once; the
    W taps once per column and W tap, before the tap loop (a `[COLS, KW]` table: taking a tap's
    weights out of it costs a layout conversion of COLS floats, where weights computed in the
    loop cost one of the whole `[COLS, KH, 4]` tile, 8 KB, per tap). For each W tap, every H
    tap's partial sum (the W pass's value at that source row) gets its `ww * v` term in a
    `[COLS, KH, 4]` accumulator (each partial sum keeps the W pass's order), then the H pass
    sums the partials in tap order, each taken out of the accumulator exactly (a sum of one
    non-zero)."""
    sample, tile = _helper_find_tile(tiles)
    sample = sample.to(tl.int64)
    row = samples + sample * T_NCOL
    plan = plans + sample * 8
    blocks = tl.load(row + T_BLOCKS).to(tl.int32)
    band = tile // blocks
    j0 = band * ROWS  # the program's first output row (of the window)
    block = tile - band * blocks
    w_in = tl.load(row + T_W_IN).to(tl.int32)
    h_out = tl.load(row + T_H_OUT).to(tl.int32)
    w_out = tl.load(row + T_W_OUT).to(tl.int32)
    y0 = tl.load(row + T_Y0)
    x0 = tl.load(row + T_X0)
    mirror = tl.load(row + T_MIRROR)
    in_h = tl.load(row + T_IN_H)
    if DRAWN:
        # the position's four int32 words (`draw_words`), uploaded with the call's tables
        k0, k1, offset = _helper_position(tl.load(draws), tl.load(draws + 1),
                                          tl.load(draws + 2), tl.load(draws + 3))  # fmt: skip
        y, x, win_h, win_w = _helper_window(k0, k1, offset, plans, sample,
                                            in_h.to(tl.float64),
                                            tl.load(row + T_W_IN).to(tl.float64), attempts, A)
        origin_h, step_h, widen_h = _helper_axis_plan(y, win_h, tl.load(plans + 6),
                                                      tl.load(row + T_OUT_H), ANTIALIAS)
        origin_w, step_w, widen_w = _helper_axis_plan(x, win_w, tl.load(plans + 7),
                                                      tl.load(row + T_OUT_W), ANTIALIAS)
        radius_h = 1.0 * widen_h
        radius_w = 1.0 * widen_w
    else:
        origin_h, step_h = tl.load(plan), tl.load(plan + 1)
        widen_h, radius_h = tl.load(plan + 2), tl.load(plan + 3)
        origin_w, step_w = tl.load(plan + 4), tl.load(plan + 5)
        widen_w, radius_w = tl.load(plan + 6), tl.load(plan + 7)
    taps_h = _helper_plan_taps(origin_h, step_h, radius_h, tl.load(row + T_OUT_H), COLS)
    taps_w = _helper_plan_taps(origin_w, step_w, radius_w, tl.load(row + T_OUT_W), COLS)
    # this block's columns and their W taps (every tap of every column, before the tap loop
    # takes them out one by one, exactly: a sum of one non-zero)
    w = block * COLS + tl.arange(0, COLS)
    live_w = w < w_out
    c_w = origin_w + ((x0 + w).to(tl.float64) + 0.5) * step_w - 0.5
    start_w = tl.ceil(c_w - radius_w).to(tl.int64)
    total_w = _helper_tap_total(start_w, c_w, widen_w, taps_w, K)
    kw = tl.arange(0, KW)
    sw_all, ww_all = _helper_tap(start_w[:, None], c_w[:, None], widen_w, total_w[:, None],
                                 taps_w, w_in, kw[None, :])  # fmt: skip
    kh = tl.arange(0, KH)
    ch = tl.arange(0, 4)
    col_step = tl.load(row + T_COL_STEP).to(tl.int32)
    row_step = tl.load(row + T_ROW_STEP).to(tl.int32)
    src_base = src + tl.load(row + T_IN_OFF)
    gain = tl.load(affine + sample * AFFINE + ch, mask=ch < 3, other=0.0)
    bias = tl.load(affine + sample * AFFINE + 3 + ch, mask=ch < 3, other=0.0)
    if PAD:  # the fill, and the window's columns inside the resized image
        fill = tl.load(affine + sample * AFFINE + 6 + ch, mask=ch < 3, other=0.0)
        res_h = tl.load(row + T_OUT_H).to(tl.int32)
        rx = x0.to(tl.int32) + w
        inside_w = (rx >= 0) & (rx < tl.load(row + T_OUT_W).to(tl.int32))
    col = tl.where(mirror != 0, w_out - 1 - w, w)
    out_base = dst + tl.load(row + T_OUT_OFF)
    for r in range(ROWS):
        j = j0 + r
        # (vectors: the interpreter combines scalar and vector masks to int32, not to a mask)
        live = live_w & (j + tl.zeros_like(w) < h_out)
        # the row's H taps: source rows `[KH]` (H taps past the plan's count read row 0)
        c_h = origin_h + ((y0 + j).to(tl.float64) + 0.5) * step_h - 0.5
        start_h = tl.ceil(c_h - radius_h).to(tl.int64)
        total_h = _helper_tap_total(start_h, c_h, widen_h, taps_h, K)
        sh, _wh_all = _helper_tap(start_h, c_h, widen_h, total_h, taps_h, in_h, kh)
        reads = live
        if PAD:  # pixels beyond the resized image read nothing
            ry = y0.to(tl.int32) + j + tl.zeros_like(w)
            inside = (ry >= 0) & (ry < res_h) & inside_w
            reads = live & inside
        mask = reads[:, None, None] & (kh < taps_h)[None, :, None] & (ch < 3)[None, None, :]
        # [1, KH, 1]: the pixel index of each H tap's row
        rows = (sh * row_step)[None, :, None]
        part = tl.zeros([COLS, KH, 4], dtype=tl.float32)
        for k in range(taps_w):
            sw = tl.sum(tl.where(kw[None, :] == k, sw_all, 0), axis=1)
            ww = tl.sum(tl.where(kw[None, :] == k, ww_all, 0.0), axis=1)
            pix = (rows + (sw * col_step)[:, None, None]) * 3 + ch[None, None, :]
            v = tl.load(src_base + pix.to(tl.int64), mask=mask, other=0).to(tl.float32)
            part += ww[:, None, None] * v
        acc = tl.zeros([COLS, 4], dtype=tl.float32)
        for k in range(taps_h):
            _ih, wh = _helper_tap(start_h, c_h, widen_h, total_h, taps_h, in_h, k)
            acc += wh * tl.sum(tl.where((kh == k)[None, :, None], part, 0.0), axis=1)
        acc = tl.minimum(tl.maximum(acc, 0.0), 255.0)  # the resize's uint8 store
        acc = tl.where(acc < 0, tl.ceil(acc - 0.5), tl.floor(acc + 0.5))
        value = acc * gain[None, :] + bias[None, :]
        if PAD:
            value = tl.where(inside[:, None], value, fill[None, :])
        if CHW:  # a static if: Triton compiles one branch
            pos = ch[None, :] * (h_out * w_out) + (j * w_out + col)[:, None]
        else:
            pos = (j * w_out + col)[:, None] * 3 + ch[None, :]
        tl.store(out_base + pos.to(tl.int64), value.to(dst.dtype.element_ty),
                 mask=live[:, None] & (ch < 3)[None, :])  # fmt: skip


def _launch_inline_taps(run: GpuRun, out: GpuBatch, inp: GpuBatch, c: Any,
                        tri: TrianglePlan | None, extent: np.ndarray, start: np.ndarray,
                        mirror: np.ndarray, affine: np.ndarray, chw: bool,
                        source: tuple[np.ndarray, ...], pad: bool) -> bool:  # fmt: skip
    """The one-launch form (`_resample_normalize_taps_kernel`) of the call `c` with plan `tri`,
    or (None) of a random_resized_crop drawing its windows on the device, with tap bounds from
    the largest possible window; False (nothing launched) where a sample's taps may exceed
    `MAX_INLINE_TAPS` on an axis."""
    n = len(extent)
    n_in = np.asarray(c.resample_in, np.int64)
    n_out = np.asarray(c.resample_out, np.int64)
    antialias = c.antialias is not False
    if tri is None:
        plans = np.asarray(c.rrc_consts, np.float64)
        taps = tap_bound(n_in, plans[6:8], antialias)
        bound_h = tap_bound(n_in[:, :1], plans[6:7], antialias)
    else:
        plans = np.concatenate([tri.fparams[:n], tri.fparams[n:]], axis=1)  # [N, 8]: H, W
        taps = tri.taps  # the tap bound of every plan, both axes
        bound_h = int((np.floor(2.0 * tri.fparams[:n, 3]) + 2).max())  # (`taps`' rule)
    if taps > MAX_INLINE_TAPS:
        return False
    kh = 1 << max(bound_h - 1, 0).bit_length()  # a power of two >= the H taps
    cols = max(8, min(64, TILE_TAPS // kh))
    blocks = -(-extent[:, 1] // cols)
    rows = ROWS_PER_PROGRAM
    table = np.stack([source[0], out.offsets, n_in[:, 1], extent[:, 0], extent[:, 1],
                      start[:, 0], start[:, 1], np.asarray(mirror).reshape(n) != 0,
                      n_in[:, 0], n_out[:, 0], n_out[:, 1], blocks, source[1], source[2]],
                     axis=1).astype(np.int64)  # the columns T_IN_OFF .. T_COL_STEP  # fmt: skip
    tiles = tile_starts(-(-extent[:, 0] // rows) * blocks)
    attempts = int(c.num_attempts) if tri is None else 0
    # the RNG position joins the call's one upload (a fused pass is not recorded for replay);
    # planned calls pass a buffer that is not read
    draws = np.array(draw_words(c.draw_at), np.int32) if tri is None else inp.data
    run.launch(_resample_normalize_taps_kernel, (grid_of(tiles),), inp.data, out.data, table,
               plans, tiles, affine, draws, attempts, K=taps, KH=kh,
               KW=triton.next_power_of_2(taps), CHW=chw, COLS=cols,
               DRAWN=tri is None, ANTIALIAS=antialias,
               A=triton.next_power_of_2(max(attempts, 1)), PAD=pad, ROWS=rows,
               **({"num_warps": NUM_WARPS} if NUM_WARPS else {}))  # fmt: skip
    return True


def launch_resample_normalize(run: GpuRun, out: GpuBatch, inp: GpuBatch, resample: object,
                              gain: np.ndarray, bias: np.ndarray, mirror: np.ndarray,
                              chw: bool, window: tuple[np.ndarray, np.ndarray] | None = None,
                              source: tuple[np.ndarray, ...] | None = None,
                              fill: np.ndarray | None = None) -> None:  # fmt: skip
    """Resample HWC uint8 RGB samples as the resize call `resample` does (its `resample_*`
    plan, 2 axes) and store `v * gain + bias` (`[N, 3]`) mirrored per sample, in one pass (the
    triangle filters' taps computed in it, or in one launch before it for wide taps). `window`:
    crop_mirror_normalize's `(start, size)` (`[N, 2]`, rows and columns, inside the resized
    image): only that window is computed, its rows and columns taking the resize's taps of the
    rows and columns they are (the table rows start that much further on). `source`: where
    the resize's input pixels are in `inp`'s samples, when the pass reads them through windows
    and flips folded into it: per sample, the element offset of pixel (0, 0) in `inp.data`
    and the pixel steps from one row and from one column to the next (signed); the resize's
    extents are the view's. Default: `inp`'s samples themselves. `fill` (`[N, 3]`): the
    window may reach beyond the resized image (crop_mirror_normalize's pad); its pixels
    there are these values, stored as they are."""
    c = resample  # a Call (plain data; typed loosely to keep the kernel layer free of ops)
    n_out = np.asarray(c.resample_out, np.int64)  # type: ignore[attr-defined]
    # the triangle filters' tap tables of both axes in one launch before the pass (the host
    # tables cost ~40-75 us per sample, most of a compiled RN50 batch's host time); all host
    # tables of the call (that launch's plan rows, the pass's tables) in one upload
    n = len(n_out)
    affine = np.zeros((n, 9), np.float32)  # the AFFINE columns
    affine[:, :3], affine[:, 3:6] = np.asarray(gain)[:, :3], np.asarray(bias)[:, :3]
    pad = fill is not None
    if pad:
        affine[:, 6:] = np.asarray(fill)[:, :3]
    start = np.zeros((n, 2), np.int64)
    extent = n_out
    if window is not None:
        start, extent = (np.asarray(v, np.int64).reshape(n, 2) for v in window)
    if source is None:
        source = (inp.offsets, inp.shapes[:, 1], np.ones(n, np.int64))
    if c.values.get(DRAWS_ON_DEVICE):  # type: ignore[attr-defined]
        if _launch_inline_taps(run, out, inp, c, None, extent, start, mirror, affine, chw,
                               source, pad):  # fmt: skip
            return
        c.schema.draw_values(c)  # type: ignore[attr-defined]  # the windows, on the host
    tri = call_triangle_plan(c)
    if tri is not None and _launch_inline_taps(run, out, inp, c, tri, extent, start, mirror,
                                               affine, chw, source, pad):  # fmt: skip
        return
    host: list[np.ndarray] = []
    if tri is not None:
        first_h, first_w = tri.first[:len(n_out)], tri.first[len(n_out):]
        taps_h = taps_w = tri.taps
        host += [tri.fparams, tri.iparams]
    else:
        tables = []
        for k in (0, 1):  # H, then W (innermost: the W pass runs first in resample_gpu)
            tables.append(axis_tables(
                np.asarray(c.resample_in)[:, k], n_out[:, k],  # type: ignore[attr-defined]
                np.asarray(c.resample_origin)[:, k], np.asarray(c.resample_step)[:, k],  # type: ignore[attr-defined]
                np.asarray(c.resample_interp)[:, k], bool(c.antialias), k == 1))  # type: ignore[attr-defined]  # fmt: skip
        (index_h, weight_h, first_h, taps_h), (index_w, weight_w, first_w, taps_w) = tables
        host += [index_h, weight_h, index_w, weight_w]
    first_h, first_w = first_h + start[:, 0], first_w + start[:, 1]
    samples = np.empty((n, 13), np.int64)  # the columns IN_OFF .. RES_W
    samples[:, 0], samples[:, 1], samples[:, 2] = source[0], out.offsets, source[1]
    samples[:, 8] = source[2]
    samples[:, 3], samples[:, 4] = extent[:, 0], extent[:, 1]
    samples[:, 5], samples[:, 6] = first_h, first_w
    samples[:, 7] = np.asarray(mirror).reshape(n) != 0
    samples[:, 9:11], samples[:, 11:13] = start, n_out
    tiles = tile_starts(-(-(extent[:, 0] * extent[:, 1] * 3) // TILE))
    views = iter(run.upload(*host, samples, tiles, affine))
    if tri is not None:
        index_h, weight_h = launch_triangle_tables(run, tri, next(views), next(views))
        index_w, weight_w = index_h, weight_h
    else:
        index_h, weight_h, index_w, weight_w = next(views), next(views), next(views), next(views)
    samples_dev, tiles_dev, affine_dev = next(views), next(views), next(views)
    run.launch(_resample_normalize_kernel, (grid_of(tiles),), inp.data, out.data, samples_dev,
               tiles_dev, index_h, weight_h, index_w, weight_w, affine_dev, TAPS_H=taps_h,
               TAPS_W=taps_w, CHW=chw, BLOCK=TILE,
               STEPS=bool((np.asarray(source[2]) != 1).any()), PAD=pad)  # fmt: skip
