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
The same tap tables as resize's give the taps (built on the device by one launch before the
pass for the triangle filters, `_resample_tables`; else on the host, `kernels._resample`), so
the bytes are those of the three ops run one by one.
"""

from __future__ import annotations

import numpy as np
import triton
import triton.language as tl

from ndd_triton.kernels._resample import axis_tables
from ndd_triton.kernels.gpu._resample_tables import call_triangle_plan, launch_triangle_tables
from ndd_triton.kernels.gpu._tables import GpuBatch, GpuRun
from ndd_triton.kernels.gpu._tiles import _helper_find_tile, grid_of, tile_starts

IN_OFF: tl.constexpr = tl.constexpr(0)
OUT_OFF: tl.constexpr = tl.constexpr(1)
W_IN: tl.constexpr = tl.constexpr(2)
H_OUT: tl.constexpr = tl.constexpr(3)
W_OUT: tl.constexpr = tl.constexpr(4)
TAB_H: tl.constexpr = tl.constexpr(5)  # first row of the sample in the H tap tables
TAB_W: tl.constexpr = tl.constexpr(6)
MIRROR: tl.constexpr = tl.constexpr(7)
NCOL: tl.constexpr = tl.constexpr(8)
TILE = 1024


@triton.jit
def _resample_normalize_kernel(src, dst, samples, tiles, index_h, weight_h, index_w, weight_w,
                               affine, TAPS_H: tl.constexpr, TAPS_W: tl.constexpr,
                               CHW: tl.constexpr, BLOCK: tl.constexpr):  # fmt: skip
    """One tile of one sample's resized HWC (3-channel) elements, normalised and stored."""
    sample, tile = _helper_find_tile(tiles)
    sample = sample.to(tl.int64)
    first = tile.to(tl.int64) * BLOCK
    row = samples + sample * NCOL
    w_in = tl.load(row + W_IN).to(tl.int32)
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
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for kh in range(TAPS_H):
        th = (tab_h + j) * TAPS_H + kh
        sh = tl.load(index_h + th, mask=mask, other=0)
        wh = tl.load(weight_h + th, mask=mask, other=0.0)
        part = tl.zeros([BLOCK], dtype=tl.float32)  # the W pass's value at row `sh`
        for kw in range(TAPS_W):
            tw = (tab_w + w) * TAPS_W + kw
            sw = tl.load(index_w + tw, mask=mask, other=0)
            ww = tl.load(weight_w + tw, mask=mask, other=0.0)
            v = tl.load(src_base + ((sh * w_in + sw) * 3 + c).to(tl.int64), mask=mask,
                        other=0).to(tl.float32)  # fmt: skip
            part += ww * v
        acc += wh * part
    acc = tl.minimum(tl.maximum(acc, 0.0), 255.0)  # the resize's uint8 store
    acc = tl.where(acc < 0, tl.ceil(acc - 0.5), tl.floor(acc + 0.5))
    gain = tl.load(affine + sample * 6 + c, mask=mask, other=0.0)
    bias = tl.load(affine + sample * 6 + 3 + c, mask=mask, other=0.0)
    value = acc * gain + bias
    col = tl.where(mirror != 0, w_out - 1 - w, w)
    if CHW:  # noqa: SIM108 (a static if: Triton compiles one branch)
        pos = c * (h_out * w_out) + j * w_out + col
    else:
        pos = (j * w_out + col) * 3 + c
    tl.store(dst + tl.load(row + OUT_OFF) + pos.to(tl.int64),
             value.to(dst.dtype.element_ty), mask=mask)  # fmt: skip


def launch_resample_normalize(run: GpuRun, out: GpuBatch, inp: GpuBatch, resample: object,
                              gain: np.ndarray, bias: np.ndarray, mirror: np.ndarray,
                              chw: bool, window: tuple[np.ndarray, np.ndarray] | None = None,
                              ) -> None:  # fmt: skip
    """Resample HWC uint8 RGB samples as the resize call `resample` does (its `resample_*`
    plan, 2 axes) and store `v * gain + bias` (`[N, 3]`) mirrored per sample, in one pass (after
    one launch building the tap tables of the triangle filters, as resize's own). `window`:
    crop_mirror_normalize's `(start, size)` (`[N, 2]`, rows and columns, inside the resized
    image): only that window is computed, its rows and columns taking the resize's taps of the
    rows and columns they are (the table rows start that much further on)."""
    c = resample  # a Call (plain data; typed loosely to keep the kernel layer free of ops)
    n_out = np.asarray(c.resample_out, np.int64)  # type: ignore[attr-defined]
    # the triangle filters' tap tables of both axes in one launch before the pass (the host
    # tables cost ~40-75 us per sample, most of a compiled RN50 batch's host time); all host
    # tables of the call (that launch's plan rows, the pass's tables) in one upload
    tri = call_triangle_plan(c)
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
    n = len(n_out)
    extent = n_out
    if window is not None:
        start, extent = (np.asarray(v, np.int64).reshape(n, 2) for v in window)
        first_h, first_w = first_h + start[:, 0], first_w + start[:, 1]
    samples = np.empty((n, 8), np.int64)  # the columns IN_OFF .. MIRROR
    samples[:, 0], samples[:, 1], samples[:, 2] = inp.offsets, out.offsets, inp.shapes[:, 1]
    samples[:, 3], samples[:, 4] = extent[:, 0], extent[:, 1]
    samples[:, 5], samples[:, 6] = first_h, first_w
    samples[:, 7] = np.asarray(mirror).reshape(n) != 0
    affine = np.empty((n, 6), np.float32)
    affine[:, :3], affine[:, 3:] = np.asarray(gain)[:, :3], np.asarray(bias)[:, :3]
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
               TAPS_W=taps_w, CHW=chw, BLOCK=TILE)  # fmt: skip
