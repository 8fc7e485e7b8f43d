"""The headers of a batch of encoded images, without a Python object per plain JPEG.

A decoder's inference needs every sample's header before the batch can run; for the plain
JPEGs of a batch (`_jpeg_header`: what Pillow would open the same way) that is a height, a
width and a channel count, found for the whole batch at once by `_jpeg_batch`. `ImageInfos`
keeps them as rows of one array and makes a sample's `ImageInfo` when something looks at
that sample (its decode); the samples that need Pillow (other formats, EXIF orientation,
errors) are read one by one with `_pillow.read_info` as before.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import overload

import numpy as np

from ndd_triton.decoders._jpeg_batch import plain_jpeg_headers
from ndd_triton.decoders._jpeg_header import MODES
from ndd_triton.decoders._pillow import MAX_PIXELS, ImageInfo, direct_rgb, plain_shapes

_RGB_JPEG = ImageInfo("JPEG", "RGB", 1, 1, 3, 1)


class ImageInfos(Sequence[ImageInfo]):
    """The `ImageInfo` of every sample of a batch: those in `given`, and for the others (plain
    JPEGs: format JPEG, orientation 1) rows of `hwc` (height, width, channels)."""

    __slots__ = ("given", "hwc")

    def __init__(self, hwc: np.ndarray, given: dict[int, ImageInfo] | None = None) -> None:
        self.hwc = hwc  # int64 [N, 3]; the rows of `given` samples are not read
        self.given: dict[int, ImageInfo] = given if given is not None else {}

    def __len__(self) -> int:
        return len(self.hwc)

    @overload
    def __getitem__(self, index: int) -> ImageInfo: ...

    @overload
    def __getitem__(self, index: slice) -> list[ImageInfo]: ...

    def __getitem__(self, index: int | slice) -> ImageInfo | list[ImageInfo]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        info = self.given.get(index)
        if info is not None:
            return info
        if not 0 <= index < len(self):
            raise IndexError(f"sample {index} of {len(self)}")
        height, width, channels = self.hwc[index].tolist()
        return ImageInfo("JPEG", MODES[channels], height, width, channels, 1)

    def __iter__(self) -> Iterator[ImageInfo]:
        return (self[i] for i in range(len(self)))

    def shapes(self, output_type: int, adjust_orientation: bool) -> np.ndarray:
        """`ImageInfo.shape` of every sample as an `[N, 3]` int64 array."""
        shapes = plain_shapes(self.hwc, output_type)
        for i, info in self.given.items():
            shapes[i] = info.shape(output_type, adjust_orientation)
        return shapes

    def all_direct_rgb(self, output_type: int, adjust_orientation: bool) -> bool:
        """`_pillow.direct_rgb` of every sample (plain JPEGs: those with 3 channels)."""
        if not direct_rgb(_RGB_JPEG, output_type, adjust_orientation):
            return False
        given = self.given
        channels = self.hwc[:, 2]
        if not given:  # (a few samples: Python's count beats NumPy's compare and count)
            n = len(channels)
            return (channels.tolist().count(3) if n <= 16 else
                    int(np.count_nonzero(channels == 3))) == n  # fmt: skip
        rgb = channels == 3
        if not all(direct_rgb(info, output_type, adjust_orientation)
                   for info in given.values()):  # fmt: skip
            return False
        rgb[list(given)] = True
        return np.count_nonzero(rgb) == len(rgb)


def plain_infos(samples: Sequence[np.ndarray], hinted: Sequence[ImageInfo | None] | None
                ) -> tuple[ImageInfos, list[int]]:  # fmt: skip
    """`ImageInfos` of the samples whose header is known: a reader's hint (`hinted[i]`) or a
    plain JPEG header (`_jpeg_batch`); and the indices, in order, of the others (the caller
    reads them with `_pillow.read_info` and stores them in `given`)."""
    given: dict[int, ImageInfo] = {}
    if hinted is not None:
        given = {i: info for i, info in enumerate(hinted) if info is not None}
    if not given:  # (no hints: the common case, without index lists)
        hwc = plain_jpeg_headers(samples, MAX_PIXELS)
        found = hwc[:, 2]
        todo = [] if np.count_nonzero(found) == len(found) else np.flatnonzero(found == 0).tolist()
        return ImageInfos(hwc), todo
    rest = [i for i in range(len(samples)) if i not in given]
    found = plain_jpeg_headers([samples[i] for i in rest], MAX_PIXELS)
    hwc = np.zeros((len(samples), 3), np.int64)
    hwc[rest] = found
    return ImageInfos(hwc, given), np.asarray(rest, np.int64)[found[:, 2] == 0].tolist()
