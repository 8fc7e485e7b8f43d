"""Host image decoding with Pillow: header probing, full decode, colour conversion.

Pillow's JPEG path is libjpeg-turbo with the ISLOW IDCT and fancy upsampling, the same library
and settings as DALI 2.4's CPU decoder, so RGB output matches DALI bit-exactly (golden data).
Pillow releases the GIL while it decodes, so samples decode in parallel on the CPU thread pool.

Baseline JPEGs with 3 components (Pillow mode RGB) decode through `simplejpeg` when it is
installed (`pip install ndd_triton[fast]`): the same libjpeg-turbo, ISLOW IDCT and fancy
upsampling, so the pixels are identical (checked in tests), at 0.87 vs 1.40 CPU ms for a
500x375 image, because Pillow unpacks to its 4-byte RGBX storage and copies it out again.
It runs in strict mode: any libjpeg warning sends the image to Pillow, so errors and
recoverable damage behave exactly as without it.

Plain JPEG headers are parsed by `_jpeg_header` (no Pillow objects: ~15x cheaper), which
answers only where Pillow would open the file identically and defers to Pillow otherwise; a
decoder's batch is parsed at once by `_jpeg_batch` (the same answers; ~0.5-1 us per JPEG when
the batch shares one header layout, with no walk at all when it is a recent batch's layout).

Functions here raise `ImageError` with a message that does not name the op or the sample; the
callers (op inference and kernels) add both.
"""

from __future__ import annotations

import io
import struct
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from PIL import Image, UnidentifiedImageError

from ndd_triton.decoders import _roi_decode
from ndd_triton.decoders._jpeg_header import walk_jpeg_header
from ndd_triton.decoders._jpeg_rows import decode_top_rows

try:
    import simplejpeg  # type: ignore[import-untyped]
except ImportError:  # optional fast path
    simplejpeg = None

# DALI's formats (JPEG, JPEG 2000, TIFF, PNG, BMP, PNM, WebP); MPO is Pillow's name for
# multi-picture JPEGs. Restricting Image.open to these also keeps it away from EPS & co.
FORMATS = ("JPEG", "MPO", "PNG", "BMP", "TIFF", "WEBP", "PPM", "JPEG2000")

# Output types, DALIImageType codes.
RGB, BGR, GRAY, YCBCR, ANY_DATA = 0, 1, 2, 3, 4

# Pillow refuses images above 2 * MAX_IMAGE_PIXELS as decompression bombs; we reject the same
# images ourselves, with a message that says what was declared.
MAX_PIXELS = 2 * (Image.MAX_IMAGE_PIXELS or 89478485)

_EXIF_ORIENTATION = 0x0112
_STORED_CHANNELS = {"1": 1, "L": 1, "P": 3, "LA": 2, "La": 2, "PA": 4, "RGB": 3, "RGBA": 4,
                    "RGBa": 4, "RGBX": 4, "CMYK": 4, "YCbCr": 3, "LAB": 3, "HSV": 3, "I": 1,
                    "F": 1, "I;16": 1, "I;16B": 1, "I;16L": 1, "I;16N": 1}  # fmt: skip


class ImageError(Exception):
    """The encoded data cannot be decoded (the caller names the op and the sample)."""


@dataclass(frozen=True, slots=True)
class ImageInfo:
    """What the header says: format, Pillow mode, stored size and channels, EXIF orientation."""

    format: str
    mode: str
    height: int
    width: int
    channels: int
    orientation: int

    def shape(self, output_type: int, adjust_orientation: bool) -> tuple[int, int, int]:
        """The decoded `(H, W, C)` for an output type (EXIF orientations 5-8 swap H and W)."""
        h, w = self.height, self.width
        if adjust_orientation and self.orientation >= 5:
            h, w = w, h
        if output_type == GRAY:
            c = 1
        elif output_type == ANY_DATA:
            c = self.channels
        else:
            c = 3
        return h, w, c


def plain_shapes(hwc: np.ndarray, output_type: int) -> np.ndarray:
    """`ImageInfo.shape` of a batch of plain JPEGs (orientation 1: `adjust_orientation` changes
    nothing) from their `[N, 3]` (height, width, channels), in one step."""
    shapes = hwc.copy()
    if output_type == GRAY:
        shapes[:, 2] = 1
    elif output_type != ANY_DATA:
        shapes[:, 2] = 3
    return shapes


