"""water (and sphere) on the CPU: a coordinate map, then NN or bilinear sampling with a fill.

`remap_sample` is shared with sphere: the op builds per-pixel source coordinates in integer
pixel units (pixel `i` at coordinate `i`), NN takes `floor(coord + nn_shift)`, LINEAR blends
the four neighbours of `coord + linear_shift`; taps outside the image read `fill` (float32
math, like the GPU kernel). Shifts fitted to DALI 2.4 (tests/golden): water NN floors the
displaced coordinate and LINEAR samples it half a pixel earlier; sphere rounds NN half up and
samples LINEAR at the coordinate itself.
"""

from __future__ import annotations

import numpy as np

from ndd_triton.core.convert import convert_numpy
from ndd_triton.kernels import register
from ndd_triton.ops import water
from ndd_triton.ops.schema import SampleArgs


def _taps(inp: np.ndarray, ix: np.ndarray, iy: np.ndarray, fill: float) -> np.ndarray:
    h, w = inp.shape[:2]
    inside = (ix >= 0) & (ix < w) & (iy >= 0) & (iy < h)
    vals = inp[np.clip(iy, 0, h - 1), np.clip(ix, 0, w - 1)].astype(np.float32)
    vals[~inside] = np.float32(fill)
    return vals


def remap_sample(out: np.ndarray, inp: np.ndarray, sx: np.ndarray, sy: np.ndarray,
                 arg: SampleArgs, nn_shift: float, linear_shift: float) -> None:  # fmt: skip
    """Sample `inp` (HWC) at float32 coordinates `(sx, sy)` `[H, W]` into `out`.

    NN reads pixel `floor(s + nn_shift)`; LINEAR blends around `s + linear_shift`.
    """
    if not arg.mask or out.size == 0:
        out[...] = inp
        return
    fill = float(arg.fill_value)
    sx = np.clip(sx, -4, inp.shape[1] + 4).astype(np.float32)
    sy = np.clip(sy, -4, inp.shape[0] + 4).astype(np.float32)
    if int(arg.interp_type) == 0:
        res = _taps(
            inp,
            np.floor(sx + np.float32(nn_shift)).astype(np.int64),
            np.floor(sy + np.float32(nn_shift)).astype(np.int64),
            fill,
        )
    else:
        sx, sy = sx + np.float32(linear_shift), sy + np.float32(linear_shift)
        x0, y0 = np.floor(sx), np.floor(sy)
        fx, fy = (sx - x0)[..., None], (sy - y0)[..., None]
        x0i, y0i = x0.astype(np.int64), y0.astype(np.int64)
        top = _taps(inp, x0i, y0i, fill)
        top += fx * (_taps(inp, x0i + 1, y0i, fill) - top)
        bottom = _taps(inp, x0i, y0i + 1, fill)
        bottom += fx * (_taps(inp, x0i + 1, y0i + 1, fill) - bottom)
        res = top + fy * (bottom - top)
    convert_numpy(res, out.dtype, out=out)


def water_coords(h: int, w: int, arg: SampleArgs) -> tuple[np.ndarray, np.ndarray]:
    """float32 source coordinates of water's displacement."""
    xs = np.arange(w, dtype=np.float32)[None, :]
    ys = np.arange(h, dtype=np.float32)[:, None]
    f32 = np.float32
    sx = xs + f32(arg.ampl_x) * np.sin(f32(arg.freq_x) * ys + f32(arg.phase_x))
    sy = ys + f32(arg.ampl_y) * np.cos(f32(arg.freq_y) * xs + f32(arg.phase_y))
    return np.broadcast_to(sx, (h, w)), np.broadcast_to(sy, (h, w))


@register(water.schema, "cpu")
def water_cpu(out: np.ndarray, inp: np.ndarray, arg: SampleArgs) -> None:
    """Sinusoidal displacement; NN takes the floor of the source coordinate."""
    sx, sy = water_coords(inp.shape[0], inp.shape[1], arg)
    remap_sample(out, inp, sx, sy, arg, 0.0, -0.5)
