"""Decode only the top rows of a baseline JPEG, bit-exactly (for windows that end early).

A window ending at row `last_row` needs no pixel below it. libjpeg-turbo decodes rows top to
bottom, so a frame header (SOF) that declares fewer rows makes it stop early, and the rows it
does produce are the same as in a full decode as long as every one of them sees the same
neighbours: the declared height is a whole number of MCU rows that covers `last_row`, plus one
more row when chroma is subsampled vertically (4:2:0, 4:4:0), because "fancy" upsampling of
output row r reads the chroma row below it, which at the declared bottom edge would be a
replicated row instead of the real one. The scan data is cut at a byte fraction a little
above the kept fraction of rows (else libjpeg spends as long skipping the unused entropy bytes
one by one as it would decoding them) and closed with EOI.

simplejpeg decodes in strict mode, where the first libjpeg warning raises. The rows are all
written before libjpeg looks for the end of the scan, so the only warning accepted is the
final "N extraneous bytes before marker 0xd9" (the unused scan bytes before our EOI). Any
other warning (the cut came too early, damaged data) returns None and the caller decodes the
whole file as before. Progressive, multi-scan and restart-interval files are never tried.

Measured in `perf/decode_window_experiment.py`; bit-exactness against Pillow's full decode +
crop is tested on many windows, subsamplings and sizes (`tests/ops/test_decoders.py`).
"""

from __future__ import annotations

import re

import numpy as np

from ndd_triton.decoders._jpeg_header import segments

try:
    import simplejpeg  # type: ignore[import-untyped]
except ImportError:  # optional (the `fast` extra)
    simplejpeg = None

# Scan bytes kept beyond the kept fraction of rows (JPEG rows differ in cost; 0 misses over
# thousands of windows of photos at 0.1).
_CUT_MARGIN = 0.1
_HEADER_BYTES = 1 << 16  # headers longer than this (big EXIF blocks) are not tried
_END_WARNING = re.compile(r"extraneous bytes before marker 0xd9$")


def _sequential_frame(b: bytes) -> tuple[int, int, int, int, int] | None:
    """(offset of the SOF height, height, width, MCU height, scan data start) of a JPEG with
    one interleaved baseline/extended Huffman scan and no restart interval, else None."""
    frame = None
    for seg in segments(b):
        if seg is None:
            return None
        marker, at, end = seg
        length = end - at - 2
        if marker in (0xC0, 0xC1):
            if length < 8:
                return None
            components = b[at + 9]
            if length != 8 + 3 * components:
                return None
            vmax = max(b[at + 11 + 3 * k] & 15 for k in range(components))
            frame = (at + 5, b[at + 5] << 8 | b[at + 6], b[at + 7] << 8 | b[at + 8],
                     8 * vmax, components)  # fmt: skip
        elif 0xC2 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            return None  # progressive, lossless, arithmetic: not tried
        elif marker == 0xDD and length == 4 and (b[at + 4] or b[at + 5]):
            return None  # restart markers would be read as stray markers after the last row
        elif marker == 0xDA:
            if frame is None or length < 3 or b[at + 4] != frame[4]:
                return None  # no frame, or not one interleaved scan of every component
            return frame[0], frame[1], frame[2], frame[3], end
    return None


def decode_top_rows(data: np.ndarray, last_row: int, buffer: np.ndarray | None = None
                    ) -> np.ndarray | None:  # fmt: skip
    """RGB pixels of rows `[0, R)` with `last_row <= R < H` of a 3-component baseline JPEG, or
    None when the whole image must be decoded (not applicable, no gain, or any warning). With
    `buffer` (the image's C-contiguous uint8 `(H, W, 3)` output), the rows are decoded into its
    top rows (the rest is not written) and that view is returned."""
    if simplejpeg is None or last_row < 1:
        return None
    frame = _sequential_frame(data[:_HEADER_BYTES].tobytes())
    if frame is None:
        return None
    at, height, width, mcu, scan = frame
    rows = -(-(last_row + (mcu > 8)) // mcu) * mcu
    if rows >= height:
        return None
    cut = scan + int((data.size - scan) * min(1.0, max(0.0, rows / height + _CUT_MARGIN)))
    patched = bytearray(cut + 2)
    patched[:cut] = data[:cut].data
    patched[cut:] = b"\xff\xd9"
    patched[at:at + 2] = rows.to_bytes(2, "big")
    if buffer is None:
        out = np.empty((rows, width, 3), np.uint8)
    elif buffer.shape == (height, width, 3) and buffer.dtype == np.uint8 and \
            buffer.flags.c_contiguous:  # fmt: skip
        out = buffer[:rows]
    else:
        return None
    try:
        simplejpeg.decode_jpeg(patched, colorspace="RGB", buffer=out)
    except ValueError as e:
        if not _END_WARNING.search(str(e)):
            return None
    return out