def _formats() -> list[str]:
    """`FORMATS` that this Pillow build has plugins for (loads the plugins once)."""
    Image.init()
    return [f for f in FORMATS if f in Image.OPEN]


def _open(data: np.ndarray) -> Image.Image:
    """Open (header only) with Pillow's bomb warning muted: `read_info` applies the limit."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", Image.DecompressionBombWarning)
        return Image.open(io.BytesIO(data.tobytes()), formats=_formats())


def read_info(data: np.ndarray) -> ImageInfo:
    """Parse the header of one encoded image (no pixel data is decoded)."""
    if data.size == 0:
        raise ImageError("the encoded data is empty (0 bytes)")
    info = plain_jpeg_info(data)
    return info if info is not None else _read_info_pillow(data)


def plain_jpeg_info(data: np.ndarray) -> ImageInfo | None:
    """`read_info` of a plain JPEG (the Python header walk, no Pillow), else None: cheap for
    any data, so a reader's prefetch thread may call it on every file (`_header_hints`)."""
    found = walk_plain_jpeg(data)
    return found[0] if found is not None else None


def walk_plain_jpeg(data: np.ndarray) -> tuple[ImageInfo, int] | None:
    """`plain_jpeg_info` and the length of the header it was read from (the info depends on
    those first bytes only), or None."""
    found = walk_jpeg_header(data, MAX_PIXELS)
    if found is None:
        return None
    (mode, height, width, channels), length = found
    return ImageInfo("JPEG", mode, height, width, channels, 1), length


def _read_info_pillow(data: np.ndarray) -> ImageInfo:
    """`read_info` by `Image.open` (every format, EXIF orientation, all header errors)."""
    try:
        image = _open(data)
    except Image.DecompressionBombError as e:
        raise ImageError(f"the image is too large to decode ({e})") from e
    except UnidentifiedImageError:
        head = bytes(data[:8]).hex(" ")
        raise ImageError(f"unrecognised or corrupt image data ({data.size} bytes starting with "
                         f"{head}); supported formats: JPEG, JPEG 2000, TIFF, PNG, BMP, PNM, "
                         "WebP") from None
    except (OSError, ValueError, SyntaxError, EOFError, struct.error) as e:
        raise ImageError(f"corrupt image header: {e}") from e
    width, height = image.size
    if width <= 0 or height <= 0:
        raise ImageError(f"the header declares an empty image ({width} x {height})")
    if width * height > MAX_PIXELS:
        raise ImageError(f"the header declares {height} x {width} pixels, more than the limit "
                         f"of {MAX_PIXELS} (2 * PIL.Image.MAX_IMAGE_PIXELS); this looks like a "
                         "decompression bomb")
    channels = _STORED_CHANNELS.get(image.mode)
    if channels is None:
        raise ImageError(f"unsupported pixel format {image.mode!r} in a {image.format} image")
    if image.mode == "P" and "transparency" in image.info:
        channels = 4
    try:
        orientation = int(image.getexif().get(_EXIF_ORIENTATION, 1))
    except Exception:  # a broken EXIF block must not stop decoding, as in DALI
        orientation = 1
    return ImageInfo(str(image.format), image.mode, height, width, channels,
                     orientation if 1 <= orientation <= 8 else 1)  # fmt: skip


def _reopen(data: np.ndarray, info: ImageInfo) -> Image.Image:
    """Open with the plugin found by `read_info`: no format probing, no second bomb check."""
    Image.init()  # the plugins (`read_info` may not have needed them)
    factory = Image.OPEN[info.format][0]
    return factory(io.BytesIO(data.tobytes()), "")


def _to_8bit(image: Image.Image) -> Image.Image:
    """16-bit/int/float grey to 8 bits (16-bit scales by 1/257, as a u16 -> u8 rescale)."""
    if image.mode in ("I;16", "I;16B", "I;16L", "I;16N", "I"):
        arr = np.asarray(image, dtype=np.float64)
        return Image.fromarray(np.clip(np.floor(arr / 257 + 0.5), 0, 255).astype(np.uint8))
    if image.mode == "F":
        arr = np.asarray(image, dtype=np.float64)
        return Image.fromarray(np.clip(np.floor(arr * 255 + 0.5), 0, 255).astype(np.uint8))
    return image


