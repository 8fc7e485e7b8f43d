"""Affine sampling on the CPU, shared by warp_affine and rotate (one sample per call).

Vectorised torch: source coordinates of all output pixels are one broadcast add of a row term
and a column term (the map is affine), then NN or bilinear taps are gathered with
`index_select` over the flattened `(H*W, C)` image, all frames at once. Outside the source,
`fill_value` comes from a one-pixel fill frame around a float32 copy of the image (taps are
clamped into it), so clamp and fill modes share one code path. Math is float32, like the GPU
kernel; integer outputs round half away from zero and saturate.
"""

from __future__ import annotations

import numpy as np
import torch

from ndd_triton.kernels import register
from ndd_triton.ops import _affine, warp_affine
from ndd_triton.schema import SampleArgs


def _coords(m: np.ndarray, out_h: int, out_w: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Source pixel-index coordinates `(sx, sy)` `[Ho, Wo]` of every output pixel centre."""
    xs = torch.arange(out_w, dtype=torch.float32) + 0.5
    ys = torch.arange(out_h, dtype=torch.float32) + 0.5
    m32 = torch.from_numpy(m.astype(np.float32))
    sx = (xs * m32[0, 0])[None, :] + (ys * m32[0, 1] + (m32[0, 2] - 0.5))[:, None]
    sy = (xs * m32[1, 0])[None, :] + (ys * m32[1, 1] + (m32[1, 2] - 0.5))[:, None]
    return sx, sy


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


def affine_sample(out: np.ndarray, inp: np.ndarray, arg: SampleArgs) -> None:
    """Sample `inp` (HWC or FHWC) at `arg.affine_matrix @ [x + .5, y + .5, 1] - .5`."""
    frames_in = inp if inp.ndim == 4 else inp[None]
    frames_out = out if out.ndim == 4 else out[None]
    n_frames, h, w, c = frames_in.shape
    out_h, out_w = frames_out.shape[1:3]
    if frames_out.size == 0:
        return
    if frames_in.size == 0:
        frames_out[...] = 0 if arg.affine_fill is None else arg.affine_fill
        return
    src, pad = _source(frames_in, arg.affine_fill)
    wp = w + 2 * pad
    flat = src.reshape(n_frames, -1, c)
    sx, sy = _coords(np.asarray(arg.affine_matrix), out_h, out_w)
    if arg.affine_interp == _affine.INTERP_NN:
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
    res = res.reshape(frames_out.shape)
    dst = torch.from_numpy(frames_out)
    if dst.dtype.is_floating_point:
        dst.copy_(res)
        return
    info = torch.iinfo(dst.dtype)
    # round half away from zero, then saturate (DALI's float -> int rule)
    rounded = torch.where(res < 0, torch.ceil(res - 0.5), torch.floor(res + 0.5))
    dst.copy_(rounded.clamp_(info.min, info.max))


@register(warp_affine.schema, "cpu")
def warp_affine_cpu(out: np.ndarray, inp: np.ndarray, mtx: np.ndarray | None,
                    arg: SampleArgs) -> None:  # fmt: skip
    """The matrix input (if any) was folded into `arg.affine_matrix` by infer."""
    affine_sample(out, inp, arg)
