"""JPEG header parsing without Pillow, for plain JPEGs (the decoders' inference hot path).

`Image.open` costs ~0.2 ms per JPEG (plugin probing, every segment decoded into `info`),
paid in the calling thread before a batch can decode. This parser walks the marker segments
up to the start of scan and reads only what `ImageInfo` needs: the frame's size, precision and
component count. It answers only where Pillow would certainly open the file the same way
(JPEG, mode L/RGB/CMYK, no EXIF orientation) and returns None otherwise, so that Pillow parses
and errors and unusual files behave exactly as before. It checks what Pillow's segment
handlers check and returns None for:

* a frame other than SOF0/1/2 (baseline, extended, progressive Huffman), a precision other than
  8 bits, other than 1, 3 or 4 components, a zero size or more pixels than the bomb limit;
* any EXIF or XMP segment (they carry the orientation), an MPF segment (Pillow opens those as
  MPO), and the segments whose Pillow handlers can fail (short JFIF, Adobe or ICC segments,
  Photoshop resources, malformed quantisation tables or frame headers);
* markers Pillow treats specially (restart, TEM, JPG, JPGn, DHP, reserved), junk between
  segments, or data that ends before the start of scan.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

MODES = {1: "L", 3: "RGB", 4: "CMYK"}
_HEADER_BYTES = 1 << 16
# Segments that Pillow skips or stores without parsing: DHT, DAC, DQT (checked), DNL, DRI,
# EXP, COM and the APPn (checked below).
_SKIPPED = {0xC4, 0xCC, 0xDB, 0xDC, 0xDD, 0xDF, 0xFE, *range(0xE0, 0xF0)}


def segments(b: bytes | memoryview) -> Iterator[tuple[int, int, int] | None]:
    """(marker, start, end) of each marker segment after SOI, in order (SOS included; the
    caller stops there). Yields None and stops at junk between segments or a segment that
    runs past the data; fill bytes (0xFF 0xFF) are skipped."""
    at, n = 2, len(b)
    while at + 4 <= n:
        if b[at] != 0xFF:
            yield None
            return
        marker = b[at + 1]
        if marker == 0xFF:  # fill byte
            at += 1
            continue
        end = at + 2 + (b[at + 2] << 8 | b[at + 3])
        if end < at + 4 or end > n:
            yield None
            return
        yield marker, at, end
        at = end


_NO_CONTENT_CHECK = frozenset(m for m in _SKIPPED if m != 0xDB and not 0xE0 <= m <= 0xEF)


def read_jpeg_header(data: np.ndarray, max_pixels: int) -> tuple[str, int, int, int] | None:
    """(mode, height, width, channels) of a plain JPEG, or None (ask Pillow)."""
    found = walk_jpeg_header(data, max_pixels)
    return found[0] if found is not None else None


def walk_jpeg_header(data: np.ndarray,
                     max_pixels: int) -> tuple[tuple[str, int, int, int], int] | None:  # fmt: skip
    """`read_jpeg_header`'s answer and the length of the header it read (up to the end of the
    start-of-scan segment: the answer depends on those bytes only), or None.

    The segment walk of `segments` in one loop over a memoryview (no copy of the file; bytes
    made only of the first bytes of the APPn segments, whose prefixes are checked): ~5 us per
    ImageNet-like JPEG, the header of every GPU-decoded image (`decoders.image` prepare)."""
    if data.size < 4 or data[0] != 0xFF or data[1] != 0xD8 or data[2] != 0xFF:
        return None
    # a longer header (big ICC profile) goes to Pillow
    b = memoryview(np.ascontiguousarray(data).reshape(-1))[:_HEADER_BYTES]
    frame = None
    at, n = 2, len(b)
    no_check, skipped = _NO_CONTENT_CHECK, _SKIPPED
    while at + 4 <= n:
        if b[at] != 0xFF:
            return None
        marker = b[at + 1]
        if marker == 0xFF:  # fill byte
            at += 1
            continue
        end = at + 2 + (b[at + 2] << 8 | b[at + 3])
        if end < at + 4 or end > n:
            return None
        if marker == 0xDA:
            if frame is None:
                return None
            precision, height, width, components = frame
            mode = MODES.get(components)
            if precision != 8 or mode is None or height == 0 or width == 0 or \
                    height * width > max_pixels:  # fmt: skip
                return None
            return (mode, height, width, components), end
        if marker in (0xC0, 0xC1, 0xC2):
            size, s = end - at - 4, at + 4
            if frame is not None or size < 6 or (size - 6) % 3:
                return None
            frame = (b[s], b[s + 1] << 8 | b[s + 2], b[s + 3] << 8 | b[s + 4], b[s + 5])
        elif marker not in no_check:
            if marker not in skipped:
                return None
            if marker == 0xDB:  # whole 8- or 16-bit tables (Pillow's DQT handler)
                q = at + 4
                while q < end:
                    q += 1 + (64 if b[q] >> 4 == 0 else 128)
                if q > end:
                    return None
            elif not _plain_app_head(marker, bytes(b[at + 4:min(end, at + 4 + _APP_PREFIX)]),
                                     end - at - 4):  # fmt: skip
                return None
        at = end
    return None


_APP_PREFIX = 32  # longer than every APPn prefix looked at below
_NEVER = 1 << 16  # a segment size no APPn segment reaches: the segment is refused

# What Pillow's APP handler does with an APPn segment, by marker: the first rule whose prefix
# starts the segment decides (it is plain when its size is at least the rule's); a segment
# that no rule matches is stored and plain. Pillow reads the EXIF and XMP orientation, opens
# MPF files as MPO, and fails on short JFIF, ICC and Adobe segments or on Photoshop resources.
_APP_RULES: dict[int, tuple[tuple[bytes, int], ...]] = {
    0xE0: ((b"JFIF", 7),),
    0xE1: ((b"Exif\x00\x00", _NEVER), (b"http://ns.adobe.com/xap/1.0/\x00", _NEVER)),
    0xE2: ((b"ICC_PROFILE\x00", 14), (b"MPF\x00", _NEVER)),
    0xED: ((b"Photoshop 3.0\x00", _NEVER),),
    0xEE: ((b"Adobe", 7),),
}
# The bytes of an APPn segment's head that `_plain_app_head` can look at, by marker
APP_HEAD_BYTES = {m: max(len(p) for p, _ in rules) for m, rules in _APP_RULES.items()}


def _plain_app_head(marker: int, head: bytes, size: int) -> bool:
    """True when Pillow's APP handler stores this segment (`size` bytes, starting with `head`)
    without failing or learning anything that changes `ImageInfo` (`_APP_RULES`)."""
    for prefix, least in _APP_RULES.get(marker, ()):
        if head.startswith(prefix):
            return size >= least
    return True
