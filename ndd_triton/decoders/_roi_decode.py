"""Decode only a window of a JPEG on the CPU: nvImageCodec's libjpeg-turbo backend (optional).

libjpeg-turbo can skip the rows above a window (entropy-decoded, not transformed), stop after
its last row, and transform only the iMCU columns that hold it. nvImageCodec exposes that as
a region of a code stream, and its CPU-only backend needs no GPU or CUDA library (the
`nvidia-nvimgcodec-cu12` wheel alone). On RN50-like crop windows a window costs ~0.75x the
full decode, on detection-like ones ~0.85x (perf/README.md); DALI's `decoders.image_slice`
and `image_crop` decode windows the same way.

Bit-exactness: a window must hold the bytes of the full decode (`_pillow.decode`: simplejpeg
or Pillow, both libjpeg-turbo with the default ISLOW IDCT and fancy upsampling).
The region asked for is the window plus `MARGIN` pixels on every side that has image there,
so that the edge effects of a cropped decode (upsampled chroma at the cut, which libjpeg-turbo
places at an iMCU boundary) fall outside the window; the window is then cut out of it. The
first use checks this on generated JPEGs (4:2:0, and 4:4:4 with an EXIF orientation, which must
not be applied) against the full decode, over windows that start and end on and off iMCU
boundaries; any difference (another libjpeg-turbo build) turns this path off for the process,
as does `NDD_TRITON_ROI_DECODE=0`.
"""

from __future__ import annotations

import contextlib
import io
import os
import tempfile
import threading
from collections.abc import Iterator
from typing import Any

import numpy as np

MARGIN = 16  # pixels decoded beyond the window (an iMCU of 4:2:0 is 16x16)
# A window larger than this share of the image is decoded whole (a region decode costs ~50 us
# more per call than simplejpeg; measured on 97x65 to 1000x872 JPEGs).
MAX_AREA_SHARE = 0.8
MIN_PIXELS = 1 << 16  # smaller images: the call overhead is most of the saving

_lock = threading.Lock()
_local = threading.local()
_codec: list[Any] = []  # [module] when usable, [None] when not; empty before the first use


@contextlib.contextmanager
def _quiet_import() -> Iterator[None]:
    """Import nvImageCodec without its messages: its extensions print an error for every GPU
    library that is missing (the CPU backend needs none; file descriptor 2 goes to a scratch
    file meanwhile), and its logger one per file it cannot decode (`PYNVIMGCODEC_VERBOSITY=0`
    unless the user set a level, read at import: the caller reports those errors itself)."""
    quiet = "PYNVIMGCODEC_VERBOSITY" not in os.environ
    if quiet:
        os.environ["PYNVIMGCODEC_VERBOSITY"] = "0"
    try:
        saved = os.dup(2)
    except OSError:
        saved = -1
    try:
        with tempfile.TemporaryFile() as scratch:
            if saved >= 0:
                os.dup2(scratch.fileno(), 2)
            try:
                yield
            finally:
                if saved >= 0:
                    os.dup2(saved, 2)
    finally:
        if saved >= 0:
            os.close(saved)
        if quiet:
            del os.environ["PYNVIMGCODEC_VERBOSITY"]


def _load() -> Any:
    """The nvImageCodec module after the self-check, or None (not installed, turned off, or
    its windows differ from the full decode here)."""
    if _codec:
        return _codec[0]
    with _lock:
        if _codec:
            return _codec[0]
        module = None
        if os.environ.get("NDD_TRITON_ROI_DECODE", "1") != "0":
            try:
                with _quiet_import():
                    from nvidia import nvimgcodec as module  # type: ignore[import-not-found,no-redef]
            except Exception:  # not installed, or its libraries do not load
                module = None
        _codec.append(module)
        if module is not None and not _self_check():
            _codec[0] = None
        return _codec[0]


def _decoder(module: Any) -> tuple[Any, Any]:
    """This thread's CPU-only decoder (one libjpeg-turbo worker, no CUDA) and its parameters:
    the stored pixels, EXIF orientation not applied (the caller windows the raw image)."""
    found = getattr(_local, "decoder", None)
    if found is None:
        dec = module.Decoder(device_id=module.NVIMGCODEC_DEVICE_CPU_ONLY, max_num_cpu_threads=1,
                             backends=[module.Backend(module.BackendKind.CPU_ONLY)])  # fmt: skip
        found = _local.decoder = (dec, module.DecodeParams(apply_exif_orientation=False))
    return found


