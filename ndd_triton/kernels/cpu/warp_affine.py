"""Affine sampling on the CPU, shared by warp_affine and rotate (one sample per call).

The source point of output pixel `(x, y)` is `M @ [x + .5, y + .5, 1] - .5` in pixel indices
(`M` = `arg.affine_matrix`, the inverse map built by infer). The coordinates are one broadcast
add of a row term and a column term (the map is affine).

* LINEAR: torch `grid_sample` (bilinear, `align_corners=False`, border padding) on a float32
  channels-last copy of the frames; its pixel convention is DALI's. Measured (perf/
  bench_rotate.py, 1 thread) faster than a hand-written fixed-point gather in NumPy.
* NN: `floor` of DALI's float32 source point (each row accumulates the x step, as DALI's
  CPU warp does) and one `index_select` of whole pixels, in the input type.

Both read a source with a one-pixel `fill_value` frame when a fill is given. Clamping the
source coordinate to `[-1, extent]` is exact for both border modes (beyond it every tap reads
the same border pixel), so grid_sample's border clamp on the framed source gives DALI's
fill, and clamping without a frame gives DALI's repeated border. Integer outputs round half
away from zero and saturate.
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from ndd_triton.kernels import register
from ndd_triton.kernels.cpu._affine_volume import sample_volume
from ndd_triton.ops import _affine, warp_affine
from ndd_triton.ops.schema import SampleArgs

_COORD_LIMIT = 1e6  # pixels: keeps float -> int conversions defined; far outside anyway


def _framed(src: torch.Tensor, fill: float | None, dtype: torch.dtype) -> torch.Tensor:
    """`[F, H, W, C]` frames in `dtype`, with a one-pixel `fill` frame when a fill is given."""
    if fill is None:
        return src.to(dtype)
    f, h, w, c = src.shape
    framed = torch.empty((f, h + 2, w + 2, c), dtype=dtype)
    framed[:, 0] = fill
    framed[:, -1] = fill
    framed[:, :, 0] = fill
    framed[:, :, -1] = fill
    framed[:, 1:-1, 1:-1] = src
    return framed


def _coords(m: np.ndarray, out_h: int, out_w: int, shift: float) -> tuple[torch.Tensor, ...]:
    """float32 source pixel-index coordinates `(sx, sy)` `[Ho, Wo]`, plus `shift`."""
    xs = torch.arange(out_w, dtype=torch.float32) + 0.5
    ys = torch.arange(out_h, dtype=torch.float32) + 0.5
    m32 = torch.from_numpy(m.astype(np.float32))
    sx = (xs * m32[0, 0])[None, :] + (ys * m32[0, 1] + (m32[0, 2] + (shift - 0.5)))[:, None]
    sy = (xs * m32[1, 0])[None, :] + (ys * m32[1, 1] + (m32[1, 2] + (shift - 0.5)))[:, None]
    return sx.clamp_(-_COORD_LIMIT, _COORD_LIMIT), sy.clamp_(-_COORD_LIMIT, _COORD_LIMIT)


def _linear(src: torch.Tensor, m: np.ndarray, out_h: int, out_w: int, fill: float | None
            ) -> torch.Tensor:  # fmt: skip
    """Bilinear samples `[F, Ho, Wo, C]` float32 (channels-last grid_sample)."""
    framed = _framed(src, fill, torch.float32)
    n_frames, hp, wp = framed.shape[:3]
    pad = 0.0 if fill is None else 1.0
    # grid_sample's pixel convention (align_corners=False): index = ((g + 1) * size - 1) / 2,
    # so g is affine in the output pixel centre too: fold the normalisation into the matrix
    # and write each grid component with one broadcast add (measured 2-3 ms less per image
    # than normalising full-size coordinate maps).
    grid = torch.empty((1, out_h, out_w, 2), dtype=torch.float32)
    xs = torch.arange(out_w, dtype=torch.float64) + 0.5
    ys = torch.arange(out_h, dtype=torch.float64) + 0.5
    for k, size in ((0, wp), (1, hp)):
        scale = 2.0 / size
        col = (xs * (m[k, 0] * scale)).to(torch.float32)
        row = (ys * (m[k, 1] * scale) + ((m[k, 2] + pad) * scale - 1.0)).to(torch.float32)
        torch.add(row[:, None], col[None, :], out=grid[0, :, :, k])
    res = F.grid_sample(
        framed.permute(0, 3, 1, 2),
        grid.expand(n_frames, -1, -1, -1),
        mode="bilinear",
        padding_mode="border",
        align_corners=False,
    )
    return res.permute(0, 2, 3, 1)


def _dali_nn_coords(m: np.ndarray, out_h: int, out_w: int) -> tuple[np.ndarray, np.ndarray]:
    """float32 source coordinates `M @ [x + .5, y + .5, 1]` computed the way DALI 2.4's CPU
    warp does: each row starts at `(m0 * .5 + m2) + m1 * (y + .5)` (that order: at 90 degrees
    the tiny float32 cosine term then moves the start off a tie from the right row on) and
    then *accumulates* `m0` pixel by pixel in float32 (np.add.accumulate is sequential). The
    accumulated rounding decides NN ties (recorded DALI rotations in
    tests/ops/test_rotate_ties_dali.py)."""
    m32 = m.astype(np.float32)
    ys = np.arange(out_h, dtype=np.float32) + np.float32(0.5)
    coords = []
    for r in range(2):
        steps = np.empty((out_h, out_w), np.float32)
        steps[:, 0] = (m32[r, 0] * np.float32(0.5) + m32[r, 2]) + m32[r, 1] * ys
        steps[:, 1:] = m32[r, 0]
        coords.append(np.add.accumulate(steps, axis=1, dtype=np.float32))
    return coords[0], coords[1]


def _nearest(src: torch.Tensor, m: np.ndarray, out_h: int, out_w: int, fill: float | None,
             dtype: torch.dtype) -> torch.Tensor:  # fmt: skip
    """Nearest samples `[F, Ho, Wo, C]`: pixel `floor(p)` (p = DALI's float32 source point),
    shifted by the fill frame and clamped into it."""
    framed = _framed(src, fill, dtype)
    n_frames, hp, wp, c = framed.shape
    sx, sy = _dali_nn_coords(m, out_h, out_w)
    frame = 0 if fill is None else 1
    sx = np.nan_to_num(np.clip(sx, -_COORD_LIMIT, _COORD_LIMIT), nan=-_COORD_LIMIT)
    sy = np.nan_to_num(np.clip(sy, -_COORD_LIMIT, _COORD_LIMIT), nan=-_COORD_LIMIT)
    ix = torch.from_numpy(np.floor(sx).astype(np.int64) + frame).clamp_(0, wp - 1)
    iy = torch.from_numpy(np.floor(sy).astype(np.int64) + frame).clamp_(0, hp - 1)
    res = framed.reshape(n_frames, hp * wp, c).index_select(1, (iy * wp + ix).reshape(-1))
    return res.reshape(n_frames, out_h, out_w, c)


def _store(dst: np.ndarray, res: torch.Tensor) -> None:
    """Write samples into `dst`; float -> int rounds half away from zero and saturates.

    The rounding runs in place in `res`'s own memory order (grid_sample returns NCHW): the
    strided ops of a channels-last view cost 3x more (measured).
    """
    out = torch.from_numpy(dst)
    if out.dtype.is_floating_point or not res.dtype.is_floating_point:
        out.copy_(res)
        return
    info = torch.iinfo(out.dtype)
    base = res.permute(0, 3, 1, 2) if res.permute(0, 3, 1, 2).is_contiguous() else res
    if info.min == 0:  # clamp first: negative values saturate to 0 either way
        base.clamp_(0, info.max).add_(0.5).floor_()
    else:
        base.copy_(torch.where(base < 0, torch.ceil(base - 0.5), torch.floor(base + 0.5)))
        base.clamp_(info.min, info.max)
    out.copy_(res)


def _exact_in(fill: float | None, dtype: np.dtype) -> bool:
    """True when `fill` (if any) is representable in the integer/float `dtype`."""
    if fill is None or dtype.kind == "f":
        return True
    info = np.iinfo(dtype)
    return float(fill).is_integer() and info.min <= fill <= info.max


def affine_sample(out: np.ndarray, inp: np.ndarray, arg: SampleArgs) -> None:
    """Sample `inp` (HWC, FHWC; volumes DHWC, FDHWC) at `arg.affine_matrix @ [p + .5, 1] - .5`."""
    m = np.asarray(arg.affine_matrix, np.float64)
    rank = m.shape[0] + 2  # spatial axes + channels + frames
    frames_in = inp if inp.ndim == rank else inp[None]
    frames_out = out if out.ndim == rank else out[None]
    fill = arg.affine_fill
    if frames_out.size == 0:
        return
    if frames_in.size == 0:  # nothing to clamp to: the fill, or 0
        frames_out[...] = 0 if fill is None else fill
        return
    if m.shape[0] == 3:
        sample_volume(frames_out, frames_in, m, fill, arg.affine_interp != _affine.INTERP_NN)
        return
    out_h, out_w = frames_out.shape[1:3]
    src = torch.from_numpy(frames_in)
    if arg.affine_interp == _affine.INTERP_NN:
        same = frames_in.dtype == frames_out.dtype and _exact_in(fill, frames_in.dtype)
        dtype = src.dtype if same else torch.float32
        _store(frames_out, _nearest(src, m, out_h, out_w, fill, dtype))
    else:
        _store(frames_out, _linear(src, m, out_h, out_w, fill))


@register(warp_affine.schema, "cpu")
def warp_affine_cpu(out: np.ndarray, inp: np.ndarray, mtx: np.ndarray | None,
                    arg: SampleArgs) -> None:  # fmt: skip
    """The matrix input (if any) was folded into `arg.affine_matrix` by infer."""
    affine_sample(out, inp, arg)
