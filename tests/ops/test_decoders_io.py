"""Decoder input handling: corrupt data, peek_image_shape, io.file.read, imread, 16-bit/palette
PNGs and the simplejpeg fast path (the nvImageCodec path: test_decoders_device_codec.py)."""

from __future__ import annotations

import io
import struct
import zlib

import numpy as np
import pytest
from _check import assert_close, raises_at_call, samples_of
from _decoder_data import (
    ANY,
    GRAY,
    RGB,
    _pixels,
    encode,
    photo_jpegs,
    ref_decode,
    with_orientation,
)
from PIL import Image

import ndd_triton as ndd


# ---- corrupt input ---------------------------------------------------------------------------
def _png_declaring(width, height):
    """A PNG whose header declares width x height RGB pixels but holds almost no data."""
    def chunk(kind, data):
        return (struct.pack(">I", len(data)) + kind + data +
                struct.pack(">I", zlib.crc32(kind + data)))  # fmt: skip

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    raw = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) +
           chunk(b"IDAT", zlib.compress(b"\0" * 64)) + chunk(b"IEND", b""))  # fmt: skip
    return np.frombuffer(raw, np.uint8).copy()


@pytest.mark.parametrize(("make", "message"), [
    (lambda f: np.zeros(0, np.uint8), r"sample 1: the encoded data is empty \(0 bytes\)"),
    (lambda f: np.random.default_rng(0).integers(0, 256, 64).astype(np.uint8),
     r"sample 1: unrecognised or corrupt image data \(64 bytes starting with"),
    (lambda f: f["png"][:20], "sample 1: corrupt image header: Truncated File Read"),
    (lambda f: f["jpeg420"][:2], "sample 1: unrecognised or corrupt image data"),
    (lambda f: f["jpeg420"][: len(f["jpeg420"]) // 3], "sample 1: .*corrupt image"),
    (lambda f: _png_declaring(100000, 100000), "sample 1: the image is too large to decode"),
])  # fmt: skip
@pytest.mark.parametrize("op", ["image", "image_crop", "image_random_crop", "peek_image_shape"])
def test_corrupt_headers_fail_at_the_call(files, make, message, op):
    fn = ndd.peek_image_shape if op == "peek_image_shape" else getattr(ndd.decoders, op)
    batch = ndd.as_batch([files["png"], make(files)])
    with raises_at_call(RuntimeError, match=f"{op}: {message}"):
        fn(batch)
    assert fn(files["png"]).shape  # the next call works


@pytest.mark.parametrize("backend", ["cpu", "gpu"])
@pytest.mark.parametrize("cut", ["png", "bomb"])
def test_truncated_data_fails_at_run_naming_the_sample(files, backend, cut):
    bad = files["png"][: len(files["png"]) - 40] if cut == "png" else _png_declaring(300, 200)
    with ndd.EvalMode.eager:
        out = ndd.decoders.image(ndd.as_batch([files["png"], files["png"], bad]), device=backend)
        with pytest.raises(RuntimeError, match=r"decoders.image: sample 2: cannot decode the PNG "
                           r"image: OSError: image file is truncated") as info:
            out.evaluate()
    assert isinstance(info.value.__cause__, RuntimeError)
    again = ndd.decoders.image(files["png"], device=backend)
    assert_close(np.asarray(again.cpu()), ref_decode(files["png"]), where="after a failure")


def test_input_type_errors(files):
    with raises_at_call(RuntimeError, match=r"decoders.image: input 0 must hold encoded bytes as "
                       "uint8; got i32"):
        ndd.decoders.image(files["png"].astype(np.int32))
    with raises_at_call(RuntimeError, match="input 0 must be 1-D encoded bytes per sample; got 2-D"):
        ndd.decoders.image(files["png"][:24].reshape(4, 6))
    with raises_at_call(ValueError, match=r"decoders.image: argument 'output_type' expects"):
        ndd.decoders.image(files["png"], output_type="RGB")
    with raises_at_call(ValueError, match="argument 'output_type' must be one of"):
        ndd.decoders.image(files["png"], output_type=7)
    with raises_at_call(ValueError, match="argument 'dtype' must be one of u8, u16, i16, f32; got "
                       "i32"):
        ndd.decoders.image(files["png"], dtype=ndd.int32)
    with pytest.warns(DeprecationWarning, match="argument 'split_stages' is deprecated"):
        ndd.decoders.image(files["png"], split_stages=True)
    with raises_at_call(ValueError, match="peek_image_shape: device='gpu' is not supported"):
        ndd.peek_image_shape(files["png"], device="gpu")


# ---- peek_image_shape ------------------------------------------------------------------------
def test_peek_image_shape(files):
    names = ["png", "png_gray", "png_rgba", "jpeg420"]
    out = ndd.peek_image_shape(ndd.as_batch([files[n] for n in names]))
    assert out.dtype == ndd.int64
    for got, n in zip(samples_of(out), names, strict=True):
        assert got.tolist() == [*ref_decode(files[n]).shape[:2], 3]
    gray = ndd.peek_image_shape(files["png_rgba"], image_type=GRAY, dtype=ndd.float32)
    assert np.asarray(gray).dtype == np.float32
    assert np.asarray(gray).tolist() == [6, 4, 1]
    any_data = ndd.peek_image_shape(files["png_rgba"], image_type=ANY, dtype=ndd.int32)
    assert np.asarray(any_data).tolist() == [6, 4, 4]


# ---- io.file.read and imread -----------------------------------------------------------------
def _path_tensor(path):
    return np.frombuffer(str(path).encode(), np.uint8)


def test_file_read_and_imread(files, tmp_path):
    paths = []
    for name in ("png", "jpeg420", "png_gray"):
        paths.append(tmp_path / f"{name}.img")
        paths[-1].write_bytes(files[name].tobytes())
    data = ndd.io.file.read(ndd.as_batch([_path_tensor(p) for p in paths]))
    for got, name in zip(samples_of(data), ("png", "jpeg420", "png_gray"), strict=True):
        assert got.tobytes() == files[name].tobytes()
    single = ndd.imread(str(paths[0]))
    assert isinstance(single, ndd.Tensor)
    assert_close(np.asarray(single), ref_decode(files["png"]), where="imread str")
    batch = ndd.imread(paths, output_type=GRAY)
    assert isinstance(batch, ndd.Batch)
    for got, name in zip(samples_of(batch), ("png", "jpeg420", "png_gray"), strict=True):
        assert_close(got, ref_decode(files[name], GRAY), atol=1, where=f"imread {name}")
    gpu = ndd.imread(paths[1], device="gpu", dtype=ndd.float32)
    assert gpu.device.device_type == "gpu"
    assert_close(np.asarray(gpu.cpu()), ref_decode(files["jpeg420"], dtype=ndd.float32),
                 atol=1e-7, where="imread gpu")  # fmt: skip
    encoded_paths = ndd.imread(ndd.as_batch([_path_tensor(p) for p in paths[:2]]))
    assert encoded_paths.shape == [ref_decode(files[n]).shape for n in ("png", "jpeg420")]


def test_file_read_errors(tmp_path):
    missing = tmp_path / "nope.jpg"
    with raises_at_call(RuntimeError, match=r"io.file.read: sample 0: cannot read file "
                       r"'.*nope.jpg': No such file or directory"):
        ndd.io.file.read(_path_tensor(missing)).evaluate()
    with raises_at_call(RuntimeError, match=r"nope.jpg': No such file"):
        ndd.imread(missing)
    with raises_at_call(ValueError, match=r"io.file.read: input 0 must be 1-D uint8 samples"):
        ndd.io.file.read(np.array([1, 2], np.int32))
    with raises_at_call(ValueError, match=r"io.file.read: sample 0: the path is not valid UTF-8"):
        ndd.io.file.read(np.array([0xFF, 0xFE], np.uint8))
    with raises_at_call(TypeError, match=r"imread: path 1 must be a str or os.PathLike path; "
                       r"got int"):
        ndd.imread([str(missing), 3])
    with raises_at_call(TypeError, match="imread\\(\\) got an unexpected keyword argument 'crop'"):
        ndd.imread(missing, crop=(2, 2))
    with raises_at_call(ValueError, match="imread: the list of paths is empty"):
        ndd.imread([])


def test_sixteen_bit_png_is_rescaled_to_8_bits():
    wide = (np.arange(4 * 6, dtype=np.uint16).reshape(4, 6) * 2791).astype(np.uint16)
    data = encode(wide, "PNG")
    expected = np.floor(wide / 257 + 0.5).astype(np.uint8)
    for output_type, channels in ((ANY, 1), (RGB, 3)):
        out = np.asarray(ndd.decoders.image(data, output_type=output_type))
        assert_close(out, np.repeat(expected[..., None], channels, axis=2), where="16-bit png")


def test_palette_png():
    rgb = _pixels(5, 6, 3, 12)
    plain = Image.fromarray(rgb).quantize(8)
    buf = io.BytesIO()
    plain.save(buf, "PNG", transparency=0)
    transparent = np.frombuffer(buf.getvalue(), np.uint8).copy()
    buf = io.BytesIO()
    plain.save(buf, "PNG")
    opaque = np.frombuffer(buf.getvalue(), np.uint8).copy()
    for data, channels in ((transparent, 4), (opaque, 3)):
        image = Image.open(io.BytesIO(data.tobytes()))
        mode = "RGBA" if channels == 4 else "RGB"
        any_data = np.asarray(ndd.decoders.image(data, output_type=ANY))
        assert_close(any_data, np.asarray(image.convert(mode)), where=f"palette {mode}")
        assert np.asarray(ndd.peek_image_shape(data, image_type=ANY)).tolist() == [5, 6, channels]
        rgb_out = np.asarray(ndd.decoders.image(data))
        assert_close(rgb_out, np.asarray(image.convert("RGB")), where="palette to RGB")


def test_imread_signature_lists_decoder_keywords():
    import inspect

    params = inspect.signature(ndd.imread).parameters
    assert list(params)[:2] == ["filepaths", "device"]
    assert params["device"].default == "cpu"
    assert {"output_type", "dtype", "adjust_orientation", "cache_size"} <= set(params)


# ---- reader samples: errors name the file ----------------------------------------------------
@pytest.fixture
def damaged_tree(tmp_path, files):
    """Files for readers.File: good ones, a truncated JPEG and PNG (fail while decoding), a
    non-image (fails at the header) and an empty file, in a known order."""
    jpeg = encode(_pixels(40, 56, 3, 20), "JPEG", quality=90)
    names = {"a_good.jpg": jpeg, "b_cut.jpg": jpeg[: len(jpeg) * 2 // 3],
             "c_good.png": files["big"], "d_cut.png": files["big"][:-60],
             "e_text.jpg": np.frombuffer(b"not an image at all" * 4, np.uint8),
             "f_good.jpg": files["jpeg444"]}  # fmt: skip
    for name, data in names.items():
        (tmp_path / name).write_bytes(data.tobytes())
    return tmp_path, names


@pytest.mark.parametrize("mode", ["eager", "sync_cpu"])
@pytest.mark.parametrize("backend", ["cpu", "gpu"])
@pytest.mark.parametrize("op", ["image", "image_crop"])
def test_reader_samples_that_fail_name_the_file(damaged_tree, mode, backend, op):
    """A damaged file read by readers.File fails naming the file (header errors at the call,
    pixel errors when the batch runs); the batches after it decode normally."""
    root, names = damaged_tree
    order = sorted(names)
    reader = ndd.readers.File(files=[str(root / n) for n in order], random_shuffle=False)
    fn = getattr(ndd.decoders, op)
    args = {"crop": (5, 7)} if op == "image_crop" else {}
    expected_failures = {
        "b_cut.jpg": r"sample 1 from '.*b_cut\.jpg': cannot decode the JPEG image: OSError: "
                     r"image file is truncated",
        "d_cut.png": r"sample 1 from '.*d_cut\.png': cannot decode the PNG image: OSError: "
                     r"image file is truncated",
        "e_text.jpg": r"sample 0 from '.*e_text\.jpg': unrecognised or corrupt image data",
    }  # fmt: skip
    seen = []
    with getattr(ndd.EvalMode, mode):
        for encoded, _ in reader.next_epoch(batch_size=2):
            pair = order[len(seen) * 2: len(seen) * 2 + 2]
            bad = [n for n in pair if n in expected_failures]
            if bad:
                with pytest.raises(RuntimeError, match=f"decoders.{op}: "
                                   f"{expected_failures[bad[0]]}"):  # fmt: skip
                    fn(encoded, device=backend, **args).evaluate()
            else:
                out = fn(encoded, device=backend, **args).evaluate()
                for got, name in zip(samples_of(out), pair, strict=True):
                    want = ref_decode(names[name])
                    if op == "image_crop":
                        h, w = want.shape[:2]
                        y0, x0 = round((h - 5) / 2), round((w - 7) / 2)
                        want = want[y0:y0 + 5, x0:x0 + 7]
                    assert_close(got, want, where=name)
            seen.append(pair)
    assert len(seen) == 3


def test_sample_names_only_for_reader_memory(damaged_tree):
    """Copies of reader samples and plain data are named by index only."""
    root, _ = damaged_tree
    reader = ndd.readers.File(files=[str(root / "e_text.jpg")], random_shuffle=False)
    (encoded, _), = reader.next_epoch(batch_size=1)
    with raises_at_call(RuntimeError, match=r"decoders.image: sample 0 from '.*e_text\.jpg': "):
        ndd.decoders.image(encoded)
    copied = ndd.as_batch([np.asarray(t).copy() for t in encoded])
    with raises_at_call(RuntimeError, match=r"decoders.image: sample 0: unrecognised"):
        ndd.decoders.image(copied)


# ---- plain JPEG header parser ----------------------------------------------------------------
def _cmyk_jpeg(arr):
    buf = io.BytesIO()
    Image.fromarray(arr, "RGBA").convert("CMYK").save(buf, "JPEG")
    return np.frombuffer(buf.getvalue(), np.uint8).copy()


def _header_variants():
    """JPEGs whose headers exercise the parser: photos, grey, CMYK, progressive, EXIF, ICC,
    comments, restart intervals, 4:4:4."""
    rgb = _pixels(20, 28, 3, 30)
    return {
        "photo": photo_jpegs()[0], "gray": encode(_pixels(9, 13, 1, 31), "JPEG"),
        "cmyk": _cmyk_jpeg(_pixels(8, 6, 4, 32)),
        "progressive": encode(rgb, "JPEG", progressive=True),
        "exif": with_orientation(rgb, 6, "JPEG"), "exif1": with_orientation(rgb, 1, "JPEG"),
        "icc": encode(rgb, "JPEG", icc_profile=b"\0" * 200),
        "comment": encode(rgb, "JPEG", comment=b"hello"),
        "restart": encode(rgb, "JPEG", restart_marker_rows=1),
        "s444": encode(rgb, "JPEG", subsampling=0),
    }  # fmt: skip


def _info_or_error(fn, data):
    import warnings

    from ndd_triton.decoders import _pillow

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # Pillow warns about damaged EXIF blocks
            return fn(data)
    except _pillow.ImageError as e:
        return f"error: {e}"


def test_plain_jpeg_header_parser_agrees_with_pillow():
    """Wherever the fast parser answers, Pillow gives the same ImageInfo; on damaged headers
    (every truncation, byte changes in the header) `read_info` behaves as Pillow alone."""
    from ndd_triton.decoders import _jpeg_header, _pillow

    rs = np.random.default_rng(5)
    answered = 0
    for name, data in _header_variants().items():
        fast = _jpeg_header.read_jpeg_header(data, _pillow.MAX_PIXELS)
        assert (fast is not None) == (name not in ("exif", "exif1")), name
        header_end = data.size if fast is None else int(np.flatnonzero(
            (data[:-1] == 0xFF) & (data[1:] == 0xDA))[0]) + 20  # fmt: skip
        damaged = [data[:cut] for cut in range(0, min(header_end, data.size))]
        for _ in range(150):
            copy = data.copy()
            at = rs.integers(2, min(header_end, data.size), size=rs.integers(1, 3))
            copy[at] = rs.integers(0, 256, size=at.size)
            damaged.append(copy)
        for variant in [data, *damaged]:
            mine = _info_or_error(_pillow.read_info, variant)
            pillow = _info_or_error(_pillow._read_info_pillow, variant)
            if variant.size and not (isinstance(pillow, str) and isinstance(mine, str)):
                assert mine == pillow, (name, variant.size)  # errors come from Pillow itself
            answered += _jpeg_header.read_jpeg_header(variant, _pillow.MAX_PIXELS) is not None
    assert answered > 100


def test_plain_jpeg_header_parser_defers_to_pillow():
    from ndd_triton.decoders import _jpeg_header, _pillow

    data = _header_variants()["photo"]
    bomb = data.copy()
    sof = int(np.flatnonzero((data[:-1] == 0xFF) & (data[1:] == 0xC0))[0])
    bomb[sof + 5:sof + 9] = [0xFF, 0xFF, 0xFF, 0xFF]
    assert _jpeg_header.read_jpeg_header(bomb, _pillow.MAX_PIXELS) is None
    with pytest.raises(_pillow.ImageError, match="too large"):
        _pillow.read_info(bomb)
    assert _jpeg_header.read_jpeg_header(_header_variants()["exif"], _pillow.MAX_PIXELS) is None
    assert _pillow.read_info(_header_variants()["exif"]).orientation == 6
