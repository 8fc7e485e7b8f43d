"""Whether encoded files are complete, before nvImageCodec sees them (the GPU decoders).

nvJPEG decodes truncated files without complaint, so a batch with one goes to the host
decoder, whose error names the file and the problem (the CPU backend's). The check is O(1)
per file for the plain JPEGs a header walk or a reader already looked at.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from ndd_triton.decoders._image_infos import ImageInfos


def all_complete(data: list[np.ndarray], infos: Any, eoi: np.ndarray | bool | None = None) -> bool:
    """`complete` of every file, O(1) per file for the plain JPEGs whose header was walked
    (`ImageInfos` rows outside `given`: the walk read their whole start-of-scan segment, so a
    file that ends in the end-of-image marker has it after the scan's start) and end in it.
    `eoi`: whether each file ends in the marker, when a reader found out for the whole batch
    (`_header_hints.HINT_EOI`; True: every one does, `HINT_ALL_EOI`), else each file's last
    bytes are read here."""
    if eoi is True:
        ends = True
    elif eoi is not None and len(eoi) == len(data):
        ends = bool(eoi.all())
    else:
        tails = [d[-2:].tobytes() for d in data]  # (a slice and a compare: ~0.3 us a file)
        ends = tails.count(_EOI) == len(tails)
    if ends and type(infos) is ImageInfos:
        given = infos.given
        if not given:
            return True
        return all(complete(data[i]) for i in given)
    return all(complete(d) for d in data)


_EOI = b"\xff\xd9"


def complete(data: np.ndarray) -> bool:
    """False for a JPEG with no end-of-image marker after its scan or a PNG with no IEND chunk:
    nvJPEG decodes truncated files without complaint, so they take the host path, whose
    decoder names the file and the problem (the CPU backend's error). Searches the file in
    place (no copy; the start of scan is near the start; a file ending in the marker needs
    nothing more) and else copies only its last `_TAIL` bytes, the whole file when the marker
    is not in those."""
    view = memoryview(data)
    if view[:2] == b"\xff\xd8":
        found = _SOS.search(view)  # 0xFFD9 cannot occur inside entropy-coded data
        if found is None:
            return False
        if view[-2:] == b"\xff\xd9":
            return len(view) - 2 > found.start()
        return _last(data, b"\xff\xd9") > found.start()
    if view[:8] == b"\x89PNG\r\n\x1a\n":
        return _last(data, b"IEND") > 8
    return True


_SOS = re.compile(b"\xff\xda")
_TAIL = 1 << 12


def _last(data: np.ndarray, marker: bytes) -> int:
    """`data.tobytes().rfind(marker)`, looking at the last `_TAIL` bytes first."""
    start = max(data.size - _TAIL, 0)
    found = data[start:].tobytes().rfind(marker)
    if found >= 0 or start == 0:
        return start + found if found >= 0 else -1
    return data.tobytes().rfind(marker)
