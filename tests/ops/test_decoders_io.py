"""Decoder input handling: corrupt data, peek_image_shape, io.file.read, imread, the nvImageCodec
path (stand-in codec), 16-bit/palette PNGs and the simplejpeg fast path."""

from __future__ import annotations

import io
import struct
import zlib

import numpy as np
import pytest
import torch
from _check import assert_close, raises_at_call, samples_of
from _decoder_data import (
    ANY,
    BGR,
    GRAY,
    RGB,
    YCBCR,
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


# ---- the nvImageCodec path, with a stand-in codec (no CUDA here) -----------------------------
class _FakeNvImgCodec:
    """Stands in for `nvidia.nvimgcodec` (>= 0.6 names): decodes with Pillow into HWC tensors."""

    calls = 0
    fail = False

    class ColorSpec:
        SRGB, GRAY, UNCHANGED = "rgb", "gray", "unchanged"

    class DecodeParams:
        def __init__(self, color_spec, apply_exif_orientation):
            self.color_spec, self.orient = color_spec, apply_exif_orientation

    class CodeStream:
        def __init__(self, data):
            self.data = np.frombuffer(data, np.uint8)

    class Image:
        """An Image wrapping a caller's buffer (`as_images`)."""

        def __init__(self, t):
            self.t = t
            self.__cuda_array_interface__ = {"data": (t.data_ptr(), False)}

    into = 0  # decodes into caller buffers
    own_images = False  # ignore `images=` and return new ones
    none_at = None  # sample that cannot be decoded

    @staticmethod
    def as_images(targets, cuda_stream):
        return [_FakeNvImgCodec.Image(t) for t in targets]

    class Decoder:
        def decode(self, streams, params, cuda_stream, images=None):
            _FakeNvImgCodec.calls += 1
            if _FakeNvImgCodec.fail:
                raise RuntimeError("nvImageCodec failure")
            kind = {"rgb": RGB, "gray": GRAY}.get(params.color_spec, ANY)
            got = [torch.from_numpy(np.array(ref_decode(s.data, kind,
                                                        adjust_orientation=params.orient)))
                   for s in streams]  # fmt: skip
            if _FakeNvImgCodec.none_at is not None:
                got[_FakeNvImgCodec.none_at] = None
            if images is None or _FakeNvImgCodec.own_images:
                return got
            _FakeNvImgCodec.into += 1
            for image, pixels in zip(images, got, strict=True):
                if pixels is not None:
                    image.t.copy_(pixels.reshape(image.t.shape))  # the real one: size checked
            return [im if px is not None else None for im, px in zip(images, got, strict=True)]


@pytest.fixture
def fake_device_codec(monkeypatch):
    import ndd_triton.kernels.gpu.decoders as gpu_decoders

    codec = (_FakeNvImgCodec, _FakeNvImgCodec.Decoder())
    monkeypatch.setattr(gpu_decoders, "_device_codec_wanted", lambda out: True)
    monkeypatch.setattr(gpu_decoders, "_nvimgcodec", lambda: codec)
    monkeypatch.setattr(gpu_decoders, "_warned", False)
    monkeypatch.setattr(gpu_decoders, "_INTO_OUTPUT", [True])
    _FakeNvImgCodec.calls, _FakeNvImgCodec.fail, _FakeNvImgCodec.into = 0, False, 0
    _FakeNvImgCodec.own_images, _FakeNvImgCodec.none_at = False, None
    return _FakeNvImgCodec


@pytest.mark.parametrize(("op", "args"), [
    ("image", {}), ("image", {"output_type": BGR}), ("image", {"output_type": GRAY}),
    ("image", {"output_type": YCBCR}), ("image", {"output_type": ANY}),
    ("image", {"dtype": ndd.float32}), ("image", {"dtype": ndd.uint16}),
    ("image", {"dtype": ndd.int16}), ("image_crop", {"crop": (3, 2), "crop_pos_x": 0.2}),
    ("image_slice", {"start": [1, 1], "shape": [3, 2]}),
])  # fmt: skip
def test_device_codec_path_matches_cpu(files, fake_device_codec, op, args):
    batch = ndd.as_batch([files["png"], files["png_rgba"], files["png_gray"], files["bmp"]])
    fn = getattr(ndd.decoders, op)
    gpu = fn(batch, device="gpu", **args)
    cpu = fn(batch, **args)
    assert gpu.shape == cpu.shape
    for g, c in zip(samples_of(gpu), samples_of(cpu), strict=True):
        assert_close(g, c, where=f"{op} {args}")
    assert fake_device_codec.calls == 1


def test_device_codec_decodes_rgb_into_the_output(files, fake_device_codec):
    """A plain RGB uint8 batch is decoded straight into the output's slots (no per-image
    wrap, no packing copy); other outputs (BGR here) take the per-image path."""
    import ndd_triton.kernels.gpu.decoders as gpu_decoders

    batch = ndd.as_batch([files["png"], files["png_rgba"], files["png_gray"], files["bmp"]])
    for args, into in (({}, 1), ({"output_type": BGR}, 0)):
        fake_device_codec.calls = fake_device_codec.into = 0
        gpu = ndd.decoders.image(batch, device="gpu", **args)
        cpu = ndd.decoders.image(batch, **args)
        for g, c in zip(samples_of(gpu), samples_of(cpu), strict=True):
            assert_close(g, c, where=f"into the output {args}")
        assert (fake_device_codec.calls, fake_device_codec.into) == (1, into)
    assert gpu_decoders._INTO_OUTPUT[0]


def test_device_codec_not_writing_into_the_output_is_not_trusted(files, fake_device_codec):
    """A codec that returns its own images (not the buffers it was given) is not trusted: the
    batch is decoded again the per-image way, and later batches go that way directly; an image
    the codec cannot decode sends the batch to the other paths without that verdict."""
    import ndd_triton.kernels.gpu.decoders as gpu_decoders

    batch = ndd.as_batch([files["png"], files["bmp"]])
    cpu = ndd.decoders.image(batch)
    fake_device_codec.none_at = 1
    for g, c in zip(samples_of(ndd.decoders.image(batch, device="gpu")), samples_of(cpu),
                    strict=True):  # fmt: skip
        assert_close(g, c, where="an image the codec cannot decode")
    assert gpu_decoders._INTO_OUTPUT[0]
    fake_device_codec.none_at, fake_device_codec.own_images = None, True
    fake_device_codec.calls = fake_device_codec.into = 0
    for _ in range(2):
        for g, c in zip(samples_of(ndd.decoders.image(batch, device="gpu")), samples_of(cpu),
                        strict=True):  # fmt: skip
            assert_close(g, c, where="codec images not in the output")
    assert not gpu_decoders._INTO_OUTPUT[0]
    assert (fake_device_codec.calls, fake_device_codec.into) == (3, 0)


def test_device_codec_images_take_the_ops_stream_only_on_the_device():
    """A decoded image in device memory is taken over DLPack with the op's stream (no lookup
    per image); a host image (the codec's CPU backends) with none: its `__dlpack__` refuses a
    stream (found on an H100: the codec path fell back to host decoding)."""
    import ndd_triton.kernels.gpu.decoders as gpu_decoders

    class Image:
        def __init__(self, device_type: int) -> None:
            self.t = torch.arange(6, dtype=torch.uint8).reshape(1, 2, 3)
            self.device_type, self.streams = device_type, []

        def __dlpack_device__(self) -> tuple[int, int]:
            return (self.device_type, 0)

        def __dlpack__(self, stream=None):
            if self.device_type == 1:
                assert stream is None, "stream should be None on cpu."
            self.streams.append(stream)
            return self.t.__dlpack__()

    host, device = Image(1), Image(2)
    for image in (host, device):
        assert torch.equal(gpu_decoders._to_torch(image, 1234), image.t)
    assert gpu_decoders._to_torch(device, None).shape == (1, 2, 3)  # emulated gpu: no stream
    assert host.streams == [None]
    assert device.streams == [1234, None]


def test_device_codec_failure_falls_back_to_host_decode(files, fake_device_codec):
    fake_device_codec.fail = True
    with pytest.warns(RuntimeWarning, match="nvImageCodec failed .*decoding on the host"):
        out = ndd.decoders.image(ndd.as_batch([files["png"], files["jpeg420"]]), device="gpu")
        out.evaluate()
    for got, data in zip(samples_of(out), [files["png"], files["jpeg420"]], strict=True):
        assert_close(got, ref_decode(data), where="fallback")
    assert fake_device_codec.calls == 2  # into the output, then per image (which warns)


def test_device_codec_jpeg_grey_and_truncated_files(files, fake_device_codec):
    """JPEG grey asks the codec for its own luma (libjpeg's grey on the CPU); a truncated JPEG
    never reaches the codec (nvJPEG would decode it silently) and fails naming the sample."""
    mixed = ndd.as_batch([files["png"], files["jpeg420"]])
    grey = ndd.decoders.image(mixed, device="gpu", output_type=GRAY)
    for got, want in zip(samples_of(grey), samples_of(ndd.decoders.image(mixed, output_type=GRAY)),
                         strict=True):  # fmt: skip
        assert_close(got, want, where="grey")
    assert fake_device_codec.calls == 2  # JPEGs as the codec's grey, the PNG as sRGB
    fake_device_codec.calls = 1
    jpeg = encode(_pixels(40, 56, 3, 20), "JPEG", quality=90)
    cut = jpeg[: len(jpeg) * 2 // 3]  # the header is whole: fails while decoding pixels
    with pytest.raises(RuntimeError, match="sample 1: cannot decode the JPEG image: OSError: "
                                           "image file is truncated"):  # fmt: skip
        ndd.decoders.image(ndd.as_batch([jpeg, cut]), device="gpu").evaluate()
    assert fake_device_codec.calls == 1


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


def test_device_codec_completeness_check_reads_head_and_tail_like_the_whole_file():
    """`_complete` (is the end marker there?) looks at the header and the tail first: the same
    answers as searching the whole file, on cut, padded and marker-stuffed files."""
    import ndd_triton.kernels.gpu.decoders as gpu_decoders

    def whole(data: bytes) -> bool:
        if data[:2] == b"\xff\xd8":
            scan = data.find(b"\xff\xda")
            return scan >= 0 and data.rfind(b"\xff\xd9") > scan
        if data[:8] == b"\x89PNG\r\n\x1a\n":
            return data.rfind(b"IEND") > 8
        return True

    rs = np.random.default_rng(1)
    jpeg = encode(_pixels(200, 300, 3, 21), "JPEG", quality=95).tobytes()
    png = encode(_pixels(60, 80, 3, 22), "PNG").tobytes()
    app = b"\xff\xe2" + (40002).to_bytes(2, "big") + bytes(40000)
    big_head = jpeg[:2] + app + app + jpeg[2:]  # the scan starts after the first 64 KiB
    variants = [b"", jpeg[:1], jpeg, png, big_head, big_head[:70000], jpeg + bytes(5000),
                jpeg + bytes(5000) + b"\xff", png + bytes(9000), jpeg[: len(jpeg) // 2],
                png[:-20], b"\xff\xd8" + bytes(10), b"\xff\xd8\xff\xd9", jpeg[:100] + b"\xff\xd9",
                jpeg[: len(jpeg) // 2] + b"\xff\xd9"]  # ending in the marker, scan or not
    for base in (jpeg, png):
        for _ in range(40):
            cut = base[: rs.integers(0, len(base) + 1)]
            pad = bytes(rs.integers(0, 256, rs.integers(0, 9000)).astype(np.uint8))
            variants.append(cut + pad)
    for data in variants:
        arr = np.frombuffer(data, np.uint8)
        assert gpu_decoders._complete(arr) == whole(data), (len(data), data[:4])
