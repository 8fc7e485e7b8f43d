"""Window decoding through nvImageCodec's CPU backend (decoders/_roi_decode.py): every window is
the full decode's bytes, the crop decoders use it where it pays, and it turns itself off."""

from __future__ import annotations

import io
import math
import os
from pathlib import Path

import numpy as np
import pytest
from _check import assert_close
from _decoder_data import _pixels, encode, ref_crop, with_orientation
from PIL import Image

import ndd_triton as ndd
from ndd_triton.decoders import _pillow, _roi_decode

# nvImageCodec is optional (the `test` extra installs it): skipped only outside CI, where a
# missing package must fail instead of hiding the region decode's tests
if not os.environ.get("CI"):
    pytest.importorskip("nvidia.nvimgcodec", reason="nvidia-nvimgcodec-cu12 not installed")

PHOTOS = Path(ndd.__file__).parent / "data" / "images"


def _full(data: np.ndarray) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(data.tobytes())).convert("RGB"))


def _jpegs() -> dict[str, np.ndarray]:
    """Photos and generated JPEGs of every chroma layout, odd sizes, restart markers and a
    progressive one."""
    photo = _full(np.fromfile(PHOTOS / "chelsea_451x300.jpg", np.uint8))
    files = {p.name: np.fromfile(p, np.uint8) for p in sorted(PHOTOS.glob("*.jpg"))}
    made = {f"odd-{sub}": encode(photo[:277, :331], "JPEG", quality=90, subsampling=sub)
            for sub in (0, 1, 2)}  # fmt: skip
    made["restart"] = encode(photo[:, :301], "JPEG", restart_marker_rows=1)
    made["progressive"] = encode(photo[:257, :], "JPEG", progressive=True)
    return {**files, **made}


def test_windows_are_the_full_decodes_bytes():
    """Random windows (and ones on iMCU boundaries, at the edges, one pixel wide) of every
    test JPEG: the region decode equals Pillow's full decode, cut."""
    rng = np.random.default_rng(5)
    assert _roi_decode._load() is not None
    for name, data in _jpegs().items():
        full = _full(data)
        if _pillow.read_info(data).mode != "RGB":
            continue
        height, width = full.shape[:2]
        windows = [(16, 32, height - 16, width - 48), (0, 0, 1, width), (height - 1, 0, 1, 1),
                   (0, width - 17, height, 17), (15, 17, 33, 31)]  # fmt: skip
        for _ in range(12):
            h, w = int(rng.integers(1, height + 1)), int(rng.integers(1, width + 1))
            windows.append((int(rng.integers(0, height - h + 1)),
                            int(rng.integers(0, width - w + 1)), h, w))  # fmt: skip
        for y0, x0, h, w in windows:
            got = _roi_decode.decode_window(data, height, width, y0, x0, h, w)
            assert got is not None, name
            np.testing.assert_array_equal(got, full[y0:y0 + h, x0:x0 + w],
                                          err_msg=f"{name} {(y0, x0, h, w)}")  # fmt: skip


def _slices(batch, output_type):
    return ndd.decoders.image_slice(batch, rel_start=[0.1, 0.2], rel_shape=[0.6, 0.5],
                                    output_type=output_type)  # fmt: skip


