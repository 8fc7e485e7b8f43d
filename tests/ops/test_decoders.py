"""decoders.image, image_crop, image_slice, image_random_crop.

Golden DALI cases run in tests/test_golden.py; shared data and references: _decoder_data.py.
"""

from __future__ import annotations

import io
import math

import numpy as np
import pytest
from _check import assert_close, check_op, raises_at_call, samples_of
from _decoder_data import (
    ANY,
    BGR,
    GRAY,
    RGB,
    YCBCR,
    _pixels,
    encode,
    ref_crop,
    ref_decode,
    with_orientation,
)
from PIL import Image

import ndd_triton as ndd


# ---- decoders.image ------------------------------------------------------------------------
def test_image_formats_rgb(files):
    names = ["jpeg420", "png", "png_gray", "png_rgba", "png_1x1", "bmp", "tiff", "webp", "ppm"]
    check_op(ndd.decoders.image, [files[n] for n in names], ref_decode)


@pytest.mark.parametrize(("output_type", "atol"), [(BGR, 0), (GRAY, 1), (YCBCR, 1), (ANY, 0)])
def test_image_output_types(files, output_type, atol):
    names = ["png", "png_gray", "png_rgba", "jpeg444", "jpeg_gray"]
    check_op(ndd.decoders.image, [files[n] for n in names], ref_decode,
             args={"output_type": output_type}, atol=atol, all_modes=False)


def test_image_jpeg_gray_is_libjpeg_luma(files):
    out = ndd.decoders.image(files["jpeg420"], output_type=GRAY)
    assert_close(np.asarray(out), ref_decode(files["jpeg420"], GRAY), where="jpeg gray")


@pytest.mark.parametrize("dtype", [ndd.float32, ndd.uint16])
def test_image_dtypes(files, dtype):
    check_op(ndd.decoders.image, [files["png"], files["jpeg444"]], ref_decode,
             args={"dtype": dtype}, atol=1e-7 if dtype == ndd.float32 else 0, all_modes=False)


def test_image_int16_range(files):
    out = np.asarray(ndd.decoders.image(files["png"], dtype=ndd.int16))
    ref = ref_decode(files["png"]).astype(np.float64)
    assert out.dtype == np.int16
    assert_close(out, np.floor(ref * 32767 / 255 + 0.5).astype(np.int16), where="int16")


@pytest.mark.parametrize(("orientation", "fmt"), [*((o, "PNG") for o in range(1, 9)),
                                                  (6, "JPEG"), (3, "JPEG")])  # fmt: skip
def test_image_exif_orientation(orientation, fmt):
    data = with_orientation(_pixels(3, 5, 3, orientation), orientation, fmt)
    for backend in ("cpu", "gpu"):
        out = np.asarray(ndd.decoders.image(data, device=backend).cpu())
        assert_close(out, ref_decode(data), where=f"orientation {orientation} {backend}")
    raw = np.asarray(ndd.decoders.image(data, adjust_orientation=False))
    assert_close(raw, ref_decode(data, adjust_orientation=False), where="no orientation")
    shape = np.asarray(ndd.peek_image_shape(data))
    assert shape.tolist() == list(ref_decode(data).shape)


def test_image_gpu_keeps_encoded_bytes_on_host(files):
    batch = ndd.as_batch([files["png"], files["jpeg420"]]).gpu()
    out = ndd.decoders.image(batch)
    assert out.device.device_type == "gpu"
    for got, data in zip(samples_of(out), [files["png"], files["jpeg420"]], strict=True):
        assert_close(got, ref_decode(data), where="gpu input")


# ---- crop / slice / random crop --------------------------------------------------------------
def test_image_gpu_does_not_pack_the_encoded_batch(files):
    """The GPU decoders read the encoded files one by one (from prepare's host views): a
    batch of scattered files is not copied into one buffer for them."""
    batch = ndd.as_batch([files["png"], files["jpeg420"], files["jpeg444"]])
    for op in (ndd.decoders.image, ndd.decoders.image_random_crop):
        out = op(batch, device="gpu").evaluate()
        assert out.device.device_type == "gpu"
    assert batch._storage_or_raise().buffer is None


def test_image_crop_spec_example(files):
    out = np.asarray(ndd.decoders.image_crop(files["big"], crop=(10, 20)))
    assert_close(out, ref_decode(files["big"])[15:25, 20:40], where="40x60 crop (10, 20)")


def test_image_crop_battery(files):
    samples = [files["big"], files["jpeg420"], files["png"]]
    check_op(ndd.decoders.image_crop, samples, ref_crop,
             args={"crop": (5, 3.9)}, per_sample={"crop_pos_x": [0.0, 0.35, 1.0],
                                                 "crop_pos_y": [1.0, 0.5, 0.25]})  # fmt: skip


