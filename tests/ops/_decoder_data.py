"""Encoded test images and independent decode references shared by the decoder tests.

References decode with Pillow through other entry points than the implementation (plain
`convert`, `ImageOps.exif_transpose`, float colour formulas) and compute windows from the
spec's formulas.
"""

from __future__ import annotations

import io
import math

import numpy as np
from PIL import Image, ImageOps

import ndd_triton as ndd
from ndd_triton import types

RGB, BGR, GRAY, YCBCR, ANY = (types.RGB, types.BGR, types.GRAY, types.YCbCr, types.ANY_DATA)


# ---- encoded test images ---------------------------------------------------------------------
def _pixels(h, w, c, seed=0):
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:h, 0:w]
    base = np.stack([(xx * 255 // max(w - 1, 1)), (yy * 255 // max(h - 1, 1)),
                     (xx + yy) * 7 % 256, 255 - xx * 20 % 256], axis=-1)[..., :c]  # fmt: skip
    noise = rng.integers(0, 40, size=(h, w, c))
    arr = np.clip(base + noise, 0, 255).astype(np.uint8)
    return arr[..., 0] if c == 1 else arr


def photo_jpegs():
    """The bundled photos (`ndd_triton/data/images/*.jpg`) as encoded arrays."""
    from pathlib import Path

    folder = Path(ndd.__file__).parent / "data" / "images"
    return [np.fromfile(p, np.uint8) for p in sorted(folder.glob("*.jpg"))]


def encode(arr, fmt, **save):
    buf = io.BytesIO()
    Image.fromarray(arr).save(buf, fmt, **save)
    return np.frombuffer(buf.getvalue(), np.uint8).copy()


def with_orientation(arr, orientation, fmt="PNG"):
    exif = Image.Exif()
    exif[0x0112] = orientation
    return encode(arr, fmt, exif=exif.tobytes())


def encoded_files() -> dict[str, np.ndarray]:
    """Small encoded images of every supported format, by name."""
    return {
        "jpeg420": encode(_pixels(13, 17, 3), "JPEG", quality=90),
        "jpeg444": encode(_pixels(9, 22, 3, 1), "JPEG", quality=95, subsampling=0),
        "jpeg_gray": encode(_pixels(11, 7, 1, 2), "JPEG"),
        "png": encode(_pixels(7, 13, 3, 3), "PNG"),
        "png_gray": encode(_pixels(5, 9, 1, 4), "PNG"),
        "png_rgba": encode(_pixels(6, 4, 4, 5), "PNG"),
        "png_1x1": encode(_pixels(1, 1, 3, 6), "PNG"),
        "bmp": encode(_pixels(3, 5, 3, 7), "BMP"),
        "tiff": encode(_pixels(4, 6, 3, 8), "TIFF"),
        "webp": encode(_pixels(5, 7, 3, 9), "WEBP", lossless=True),
        "ppm": encode(_pixels(4, 4, 3, 10), "PPM"),
        "big": encode(_pixels(40, 60, 3, 11), "PNG"),
    }


# ---- independent reference ---------------------------------------------------------------
def ref_decode(data, output_type=RGB, dtype=None, adjust_orientation=True):
    image = Image.open(io.BytesIO(data.tobytes()))
    fmt = image.format
    if adjust_orientation:
        image = ImageOps.exif_transpose(image)
    if output_type == ANY:
        out = np.asarray(image)
        out = out[..., None] if out.ndim == 2 else out
    elif output_type == GRAY and fmt == "JPEG":
        ycc = Image.open(io.BytesIO(data.tobytes()))
        ycc.draft("YCbCr", ycc.size)  # libjpeg's Y plane, no colour conversion
        out = np.asarray(ycc)
        out = (out if out.ndim == 2 else out[..., 0])[..., None]
        if adjust_orientation:
            out = np.asarray(ImageOps.exif_transpose(Image.fromarray(out[..., 0])))[..., None]
    else:
        rgb = np.asarray(image.convert("RGB")).astype(np.float64)
        if output_type == BGR:
            out = rgb[..., ::-1]
        elif output_type == GRAY:
            out = np.floor(rgb @ [0.299, 0.587, 0.114] + 0.5)[..., None]
        elif output_type == YCBCR:
            y = 16 + (65.481 * rgb[..., 0] + 128.553 * rgb[..., 1] + 24.966 * rgb[..., 2]) / 255
            cb = 128 + (-37.797 * rgb[..., 0] - 74.203 * rgb[..., 1] + 112 * rgb[..., 2]) / 255
            cr = 128 + (112 * rgb[..., 0] - 93.786 * rgb[..., 1] - 18.214 * rgb[..., 2]) / 255
            out = np.floor(np.stack([y, cb, cr], -1) + 0.5)
        else:
            out = rgb
        out = out.astype(np.uint8)
    dtype = None if dtype is None else ndd.dtype(dtype).numpy_dtype
    if dtype == np.float32:
        return (out.astype(np.float32) / np.float32(255)).astype(np.float32)
    if dtype == np.uint16:
        return out.astype(np.uint16) * 257
    return np.ascontiguousarray(out)


def _round_half_away(x):
    return math.copysign(math.floor(abs(x) + 0.5), x)


def ref_crop(data, crop, crop_pos_x=0.5, crop_pos_y=0.5, **kw):
    full = ref_decode(data, **kw)
    ch, cw = int(crop[0]), int(crop[1])
    y0 = int(_round_half_away(crop_pos_y * (full.shape[0] - ch)))
    x0 = int(_round_half_away(crop_pos_x * (full.shape[1] - cw)))
    return full[y0:y0 + ch, x0:x0 + cw]