@pytest.mark.parametrize("output_type", [ndd.types.RGB, ndd.types.BGR, ndd.types.YCbCr])
def test_crop_decoders_use_it_and_match_decode_and_slice(monkeypatch, output_type):
    """image_slice / image_crop / image_random_crop: the same bytes as decoders.image + a
    window cut out of it, with the region decode used for the large photos (counted)."""
    jpegs = list(_jpegs().values())
    batch = ndd.as_batch(jpegs)
    full = [np.asarray(s) for s in ndd.decoders.image(batch, output_type=output_type).cpu()]
    used = []
    real = _roi_decode.decode_window

    def counting(*args):
        got = real(*args)
        used.append(got is not None)
        return got

    monkeypatch.setattr(_roi_decode, "decode_window", counting)
    for got, ref in zip(_slices(batch, output_type).cpu(), full, strict=True):
        h, w = ref.shape[:2]
        y0, x0 = math.floor(0.2 * h + 0.5), math.floor(0.1 * w + 0.5)
        y1, x1 = math.floor(0.7 * h + 0.5), math.floor(0.7 * w + 0.5)  # rel_* are (x, y)
        np.testing.assert_array_equal(np.asarray(got), ref[y0:y1, x0:x1])
    assert sum(used) >= 5
    crops = ndd.decoders.image_crop(batch, crop=(60, 90), crop_pos_y=0.3, crop_pos_x=0.8,
                                    output_type=output_type)  # fmt: skip
    for got, data in zip(crops.cpu(), jpegs, strict=True):
        want = ref_crop(data, (60, 90), crop_pos_x=0.8, crop_pos_y=0.3, output_type=output_type)
        assert_close(np.asarray(got), want, where="image_crop")
    # random windows: the same draws with and without the region decode
    rng = ndd.random.RNG(seed=4)
    with_roi = [np.asarray(s) for s in ndd.decoders.image_random_crop(
        batch, rng=rng, output_type=output_type).cpu()]  # fmt: skip
    monkeypatch.setattr(_roi_decode, "_codec", [None])
    rng = ndd.random.RNG(seed=4)
    without = ndd.decoders.image_random_crop(batch, rng=rng, output_type=output_type)
    for a, b in zip(with_roi, without.cpu(), strict=True):
        np.testing.assert_array_equal(a, np.asarray(b))


def test_a_failed_self_check_or_the_switch_turns_it_off(monkeypatch):
    """Windows that differ from the full decode in the self-check: the path stays off for
    the process (None), and the crop decoders still give the full decode's window;
    NDD_TRITON_ROI_DECODE=0 keeps nvImageCodec unloaded."""
    real = _roi_decode._region

    def off_by_one(*args):
        got = real(*args)
        return None if got is None else got ^ 1

    monkeypatch.setattr(_roi_decode, "_codec", [])
    monkeypatch.setattr(_roi_decode, "_region", off_by_one)
    assert _roi_decode._load() is None
    data = np.fromfile(PHOTOS / "coffee_600x400.jpg", np.uint8)
    assert _roi_decode.decode_window(data, 400, 600, 10, 20, 100, 200) is None
    (got,) = ndd.decoders.image_slice(ndd.as_batch([data]), rel_start=[0.1, 0.2],
                                      rel_shape=[0.5, 0.5]).cpu()  # fmt: skip
    np.testing.assert_array_equal(np.asarray(got), _full(data)[80:280, 60:360])
    monkeypatch.setattr(_roi_decode, "_codec", [])
    monkeypatch.setenv("NDD_TRITON_ROI_DECODE", "0")
    assert _roi_decode._load() is None


def test_worth_it_rule():
    """Small images and windows of most of the image decode whole."""
    assert _roi_decode.worth_it(480, 640, 224, 224)
    assert not _roi_decode.worth_it(480, 640, 470, 600)  # 92% of the image
    assert not _roi_decode.worth_it(100, 100, 10, 10)  # 10k pixels


@pytest.mark.parametrize("orientation", [3, 6, 2])
@pytest.mark.parametrize("adjust", [False, True])
def test_exif_orientation_is_the_full_decodes(orientation, adjust):
    """A JPEG with an EXIF orientation: the window is taken from the stored image when
    adjust_orientation=False (the region decode must not rotate it: nvImageCodec does by
    default) and from the oriented one otherwise, as without the region decode."""
    data = with_orientation(_pixels(300, 400, 3, seed=1), orientation, "JPEG")
    batch = ndd.as_batch([data])
    loaded = _roi_decode._load()
    outs = []
    for codec in (loaded, None):
        _roi_decode._codec[:] = [codec]
        try:
            (got,) = ndd.decoders.image_slice(batch, rel_start=[0.1, 0.2], rel_shape=[0.5, 0.4],
                                              adjust_orientation=adjust).cpu()  # fmt: skip
        finally:
            _roi_decode._codec[:] = [loaded]
        outs.append(np.asarray(got))
    assert outs[0].shape == outs[1].shape
    np.testing.assert_array_equal(outs[0], outs[1])
