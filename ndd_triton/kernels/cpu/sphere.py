"""sphere on the CPU: water's remap sampling with the radial map."""

from __future__ import annotations

import numpy as np

from ndd_triton.core.convert import convert_numpy
from ndd_triton.kernels import register
from ndd_triton.kernels.cpu.water import remap_sample
from ndd_triton.ops import sphere
from ndd_triton.ops.schema import SampleArgs


def sphere_coords(h: int, w: int) -> tuple[np.ndarray, np.ndarray]:
    """float32 source coordinates `c + v * |v| / d`, `v = p - c`, `c = ((W-1)/2, (H-1)/2)`.

    `d = max(W, H) // 2` (integer division; the spec's `max(W, H) / 2` is off by a half for odd
    extents): fits every pixel of DALI 2.4's NN outputs on all 163 shapes from 1x1 to 12x12
    plus larger odd/even ones (tools/dali_diff.py). `d = 0` (a 1x1 image): see sphere_cpu.
    """
    cx, cy = np.float32((w - 1) / 2), np.float32((h - 1) / 2)
    d = max(w, h) // 2
    vx = np.arange(w, dtype=np.float32)[None, :] - cx
    vy = np.arange(h, dtype=np.float32)[:, None] - cy
    scale = np.sqrt(vx * vx + vy * vy) / np.float32(max(d, 1))
    return cx + vx * scale, cy + vy * scale


@register(sphere.schema, "cpu")
def sphere_cpu(out: np.ndarray, inp: np.ndarray, arg: SampleArgs) -> None:
    """Radial remap; NN rounds half up. A 1x1 image (d = 0) gets the fill with NN and NaN with
    LINEAR (0 in u8), as in DALI 2.4."""
    if inp.shape[0] == inp.shape[1] == 1 and arg.mask:
        nan_or_fill = float(arg.fill_value) if int(arg.interp_type) == 0 else np.nan
        convert_numpy(np.full(inp.shape, nan_or_fill, np.float32), out.dtype, out=out)
        return
    sx, sy = sphere_coords(inp.shape[0], inp.shape[1])
    remap_sample(out, inp, sx, sy, arg, 0.5, 0.0)