def _pixels(image: Image.Image, info: ImageInfo, output_type: int) -> np.ndarray:
    """Decoded HWC uint8 pixels in the output colour space (before orientation)."""
    image = _to_8bit(image)
    if output_type == ANY_DATA:
        if image.mode in ("P", "PA"):
            image = image.convert("RGBA" if info.channels == 4 else "RGB")
        elif image.mode in ("1", "CMYK", "YCbCr", "LAB", "HSV", "La", "RGBa", "RGBX"):
            image = image.convert({"1": "L", "La": "LA"}.get(image.mode, "RGBA" if info.channels
                                                             == 4 else "RGB"))  # fmt: skip
        arr = np.asarray(image)
        return arr[:, :, None] if arr.ndim == 2 else arr
    if output_type == GRAY and image.mode == "L":
        return np.asarray(image)[:, :, None]
    rgb = np.asarray(image if image.mode == "RGB" else image.convert("RGB"))
    if output_type == BGR:
        return rgb[:, :, ::-1]
    if output_type == GRAY:
        return rgb_to_gray(rgb, rounded=info.format in ROUNDED_GRAY_FORMATS)
    if output_type == YCBCR:
        return rgb_to_ycbcr(rgb)
    return rgb


# Formats DALI 2.4 decodes through OpenCV, whose RGB -> grey rounds (BMP, PPM, TIFF: all
# pixels of recorded images equal; WebP: 2 of 6,887 off by 1). PNG (libpng) and the rest
# truncate (PNG: 6-21 of 7-10k pixels off by 1, the closest formula found).
ROUNDED_GRAY_FORMATS = frozenset({"BMP", "PPM", "TIFF", "WEBP"})


def rgb_to_gray(rgb: np.ndarray, rounded: bool = False) -> np.ndarray:
    """BT.601 luma in 14-bit fixed point, truncated or rounded (`rounded`, OpenCV's
    cvtColor); golden PNG: all but 1 of 1,900 pixels exact."""
    acc = rgb.astype(np.int32) @ np.array([4899, 9617, 1868], np.int32)
    if rounded:
        acc += 1 << 13
    return np.right_shift(acc, 14).astype(np.uint8)[:, :, None]


def rgb_to_ycbcr(rgb: np.ndarray) -> np.ndarray:
    """BT.601 studio-swing YCbCr from RGB, rounded half away (DALI's decoder/CSC formula)."""
    m = np.array([[65.481, 128.553, 24.966], [-37.797, -74.203, 112.0],
                  [112.0, -93.786, -18.214]]) / 255.0  # fmt: skip
    ycc = rgb.astype(np.float64) @ m.T + np.array([16.0, 128.0, 128.0])
    return np.asarray(np.clip(np.floor(ycc + 0.5), 0, 255), dtype=np.uint8)


def _orient(pixels: np.ndarray, orientation: int) -> np.ndarray:
    """Apply an EXIF orientation (1-8) to HWC pixels, as `ImageOps.exif_transpose` does."""
    if orientation in (5, 6, 7, 8):
        pixels = np.swapaxes(pixels, 0, 1)  # transpose, then mirror as the tag says
        flips = {5: (), 6: (1,), 7: (0, 1), 8: (0,)}[orientation]
    else:
        flips = {1: (), 2: (1,), 3: (0, 1), 4: (0,)}[orientation]
    return np.flip(pixels, axis=flips) if flips else pixels


def _turbo_rgb(data: np.ndarray, info: ImageInfo, out: np.ndarray | None) -> np.ndarray | None:
    """RGB pixels of a 3-component JPEG by simplejpeg (into `out` when given), or None when
    it is not installed, not applicable or reports anything (Pillow then decodes)."""
    if simplejpeg is None or info.format != "JPEG" or info.mode != "RGB":
        return None
    try:
        return simplejpeg.decode_jpeg(data, colorspace="RGB", buffer=out)  # type: ignore[no-any-return,unused-ignore]
    except Exception:
        return None


def direct_rgb(info: ImageInfo, output_type: int, adjust_orientation: bool) -> bool:
    """Whether the image may decode straight into a uint8 `(H, W, 3)` output by simplejpeg
    (`decode_into`): a 3-component JPEG, RGB output, no orientation change."""
    return simplejpeg is not None and output_type in (RGB, ANY_DATA) and \
        info.format == "JPEG" and info.mode == "RGB" and \
        not (adjust_orientation and info.orientation != 1)  # fmt: skip