def test_image_crop_h_w_and_truncate(files):
    out = np.asarray(ndd.decoders.image_crop(files["big"], crop_h=7, crop_w=9, crop_pos_x=0.3,
                                             crop_pos_y=0.3, rounding="truncate"))  # fmt: skip
    y0, x0 = math.trunc(0.3 * 33), math.trunc(0.3 * 51)
    assert_close(out, ref_decode(files["big"])[y0:y0 + 7, x0:x0 + 9], where="truncate")


def test_image_crop_errors(files):
    big = files["big"]
    with raises_at_call(RuntimeError, match=r"decoders.image_crop: sample 0: The cropping window "
                       r"\[-5..45, -10..70\] is not valid for image dimensions \[40 x 60\]"):
        ndd.decoders.image_crop(big, crop=(50, 80))
    with raises_at_call(RuntimeError, match="'crop_h' and 'crop_w' must be given together"):
        ndd.decoders.image_crop(big, crop_w=5)
    with raises_at_call(RuntimeError, match=r"argument 'crop_pos_x' sample 1: must be in \[0, 1\]"):
        ndd.decoders.image_crop(ndd.as_batch([big, big]), crop=(2, 2),
                                crop_pos_x=ndd.as_batch([np.float32(0.5), np.float32(1.5)]))
    with raises_at_call(ValueError, match=r"argument 'crop' expects \(H, W\)"):
        ndd.decoders.image_crop(big, crop=(1, 2, 3))
    with raises_at_call(ValueError, match="argument 'rounding' must be one of"):
        ndd.decoders.image_crop(big, crop=(2, 2), rounding="floor")


def _ref_slice(data, y0, x0, h, w):
    return ref_decode(data)[y0:y0 + h, x0:x0 + w]


def test_image_slice_spec_examples(files):
    big = files["big"]
    out = np.asarray(ndd.decoders.image_slice(big, start=[5, 2], shape=[10, 4]))
    assert_close(out, _ref_slice(big, 2, 5, 4, 10), where="x, y order")
    out = np.asarray(ndd.decoders.image_slice(big, start=[5, 2], shape=[10, 4], axis_names="HW"))
    assert_close(out, _ref_slice(big, 5, 2, 10, 4), where="HW order")
    out = np.asarray(ndd.decoders.image_slice(big, start=[3, 4], end=[13, 9], axes=[0, 1]))
    assert_close(out, _ref_slice(big, 3, 4, 10, 5), where="start/end")
    # extent 40 rows: rel_start .25 / rel_shape .5 -> [10, 30); x: .15/.33 of 60 -> [9, 29)
    out = np.asarray(ndd.decoders.image_slice(big, rel_start=[0.15, 0.25],
                                              rel_shape=[0.33, 0.5]))  # fmt: skip
    assert_close(out, _ref_slice(big, 10, 9, 20, 20), where="relative")
    out = np.asarray(ndd.decoders.image_slice(big, rel_start=[0.35], rel_end=[0.75], axes=[0]))
    assert_close(out, _ref_slice(big, 14, 0, 16, 60), where="rel_end, one axis")


def test_image_slice_positional(files):
    big = files["big"]
    anchor = np.array([0.25, 0.5], np.float32)  # x, y normalized
    shape = np.array([0.5, 0.25], np.float32)
    out = np.asarray(ndd.decoders.image_slice(big, anchor, shape))
    assert_close(out, _ref_slice(big, 20, 15, 10, 30), where="normalized")
    out = np.asarray(ndd.decoders.image_slice(big, np.array([4, 3]), np.array([6, 2])))
    assert_close(out, _ref_slice(big, 3, 4, 2, 6), where="absolute int")
    out = np.asarray(ndd.decoders.image_slice(big, np.array([4.0, 3.0], np.float32),
                                              np.array([6.0, 2.0], np.float32),
                                              normalized_anchor=False, normalized_shape=False))
    assert_close(out, _ref_slice(big, 3, 4, 2, 6), where="absolute float")


def test_image_slice_battery_per_sample(files):
    samples = [files["big"], files["png"], files["jpeg420"]]
    starts = [np.array([1, 2]), np.array([0, 0]), np.array([3, 1])]
    check_op(ndd.decoders.image_slice, samples,
             lambda d, start, shape: _ref_slice(d, int(start[1]), int(start[0]), shape[1],
                                                shape[0]),
             args={"shape": [5, 4]}, per_sample={"start": starts})  # fmt: skip


