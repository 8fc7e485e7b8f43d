"""Affine sampling of volumes (DHWC / FDHWC) on the CPU, for warp_affine and rotate.

Same conventions as the 2-D path (`kernels/cpu/warp_affine.py`): the source point of output
voxel `(x, y, z)` is `M @ [x + .5, y + .5, z + .5, 1] - .5` in (W, H, D) indices; LINEAR is
trilinear (torch `grid_sample` on 5-D input, border padding on a fill-framed copy), NN takes
`floor(p + .5)`. Integer outputs round half away from zero and saturate.
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from ndd_triton.core.convert import convert_numpy


def _framed(src: torch.Tensor, fill: float | None) -> torch.Tensor:
    """float32 `[F, D, H, W, C]` frames, inside a one-voxel `fill` frame when a fill is given."""
    if fill is None:
        return src.to(torch.float32)
    f, d, h, w, c = src.shape
    framed = torch.full((f, d + 2, h + 2, w + 2, c), float(fill), dtype=torch.float32)
    framed[:, 1:-1, 1:-1, 1:-1] = src
    return framed


def sample_volume(out: np.ndarray, inp: np.ndarray, m: np.ndarray, fill: float | None,
                  linear: bool) -> None:  # fmt: skip
    """`out` `[F, Do, Ho, Wo, C]` = `inp` `[F, D, H, W, C]` sampled through the 3x4 map `m`."""
    framed = _framed(torch.from_numpy(inp), fill)
    n_frames, dp, hp, wp, c = framed.shape
    out_d, out_h, out_w = out.shape[1:4]
    pad = 0.0 if fill is None else 1.0
    z, y, x = torch.meshgrid(*(torch.arange(k, dtype=torch.float64) + 0.5
                               for k in (out_d, out_h, out_w)), indexing="ij")  # fmt: skip
    coords = [m[k, 0] * x + m[k, 1] * y + m[k, 2] * z + (m[k, 3] + pad - 0.5) for k in range(3)]
    sizes = (wp, hp, dp)
    if linear:
        grid = torch.stack(
            [(s + 0.5) * (2.0 / n) - 1.0 for s, n in zip(coords, sizes, strict=True)], dim=-1
        )
        res = F.grid_sample(
            framed.permute(0, 4, 1, 2, 3),
            grid.to(torch.float32)[None].expand(n_frames, -1, -1, -1, -1),
            mode="bilinear",
            padding_mode="border",
            align_corners=False,
        )
        res = res.permute(0, 2, 3, 4, 1)
    else:
        ix, iy, iz = (torch.floor(s + 0.5).clamp_(0, n - 1).to(torch.int64)
                      for s, n in zip(coords, sizes, strict=True))  # fmt: skip
        flat = framed.reshape(n_frames, -1, c)
        res = flat.index_select(1, ((iz * hp + iy) * wp + ix).reshape(-1))
        res = res.reshape(n_frames, out_d, out_h, out_w, c)
    convert_numpy(res.numpy(), out.dtype, out=out)
