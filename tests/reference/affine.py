"""Independent reference of affine sampling (warp_affine, rotate): float64, one pixel at a time.

Output pixel (x, y) samples the source at `M @ [x + .5, y + .5, 1] - .5` (pixel indices);
NN takes `floor(p + .5)`, LINEAR blends the four neighbours; taps outside the source read
`fill` when given, else the clamped border pixel. Integer outputs round half away, saturate.
"""

from __future__ import annotations

import math

import numpy as np


def _tap(img, ix, iy, fill):
    h, w = img.shape[:2]
    if fill is not None and not (0 <= ix < w and 0 <= iy < h):
        return np.full(img.shape[2], fill, np.float64)
    return img[min(max(iy, 0), h - 1), min(max(ix, 0), w - 1)].astype(np.float64)


def affine_ref(img, inverse, out_hw, fill=None, interp=1, dtype=None):
    """HWC (or FHWC: frames independently) `img` sampled through the 2x3 `inverse` map."""
    if img.ndim == 4:
        return np.stack([affine_ref(f, inverse, out_hw, fill, interp, dtype) for f in img])
    dtype = np.dtype(dtype or img.dtype)
    m = np.asarray(inverse, np.float64).reshape(2, 3)
    out_h, out_w = out_hw
    res = np.zeros((out_h, out_w, img.shape[2]))
    f32 = np.float32
    m32 = m.astype(f32)
    for y in range(out_h):
        # NN follows DALI 2.4's CPU warp: a float32 row start, then the x step added pixel by
        # pixel in float32 (the accumulated rounding decides near-ties; recorded against DALI)
        nx = f32(f32(m32[0, 0] * f32(0.5)) + f32(m32[0, 1] * f32(y + 0.5))) + m32[0, 2]
        ny = f32(f32(m32[1, 0] * f32(0.5)) + f32(m32[1, 1] * f32(y + 0.5))) + m32[1, 2]
        for x in range(out_w):
            px = m[0, 0] * (x + 0.5) + m[0, 1] * (y + 0.5) + m[0, 2] - 0.5
            py = m[1, 0] * (x + 0.5) + m[1, 1] * (y + 0.5) + m[1, 2] - 0.5
            if interp == 0:
                res[y, x] = _tap(img, math.floor(nx), math.floor(ny), fill)
                nx, ny = f32(nx + m32[0, 0]), f32(ny + m32[1, 0])
                continue
            x0, y0 = math.floor(px), math.floor(py)
            fx, fy = px - x0, py - y0
            top = (1 - fx) * _tap(img, x0, y0, fill) + fx * _tap(img, x0 + 1, y0, fill)
            bottom = (1 - fx) * _tap(img, x0, y0 + 1, fill) + fx * _tap(img, x0 + 1, y0 + 1, fill)
            res[y, x] = (1 - fy) * top + fy * bottom
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        res = np.clip(np.sign(res) * np.floor(np.abs(res) + 0.5), info.min, info.max)
    return res.astype(dtype)


def rotate_inverse(angle, in_hw, out_hw):
    """Inverse map of rotate: `src = R(angle) (p - c_out) + c_in`, y down, c = size / 2."""
    a = math.radians(float(np.float32(angle)))
    c, s = float(np.float32(math.cos(a))), float(np.float32(math.sin(a)))  # DALI 2.4: float32
    (hi, wi), (ho, wo) = in_hw, out_hw
    return np.array(
        [[c, -s, wi / 2 - c * wo / 2 + s * ho / 2], [s, c, hi / 2 - s * wo / 2 - c * ho / 2]]
    )


def _tap3(vol, ix, iy, iz, fill):
    d, h, w = vol.shape[:3]
    if fill is not None and not (0 <= ix < w and 0 <= iy < h and 0 <= iz < d):
        return np.full(vol.shape[3], fill, np.float64)
    return vol[min(max(iz, 0), d - 1), min(max(iy, 0), h - 1), min(max(ix, 0), w - 1)].astype(
        np.float64
    )


def affine_ref_3d(vol, inverse, out_dhw, fill=None, interp=1, dtype=None):
    """DHWC (or FDHWC) `vol` sampled through the 3x4 `inverse` map ((x, y, z) order)."""
    if vol.ndim == 5:
        return np.stack([affine_ref_3d(f, inverse, out_dhw, fill, interp, dtype) for f in vol])
    dtype = np.dtype(dtype or vol.dtype)
    m = np.asarray(inverse, np.float64).reshape(3, 4)
    res = np.zeros((*out_dhw, vol.shape[3]))
    for z in range(out_dhw[0]):
        for y in range(out_dhw[1]):
            for x in range(out_dhw[2]):
                p = m @ [x + 0.5, y + 0.5, z + 0.5, 1.0] - 0.5
                if interp == 0:
                    res[z, y, x] = _tap3(vol, *(math.floor(c + 0.5) for c in p), fill)
                    continue
                f = [math.floor(c) for c in p]
                t = [c - fc for c, fc in zip(p, f, strict=True)]
                acc = 0.0
                for dz in (0, 1):
                    for dy in (0, 1):
                        for dx in (0, 1):
                            wgt = ((t[0] if dx else 1 - t[0]) * (t[1] if dy else 1 - t[1])
                                   * (t[2] if dz else 1 - t[2]))  # fmt: skip
                            acc = acc + wgt * _tap3(vol, f[0] + dx, f[1] + dy, f[2] + dz, fill)
                res[z, y, x] = acc
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        res = np.clip(np.sign(res) * np.floor(np.abs(res) + 0.5), info.min, info.max)
    return res.astype(dtype)