def test_image_slice_errors(files):
    big = files["big"]
    with raises_at_call(RuntimeError, match="'axes' and 'axis_names' are mutually exclusive"):
        ndd.decoders.image_slice(big, start=[1, 1], axes=[0, 1], axis_names="HW")
    with raises_at_call(RuntimeError, match="no slice coordinates"):
        ndd.decoders.image_slice(big)
    with raises_at_call(RuntimeError, match="anchor' and 'shape' inputs must be given together"):
        ndd.decoders.image_slice(big, np.array([1, 1]))
    with raises_at_call(RuntimeError, match="positional anchor/shape inputs or the keyword"):
        ndd.decoders.image_slice(big, np.array([1, 1]), np.array([2, 2]), start=[1, 1])
    with raises_at_call(RuntimeError, match=r"sample 0: The slice window \[30..50, 0..10\] is "
                       r"not valid for image dimensions \[40 x 60\]"):
        ndd.decoders.image_slice(big, start=[0, 30], shape=[10, 20])
    with raises_at_call(ValueError, match="argument 'shape' sample 0: expected 2 values; got 3"):
        ndd.decoders.image_slice(big, start=[0, 0], shape=[1, 2, 3])
    with raises_at_call(ValueError, match="'axes' may name only the H"):
        ndd.decoders.image_slice(big, start=[0], axes=[2])


def _find_window(full, window):
    h, w = window.shape[:2]
    for y in range(full.shape[0] - h + 1):
        for x in range(full.shape[1] - w + 1):
            if np.array_equal(full[y:y + h, x:x + w], window):
                return y, x
    return None


def test_image_random_crop_windows_and_determinism(files):
    batch = ndd.as_batch([files["big"], files["png"], files["big"]])
    for backend in ("cpu", "gpu"):
        a = ndd.decoders.image_random_crop(batch, rng=ndd.random.RNG(seed=7), device=backend)
        b = ndd.decoders.image_random_crop(batch, rng=ndd.random.RNG(seed=7), device=backend)
        got_a, got_b = samples_of(a), samples_of(b)
        assert a.shape == [g.shape for g in got_a]
        for ga, gb in zip(got_a, got_b, strict=True):
            assert ga.tobytes() == gb.tobytes()
        for got, data in zip(got_a, [files["big"], files["png"], files["big"]], strict=True):
            full = ref_decode(data)
            area = got.shape[0] * got.shape[1] / (full.shape[0] * full.shape[1])
            assert 0.02 <= area <= 1.0
            assert _find_window(full, got) is not None, "output is not a window of the image"


def test_image_random_crop_failed_call_draws_nothing(files):
    rng = ndd.random.RNG(seed=5)
    state = rng.get_state()
    with raises_at_call(RuntimeError, match="sample 0: the encoded data is empty"):
        ndd.decoders.image_random_crop(np.zeros(0, np.uint8), rng=rng)
    assert rng.get_state() == state


def test_image_random_crop_fallback_and_checkpoint(files):
    big = files["big"]  # 40 x 60: aspect 100 cannot fit, area 1 -> whole image
    out = ndd.decoders.image_random_crop(big, random_area=[1, 1], random_aspect_ratio=[100, 200])
    assert_close(np.asarray(out), ref_decode(big), where="fallback")
    rng = ndd.random.RNG(seed=3)
    state = rng.get_state()
    first = np.asarray(ndd.decoders.image_random_crop(big, rng=rng))
    rng.set_state(state)
    again = np.asarray(ndd.decoders.image_random_crop(big, rng=rng))
    assert first.tobytes() == again.tobytes()
    with raises_at_call(ValueError, match="argument 'random_area' expects"):
        ndd.decoders.image_random_crop(big, random_area=[0.5, 0.2])
    with raises_at_call(ValueError, match="argument 'random_aspect_ratio' expects"):
        ndd.decoders.image_random_crop(big, random_aspect_ratio=[0, 1])
    with raises_at_call(ValueError, match="argument 'num_attempts' must be positive"):
        ndd.decoders.image_random_crop(big, num_attempts=0)


# ---- windows that end early decode fewer rows (decoders/_jpeg_rows.py) ----------------------
def _row_trick_jpegs():
    """Baseline JPEGs of every chroma layout and odd sizes (the trick applies), and files it
    must leave alone (progressive, restart intervals)."""
    from _decoder_data import encode

    photo = np.asarray(Image.open(io.BytesIO(_photo_bytes())).convert("RGB"))
    odd = photo[:77, :61]
    tall = photo[:, :45]
    applies = {f"{name}-{sub}": encode(arr, "JPEG", quality=q, subsampling=sub)
               for name, arr, q in (("odd", odd, 90), ("tall", tall, 75), ("photo", photo, 95))
               for sub in (0, 1, 2)}  # fmt: skip
    skipped = {"progressive": encode(tall, "JPEG", progressive=True),
               "restart": encode(tall, "JPEG", restart_marker_rows=1)}  # fmt: skip
    return applies, skipped


