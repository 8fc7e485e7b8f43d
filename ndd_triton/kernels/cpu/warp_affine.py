"""Affine sampling on the CPU, shared by warp_affine and rotate (one sample per call).

Source coordinates of the output pixels are one broadcast add of a row term and a column term
(the map is affine). Output rows are processed in chunks of `_ROWS` so the temporaries stay in
cache. Two paths:

* **packed** (uint8 in and out, up to 3 channels, integral fill): each pixel is one uint64 word
  with 21-bit lanes per channel; taps are gathered with one `np.take` per tap and blended with
  13-bit fixed-point weights that sum exactly to 8192 (4 multiply-adds for all channels at
  once; the weight quantisation error is below 0.07 levels). Coordinates are fixed point too.
* **float** (everything else): float32 torch gathers of `(H*W, C)` rows and lerps, like the GPU
  kernel; integer outputs round half away from zero and saturate.

Outside the source, `fill_value` comes from a one-pixel fill frame around the source (taps are
clamped into it), so clamp and fill modes share one code path.
"""

from __future__ import annotations

import numpy as np
import torch

from ndd_triton.kernels import register
from ndd_triton.ops import _affine, warp_affine
from ndd_triton.schema import SampleArgs


_ROWS = 32  # output rows per chunk (measured: 16-48 rows are best for 640 columns)
_FRAC = 13  # fixed-point fraction bits of the packed path
_ONE = 1 << _FRAC
_LANE = 21  # bits per channel lane in a packed uint64 pixel (255 * 8192 < 2**21)
_HALF_LANES = np.uint64(sum((_ONE // 2) << (_LANE * k) for k in range(3)))
_COORD_LIMIT = 1e5  # pixels; coordinates beyond are clamped anyway


def _coords(m: np.ndarray, r0: int, r1: int, out_w: int) -> tuple[torch.Tensor, torch.Tensor]:
    """float32 source pixel-index coordinates `(sx, sy)` `[r1 - r0, Wo]` of output rows."""
    xs = torch.arange(out_w, dtype=torch.float32) + 0.5
    ys = torch.arange(r0, r1, dtype=torch.float32) + 0.5
    m32 = torch.from_numpy(m.astype(np.float32))
    sx = (xs * m32[0, 0])[None, :] + (ys * m32[0, 1] + (m32[0, 2] - 0.5))[:, None]
    sy = (xs * m32[1, 0])[None, :] + (ys * m32[1, 1] + (m32[1, 2] - 0.5))[:, None]
    return sx.clamp_(-_COORD_LIMIT, _COORD_LIMIT), sy.clamp_(-_COORD_LIMIT, _COORD_LIMIT)


def _source(inp: np.ndarray, fill: float | None) -> tuple[torch.Tensor, int]:
    """float32 `[F, Hp, Wp, C]` source (with a fill frame when `fill` is given) and the frame
    width (0 or 1)."""
    src = torch.from_numpy(inp)
    if fill is None:
        return src.to(torch.float32), 0
    f, h, w, c = src.shape
    padded = torch.empty((f, h + 2, w + 2, c), dtype=torch.float32)
    padded[:, 0].fill_(fill)
    padded[:, -1].fill_(fill)
    padded[:, :, 0].fill_(fill)
    padded[:, :, -1].fill_(fill)
    padded[:, 1:-1, 1:-1] = src
    return padded, 1


def _index(coord: torch.Tensor, extent: int, pad: int) -> torch.Tensor:
    """Tap index into the (padded) axis: clamped into `[-pad, extent - 1 + pad]`, shifted."""
    return coord.clamp(-pad, extent - 1 + pad).to(torch.int32) + pad


def _packed_source(frame: np.ndarray, fill: float | None) -> np.ndarray:
    """uint64 words `[H + 3, W + 3]` of one HWC uint8 frame: one pixel per word (21-bit
    lanes), with a border of 1 (top, left) and 2 (bottom, right) pixels that holds the fill or
    repeats the edge. Source coordinates clamped to `[-1, extent]` then never leave it."""
    h, w, c = frame.shape
    core = frame[..., 0].astype(np.uint64)
    for k in range(1, c):
        core |= frame[..., k].astype(np.uint64) << np.uint64(_LANE * k)
    if fill is None:
        words = np.empty((h + 3, w + 3), np.uint64)
        words[1:h + 1, 1:w + 1] = core
        words[0, 1:w + 1] = core[0]
        words[h + 1:, 1:w + 1] = core[-1]
        words[:, :1] = words[:, 1:2]
        words[:, w + 1:] = words[:, w:w + 1]
        return words
    words = np.full((h + 3, w + 3), sum(int(fill) << (_LANE * k) for k in range(c)), np.uint64)
    words[1:h + 1, 1:w + 1] = core
    return words


def _fixed(v: np.ndarray) -> np.ndarray:
    """Coordinates (pixels) -> int64 fixed point with `_FRAC` fraction bits."""
    return np.round(np.clip(v, -_COORD_LIMIT, _COORD_LIMIT) * _ONE).astype(np.int64)


def _packed_frame(dst: np.ndarray, words: np.ndarray, m: np.ndarray, linear: bool) -> None:
    """Sample one frame into `dst` (HWC uint8) from `_packed_source` words.

    Clamping the source coordinate to `[-1, extent]` is exact for both border modes: beyond
    it both taps read the same border pixel (edge or fill), and at `-1`/`extent` the far tap
    has weight 0. Coordinates are shifted by +1 pixel to index the bordered words.
    """
    hp, wp = words.shape
    out_h, out_w, c = dst.shape
    flat = words.reshape(-1)
    taps = (flat, flat[1:], flat[wp:], flat[wp + 1:])
    half = 0 if linear else _ONE // 2  # NN: floor(p + 0.5) of the pixel-index coordinate p
    col_x = _fixed((np.arange(out_w) + 0.5) * m[0, 0])[None, :]
    col_y = _fixed((np.arange(out_w) + 0.5) * m[1, 0])[None, :]
    for r0 in range(0, out_h, _ROWS):
        ys = np.arange(r0, min(r0 + _ROWS, out_h)) + 0.5
        sx = _fixed(ys * m[0, 1] + (m[0, 2] + 0.5))[:, None] + (col_x + half)
        sy = _fixed(ys * m[1, 1] + (m[1, 2] + 0.5))[:, None] + (col_y + half)
        np.clip(sx, 0, (wp - 2) * _ONE, out=sx)
        np.clip(sy, 0, (hp - 2) * _ONE, out=sy)
        base = (sy >> _FRAC) * wp
        base += sx >> _FRAC
        if not linear:
            acc = np.take(flat, base)
        else:
            fx = (sx & (_ONE - 1)).view(np.uint64)
            fy = (sy & (_ONE - 1)).view(np.uint64)
            w11 = fx * fy
            w11 += _ONE // 2
            w11 >>= np.uint64(_FRAC)  # the four weights sum exactly to _ONE
            fx -= w11  # weight of the right tap
            fy -= w11  # weight of the bottom tap
            acc = np.take(taps[3], base)
            acc *= w11
            acc += np.take(taps[1], base) * fx
            acc += np.take(taps[2], base) * fy
            w11 += fx
            w11 += fy
            acc += np.take(taps[0], base) * (np.uint64(_ONE) - w11)
            acc += _HALF_LANES  # round half up (values are non-negative)
            acc >>= np.uint64(_FRAC)
        rows = dst[r0:r0 + len(ys)]
        for k in range(c):
            rows[..., k] = acc >> np.uint64(_LANE * k) if k else acc  # uint8 keeps the low bits


def _packable(inp: np.ndarray, out: np.ndarray, fill: float | None) -> bool:
    return (inp.dtype == np.uint8 and out.dtype == np.uint8 and inp.shape[-1] <= 3
            and (fill is None or (float(fill).is_integer() and 0 <= fill <= 255)))  # fmt: skip


def _float_frames(dst: np.ndarray, src_frames: np.ndarray, m: np.ndarray, fill: float | None,
                  linear: bool) -> None:  # fmt: skip
    """Sample all frames `[F, H, W, C]` into `dst` `[F, Ho, Wo, C]` in float32 (any dtype)."""
    n_frames, h, w, c = src_frames.shape
    out_h, out_w = dst.shape[1:3]
    src, pad = _source(src_frames, fill)
    wp = w + 2 * pad
    flat = src.reshape(n_frames, -1, c)
    out_t = torch.from_numpy(dst)
    for r0 in range(0, out_h, _ROWS):
        r1 = min(r0 + _ROWS, out_h)
        sx, sy = _coords(m, r0, r1, out_w)
        if not linear:
            ix = _index(torch.floor(sx + 0.5), w, pad)
            iy = _index(torch.floor(sy + 0.5), h, pad)
            res = flat.index_select(1, (iy * wp + ix).reshape(-1))
        else:
            x0, y0 = torch.floor(sx), torch.floor(sy)
            fx = (sx - x0).reshape(-1, 1)
            fy = (sy - y0).reshape(-1, 1)
            x0i, x1i = _index(x0, w, pad), _index(x0 + 1, w, pad)
            row0, row1 = _index(y0, h, pad) * wp, _index(y0 + 1, h, pad) * wp
            top = flat.index_select(1, (row0 + x0i).reshape(-1))
            top += fx * (flat.index_select(1, (row0 + x1i).reshape(-1)) - top)
            bottom = flat.index_select(1, (row1 + x0i).reshape(-1))
            bottom += fx * (flat.index_select(1, (row1 + x1i).reshape(-1)) - bottom)
            res = top.add_(fy * (bottom - top))
        res = res.reshape(n_frames, r1 - r0, out_w, c)
        rows = out_t[:, r0:r1]
        if rows.dtype.is_floating_point:
            rows.copy_(res)
            continue
        info = torch.iinfo(rows.dtype)
        # round half away from zero, then saturate (DALI's float -> int rule)
        rounded = torch.where(res < 0, torch.ceil(res - 0.5), torch.floor(res + 0.5))
        rows.copy_(rounded.clamp_(info.min, info.max))


def affine_sample(out: np.ndarray, inp: np.ndarray, arg: SampleArgs) -> None:
    """Sample `inp` (HWC or FHWC) at `arg.affine_matrix @ [x + .5, y + .5, 1] - .5`."""
    frames_in = inp if inp.ndim == 4 else inp[None]
    frames_out = out if out.ndim == 4 else out[None]
    fill = arg.affine_fill
    if frames_out.size == 0:
        return
    if frames_in.size == 0:  # nothing to clamp to: the fill, or 0
        frames_out[...] = 0 if fill is None else fill
        return
    m = np.asarray(arg.affine_matrix, np.float64)
    linear = arg.affine_interp != _affine.INTERP_NN
    if _packable(frames_in, frames_out, fill):
        for src, dst in zip(frames_in, frames_out):
            _packed_frame(dst, _packed_source(src, fill), m, linear)
    else:
        _float_frames(frames_out, frames_in, m, fill, linear)


@register(warp_affine.schema, "cpu")
def warp_affine_cpu(out: np.ndarray, inp: np.ndarray, mtx: np.ndarray | None,
                    arg: SampleArgs) -> None:  # fmt: skip
    """The matrix input (if any) was folded into `arg.affine_matrix` by infer."""
    affine_sample(out, inp, arg)