def worth_it(height: int, width: int, h: int, w: int) -> bool:
    """Whether a region decode of an `h x w` window is expected to beat the full decode."""
    full = height * width
    return full >= MIN_PIXELS and h * w <= MAX_AREA_SHARE * full


def decode_window(data: np.ndarray, height: int, width: int, y0: int, x0: int, h: int,
                  w: int) -> np.ndarray | None:  # fmt: skip
    """RGB uint8 `(h, w, 3)` pixels of the window `[y0, y0 + h) x [x0, x0 + w)` of a
    3-component JPEG of `height x width` as stored (EXIF orientation not applied), the full
    decode's bytes; None when this path is unavailable or the decoder gives up (the caller
    then decodes the whole image and reports its errors)."""
    module = _load()
    if module is None:
        return None
    return _region(module, data, height, width, y0, x0, h, w)


def _region(module: Any, data: Any, height: int, width: int, y0: int, x0: int, h: int,
            w: int) -> np.ndarray | None:  # fmt: skip
    top, left = max(0, y0 - MARGIN), max(0, x0 - MARGIN)
    bottom, right = min(height, y0 + h + MARGIN), min(width, x0 + w + MARGIN)
    try:
        stream = module.CodeStream(data)
        if (stream.height, stream.width) != (height, width):
            return None
        if (top, left, bottom, right) != (0, 0, height, width):
            region = module.Region(start=[top, left], end=[bottom, right])
            stream = stream.get_sub_code_stream(region=region)
        dec, params = _decoder(module)
        image = dec.decode(stream, params=params)
    except Exception:
        return None
    if image is None:
        return None
    pixels = np.asarray(image)
    if pixels.shape != (bottom - top, right - left, 3) or pixels.dtype != np.uint8:
        return None
    return pixels[y0 - top:y0 - top + h, x0 - left:x0 - left + w]


def _self_check() -> bool:
    """Whether windows of a generated 4:2:0 JPEG (and a 4:4:4 one with an EXIF orientation)
    equal its full decode as stored."""
    from PIL import Image

    module = _codec[0]
    rng = np.random.default_rng(3)
    yy, xx = np.mgrid[0:75, 0:101]
    base = np.stack([yy * 3, xx * 2, (yy + xx) * 2], axis=-1) % 256
    noisy = (base + rng.integers(0, 60, base.shape)).clip(0, 255).astype(np.uint8)
    windows = [(0, 0, 75, 101), (16, 16, 32, 48), (17, 15, 40, 50), (0, 33, 75, 20),
               (48, 0, 27, 101), (31, 64, 33, 37), (5, 90, 9, 11)]  # fmt: skip
    exif = Image.Exif()
    exif[0x0112] = 3  # rotated 180 degrees: must come back as stored
    for subsampling, extra in ((2, {}), (0, {"exif": exif.tobytes()})):  # 4:2:0, 4:4:4
        buf = io.BytesIO()
        Image.fromarray(noisy).save(buf, format="JPEG", quality=85, subsampling=subsampling,
                                    **extra)  # fmt: skip
        data = np.frombuffer(buf.getvalue(), np.uint8)
        full = _full_decode(buf.getvalue())
        for y0, x0, h, w in windows:
            got = _region(module, data, 75, 101, y0, x0, h, w)
            if got is None or not np.array_equal(got, full[y0:y0 + h, x0:x0 + w]):
                return False
    return True


def _full_decode(data: bytes) -> np.ndarray:
    """RGB pixels as the decoders' full decode gives them (`_pillow.decode`: simplejpeg when
    installed, else Pillow; both libjpeg-turbo with its defaults)."""
    try:
        import simplejpeg  # type: ignore[import-untyped]
    except ImportError:
        from PIL import Image

        return np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))
    return simplejpeg.decode_jpeg(data, colorspace="RGB")  # type: ignore[no-any-return]