def _photo_bytes():
    from pathlib import Path

    folder = Path(ndd.__file__).parent / "data" / "images"
    return (folder / "chelsea_451x300.jpg").read_bytes()


def test_top_rows_decode_is_bit_exact_with_pillow():
    """Rows [0, last_row) of the shortened decode equal Pillow's full decode, for every last
    row of small images and random ones of larger ones, 4:4:4, 4:2:2 and 4:2:0."""
    from ndd_triton.decoders import _jpeg_rows

    applies, skipped = _row_trick_jpegs()
    rs = np.random.default_rng(3)
    for name, data in applies.items():
        full = np.asarray(Image.open(io.BytesIO(data.tobytes())).convert("RGB"))
        height = full.shape[0]
        last_rows = range(1, height + 1) if height < 100 else rs.integers(1, height + 1, 60)
        tried = 0
        for last in last_rows:
            rows = _jpeg_rows.decode_top_rows(data, int(last))
            if rows is None:
                continue
            tried += 1
            assert last <= rows.shape[0] < height
            np.testing.assert_array_equal(rows[:last], full[:last], err_msg=f"{name} {last}")
        assert tried > 10, name
    for name, data in skipped.items():
        assert _jpeg_rows.decode_top_rows(data, 5) is None, name


@pytest.mark.parametrize("margin", [0.1, -0.3])  # -0.3: cuts too early -> full decodes
def test_crop_decoders_with_top_rows_match_full_decode(monkeypatch, margin):
    from ndd_triton.decoders import _jpeg_rows, _pillow

    monkeypatch.setattr(_jpeg_rows, "_CUT_MARGIN", margin)
    shortened = []

    def counting(data, last_row):
        rows = _jpeg_rows.decode_top_rows(data, last_row)
        shortened.append(rows is not None)
        return rows

    monkeypatch.setattr(_pillow, "decode_top_rows", counting)
    applies, skipped = _row_trick_jpegs()
    jpegs = [*applies.values(), *skipped.values()]
    batch = ndd.as_batch(jpegs)
    for output_type in (RGB, BGR, YCBCR):
        crops = ndd.decoders.image_crop(batch, crop=(9, 13), crop_pos_y=0.2, crop_pos_x=0.7,
                                        output_type=output_type)  # fmt: skip
        for got, data in zip(samples_of(crops), jpegs, strict=True):
            want = ref_crop(data, (9, 13), crop_pos_x=0.7, crop_pos_y=0.2,
                            output_type=output_type)  # fmt: skip
            assert_close(got, want, where=f"image_crop {output_type}")
    rng = ndd.random.RNG(seed=9)
    windows = ndd.decoders.image_random_crop(batch, rng=rng)
    for got, data in zip(samples_of(windows), jpegs, strict=True):
        full = ref_decode(data)
        assert _find_window(full, got) is not None
    sliced = ndd.decoders.image_slice(batch, rel_start=[0.1, 0.05], rel_shape=[0.5, 0.3])
    for got, data in zip(samples_of(sliced), jpegs, strict=True):
        full = ref_decode(data)
        h, w = full.shape[:2]
        y0, x0 = math.floor(0.05 * h + 0.5), math.floor(0.1 * w + 0.5)
        y1, x1 = math.floor((0.05 + 0.3) * h + 0.5), math.floor((0.1 + 0.5) * w + 0.5)
        assert_close(got, full[y0:y1, x0:x1], where="image_slice")
    if margin > 0:
        assert any(shortened)
    else:
        assert not all(shortened)


@pytest.mark.parametrize(("fmt", "rounded"), [("BMP", True), ("TIFF", True), ("PPM", True),
                                              ("PNG", False)])  # fmt: skip
def test_image_gray_from_rgb_rounds_as_dali(fmt, rounded):
    """DALI 2.4 decodes BMP/PPM/TIFF(/WebP) through OpenCV, whose RGB -> grey rounds the
    14-bit fixed-point luma (recorded: every pixel of two photos equal); PNG truncates
    (libpng; the closest formula, 6-21 of ~10k pixels off by one). Truncating everywhere
    was off by one on ~46% of the BMP/TIFF/PPM pixels."""
    rgb = np.random.default_rng(3).integers(0, 256, (23, 31, 3), dtype=np.uint8)
    data = encode(rgb, fmt)
    acc = rgb.astype(np.int32) @ np.array([4899, 9617, 1868], np.int32)
    want = ((acc + (1 << 13 if rounded else 0)) >> 14).astype(np.uint8)[:, :, None]
    assert_close(np.asarray(ndd.decoders.image(data, output_type=GRAY)), want, where=fmt)