def decode_into(out: np.ndarray, data: np.ndarray, info: ImageInfo, output_type: int,
                adjust_orientation: bool) -> bool:  # fmt: skip
    """Decode straight into `out` (uint8 HWC of the decoded shape) when the fast path applies
    (`direct_rgb`); False when the caller must use `decode`."""
    if not direct_rgb(info, output_type, adjust_orientation) or out.dtype != np.uint8 or \
            not out.flags.c_contiguous or out.shape != (info.height, info.width, 3):  # fmt: skip
        return False
    return _turbo_rgb(data, info, out) is not None


def direct_rgb_decoder() -> Callable[..., Any]:
    """simplejpeg's `decode_jpeg(data, "RGB", buffer=out)`, for callers that checked
    `direct_rgb` for every image of a batch."""
    assert simplejpeg is not None
    return simplejpeg.decode_jpeg  # type: ignore[no-any-return]


def decode(data: np.ndarray, info: ImageInfo, output_type: int, adjust_orientation: bool,
           rows: int | None = None) -> np.ndarray:  # fmt: skip
    """Decode one image to HWC uint8 in the output colour space (possibly a strided view).

    With `rows`, only the first `rows` rows are needed: a plain RGB JPEG may then come back
    with fewer rows than the image (at least `rows`, identical to the full decode's)."""
    rgb = None
    if output_type in (RGB, BGR, YCBCR, ANY_DATA):
        if rows is not None and info.format == "JPEG" and info.mode == "RGB" and \
                not (adjust_orientation and info.orientation != 1):  # fmt: skip
            rgb = decode_top_rows(data, rows)
        if rgb is None:
            rgb = _turbo_rgb(data, info, None)
    if rgb is not None:
        pixels = _from_rgb(rgb, output_type)
        if adjust_orientation and info.orientation != 1:
            pixels = _orient(pixels, info.orientation)
        return pixels
    try:
        image = _reopen(data, info)
        if output_type == GRAY and info.format in ("JPEG", "MPO") and image.mode != "CMYK":
            image.draft("L", image.size)  # libjpeg's own grey output, as DALI (golden)
        image.load()
        pixels = _pixels(image, info, output_type)
    except ImageError:
        raise
    except Exception as e:  # Pillow, zlib and libjpeg raise many types
        raise ImageError(f"cannot decode the {info.format} image: {type(e).__name__}: {e}"
                         ) from e  # fmt: skip
    if adjust_orientation and info.orientation != 1:
        pixels = _orient(pixels, info.orientation)
    return pixels


def decode_window(data: np.ndarray, info: ImageInfo, output_type: int, adjust_orientation: bool,
                  window: tuple[int, int, int, int]) -> np.ndarray:  # fmt: skip
    """The pixels of `window` (y0, x0, h, w over the oriented image) as `decode` gives them:
    a plain RGB JPEG decodes only the window's region when that is cheaper (`_roi_decode`),
    anything else decodes the rows down to the window's end and is cut."""
    y0, x0, h, w = window
    if output_type in (RGB, BGR, YCBCR, ANY_DATA) and info.format == "JPEG" and \
            info.mode == "RGB" and not (adjust_orientation and info.orientation != 1) and \
            _roi_decode.worth_it(info.height, info.width, h, w):  # fmt: skip
        rgb = _roi_decode.decode_window(data, info.height, info.width, y0, x0, h, w)
        if rgb is not None:
            return _from_rgb(rgb, output_type)
    pixels = decode(data, info, output_type, adjust_orientation, y0 + h)
    return pixels[y0:y0 + h, x0:x0 + w]


def _from_rgb(rgb: np.ndarray, output_type: int) -> np.ndarray:
    """RGB pixels in the output colour space (BGR a view)."""
    if output_type == BGR:
        return rgb[:, :, ::-1]
    return rgb_to_ycbcr(rgb) if output_type == YCBCR else rgb


def store(out: np.ndarray, pixels: np.ndarray) -> None:
    """Write uint8 pixels into `out`, rescaling to its dtype's range (f32: /255)."""
    kind = out.dtype
    if kind == np.uint8:
        out[...] = pixels
    elif kind.kind == "f":
        np.divide(pixels, np.float32(255), out=out, dtype=np.float32, casting="unsafe")
    elif kind == np.uint16:
        np.multiply(pixels, np.uint16(257), out=out, dtype=np.uint16)
    elif kind == np.int16:  # [0, 255] -> [0, 32767], rounded half away
        out[...] = np.floor(pixels.astype(np.float64) * (32767 / 255) + 0.5).astype(np.int16)
    else:
        raise ImageError(f"unsupported output dtype {kind}")
