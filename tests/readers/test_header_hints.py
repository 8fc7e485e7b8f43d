"""Readers parse JPEG headers on their prefetch thread; the decoders use them."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "ops"))
from _decoder_data import encoded_files, ref_decode, with_orientation

import ndd_triton as ndd
from ndd_triton.decoders import _header_hints, _jpeg_batch, _jpeg_header, _pillow

NAMES = ["jpeg420", "jpeg444", "jpeg_gray", "png", "bmp"]


@pytest.fixture
def image_tree(tmp_path: Path) -> Path:
    files = encoded_files()
    files["jpeg_exif"] = with_orientation(files["jpeg420"], 6)
    for i, name in enumerate([*NAMES, "jpeg_exif"]):
        (tmp_path / "c").mkdir(exist_ok=True)
        (tmp_path / "c" / f"{i}_{name}.img").write_bytes(files[name].tobytes())
    return tmp_path


def _reader_batch(root: Path, size: int = 6):  # type: ignore[no-untyped-def]
    reader = ndd.readers.File(file_root=str(root), file_filters=["*.img"])
    (batch, _), = list(reader.next_epoch(batch_size=size))
    return batch


def test_reader_attaches_the_headers_of_plain_jpegs(image_tree):
    batch = _reader_batch(image_tree)
    infos = batch._storage_or_raise().hints[_header_hints.HINT]
    for sample, info in zip(batch, infos, strict=True):
        data = np.asarray(sample)
        plain = _jpeg_header.read_jpeg_header(data, _pillow.MAX_PIXELS)
        if plain is None:  # PNG, BMP, the EXIF JPEG: the decoder parses those itself
            assert info is None
        else:
            assert info == _pillow.read_info(data)
    assert sum(info is not None for info in infos) == 3


def test_decoders_use_the_hints_and_parse_the_rest(image_tree, monkeypatch):
    batch = _reader_batch(image_tree)
    expected = [ref_decode(np.asarray(s)) for s in batch]
    parsed, walked = [], []
    real = _pillow.read_info
    monkeypatch.setattr(_pillow, "read_info", lambda data: parsed.append(data.size) or real(data))
    real_walk = _jpeg_batch.walk_jpeg_header
    monkeypatch.setattr(_jpeg_batch, "walk_jpeg_header",
                        lambda data, limit: walked.append(data.size) or real_walk(data, limit))
    out = ndd.decoders.image(batch)
    for got, ref in zip(out, expected, strict=True):
        np.testing.assert_array_equal(np.asarray(got), ref)
    assert len(walked) == 3  # PNG, BMP and the EXIF JPEG: the plain JPEGs were hinted
    assert len(parsed) == 3  # ... and Pillow reads those
    parsed.clear()
    walked.clear()
    monkeypatch.setattr(_jpeg_batch, "_recent", ())  # (no layouts of earlier batches)
    ndd.decoders.image(batch.select(list(range(6)))).evaluate()  # a new storage: no hints
    # every header parsed in the call: each plain JPEG walked, or matched with the layout of
    # the first one walked; the PNG, the BMP and the EXIF JPEG walked (refused)
    assert 4 <= len(walked) <= 6
    assert len(parsed) == 3


def test_non_image_reader_outputs_get_no_hints(tmp_path):
    (tmp_path / "a").mkdir()
    for i in range(3):
        (tmp_path / "a" / f"{i}.bin").write_bytes(bytes([0xFF, 0xD9, i, i]))
    reader = ndd.readers.File(file_root=str(tmp_path), file_filters=["*.bin"])
    (batch, labels), = list(reader.next_epoch(batch_size=3))
    hints = batch._storage_or_raise().hints
    assert _header_hints.HINT not in hints and _header_hints.HINT_HWC not in hints
    assert labels._storage_or_raise().hints is None



@pytest.mark.parametrize("output_type", [ndd.types.RGB, ndd.types.BGR, ndd.types.GRAY,
                                         ndd.types.YCbCr, ndd.types.ANY_DATA])  # fmt: skip
@pytest.mark.parametrize("adjust_orientation", [True, False])
def test_a_batch_of_plain_jpegs_takes_its_shapes_from_the_hints(tmp_path, monkeypatch,
                                                                 output_type, adjust_orientation):
    """Every sample hinted: the shapes come from one `[N, 3]` array (no Python per sample),
    equal to each header's `ImageInfo.shape`; the pixels are Pillow's."""
    files = encoded_files()
    (tmp_path / "c").mkdir()
    names = ["jpeg420", "jpeg444", "jpeg_gray"]
    for i, name in enumerate(names):
        (tmp_path / "c" / f"{i}.img").write_bytes(files[name].tobytes())
    batch = _reader_batch(tmp_path, len(names))
    hints = batch._storage_or_raise().hints
    expected_shapes = [info.shape(int(output_type), adjust_orientation)
                       for info in hints[_header_hints.HINT]]
    infos = hints[_header_hints.HINT]
    np.testing.assert_array_equal(hints[_header_hints.HINT_HWC],
                                  [(i.height, i.width, i.channels) for i in infos])
    monkeypatch.setattr(_pillow.ImageInfo, "shape", lambda *a: pytest.fail("per-sample shape"))
    out = ndd.decoders.image(batch, output_type=output_type,
                             adjust_orientation=adjust_orientation).evaluate()  # fmt: skip
    assert [tuple(s) for s in out.shape] == expected_shapes
    for got, name in zip(out, names, strict=True):
        np.testing.assert_array_equal(np.asarray(got), ref_decode(files[name], output_type))


def test_header_cache_answers_again_only_for_the_same_header_bytes(monkeypatch):
    """Epoch after epoch the reader's files are recognised by a hash of the header bytes their
    info was read from: no walk when unchanged, a new walk (and answer) when rewritten."""
    files = encoded_files()
    data = [files["jpeg420"].copy(), files["jpeg444"].copy(), files["png"].copy()]
    expected = [_pillow.read_info(data[0]), _pillow.read_info(data[1]), None]
    walks: list[int] = []
    real = _pillow.walk_plain_jpeg
    monkeypatch.setattr(_pillow, "walk_plain_jpeg", lambda v: walks.append(v.size) or real(v))
    cache = _header_hints.HeaderCache(10)
    keys = np.array([7, 2, 5])
    first = cache.infos(data, keys)
    assert first == expected
    assert len(walks) == 2  # the PNG is not a JPEG: never walked
    walks.clear()
    assert cache.infos(data, keys) == first and walks == []
    assert cache.infos([data[1], data[0]], np.array([2, 7])) == [first[1], first[0]]
    # rewrite file 7 in place: same size, another height in its frame header
    sof = int(np.flatnonzero((data[0][:-1] == 0xFF) & (data[0][1:] == 0xC0))[0])
    data[0][sof + 5:sof + 7] = [0, 9]
    again = cache.infos(data, keys)
    assert len(walks) == 1 and again[0].height == 9 and again[1] is first[1]
    assert cache.infos([data[1]], np.array([7]))[0] == first[1]  # another file under key 7


def test_reader_walks_each_header_in_the_first_epoch_only(image_tree, monkeypatch):
    walks: list[int] = []
    real = _pillow.walk_plain_jpeg
    monkeypatch.setattr(_pillow, "walk_plain_jpeg", lambda v: walks.append(v.size) or real(v))
    reader = ndd.readers.File(file_root=str(image_tree), file_filters=["*.img"])
    hints = []
    for _ in range(3):
        (batch, _), = list(reader.next_epoch(batch_size=6))
        hints.append(batch._storage_or_raise().hints[_header_hints.HINT])
    assert hints[0] == hints[1] == hints[2] and sum(h is not None for h in hints[0]) == 3
    assert len(walks) == 3  # the 3 plain JPEGs, once each (PNG, BMP: not JPEGs, not walked)
