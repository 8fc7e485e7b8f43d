"""Independent per-pixel references of water and sphere (float64, loops; tiny images only)."""

from __future__ import annotations

import math

import numpy as np


def _sample(img, sx, sy, fill, interp, nn_shift, lin_shift):
    h, w = img.shape[:2]

    def tap(ix, iy):
        if 0 <= ix < w and 0 <= iy < h:
            return img[iy, ix].astype(np.float64)
        return np.full(img.shape[2], float(fill))

    if interp == 0:
        return tap(math.floor(sx + nn_shift), math.floor(sy + nn_shift))
    sx, sy = sx + lin_shift, sy + lin_shift
    x0, y0 = math.floor(sx), math.floor(sy)
    fx, fy = sx - x0, sy - y0
    top = (1 - fx) * tap(x0, y0) + fx * tap(x0 + 1, y0)
    bottom = (1 - fx) * tap(x0, y0 + 1) + fx * tap(x0 + 1, y0 + 1)
    return (1 - fy) * top + fy * bottom


def _finish(res, dtype):
    if np.dtype(dtype).kind == "u":
        res = np.nan_to_num(np.clip(np.floor(res + 0.5), 0, 255), nan=0.0)
    return res.astype(dtype)


def water_ref(
    img,
    ampl_x=10.0,
    ampl_y=10.0,
    freq_x=2 * math.pi / 128,
    freq_y=2 * math.pi / 128,
    phase_x=0.0,
    phase_y=0.0,
    fill_value=0.0,
    interp_type=0,
    mask=1,
):
    """water: source (x + ax sin(fx y + px), y + ay cos(fy x + py)); NN floor, LINEAR - 0.5."""
    if not mask:
        return img.copy()
    h, w = img.shape[:2]
    res = np.zeros(img.shape)
    for y in range(h):
        for x in range(w):
            sx = x + ampl_x * math.sin(freq_x * y + phase_x)
            sy = y + ampl_y * math.cos(freq_y * x + phase_y)
            res[y, x] = _sample(img, sx, sy, fill_value, int(interp_type), 0.0, -0.5)
    return _finish(res, img.dtype)


def sphere_ref(img, fill_value=0.0, interp_type=0, mask=1):
    """sphere: c + v |v| / d, c = ((W-1)/2, (H-1)/2), d = max(W, H) // 2; NN rounds up.

    A 1x1 image (d = 0) gets the fill with NN and NaN with LINEAR (DALI 2.4)."""
    if not mask:
        return img.copy()
    h, w = img.shape[:2]
    cx, cy, d = (w - 1) / 2, (h - 1) / 2, max(w, h) // 2
    if d == 0:
        return _finish(np.full(img.shape, np.nan if interp_type else float(fill_value)), img.dtype)
    res = np.zeros(img.shape)
    for y in range(h):
        for x in range(w):
            r = math.hypot(x - cx, y - cy) / d
            res[y, x] = _sample(
                img, cx + (x - cx) * r, cy + (y - cy) * r, fill_value, int(interp_type), 0.5, 0.0
            )
    return _finish(res, img.dtype)
