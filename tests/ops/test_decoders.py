"""Decoders, peek_image_shape, io.file.read and imread.

References decode with Pillow through other entry points than the implementation (plain
`convert`, `ImageOps.exif_transpose`, float colour formulas) and compute windows from the
spec's formulas; golden DALI cases run in tests/test_golden.py.
"""

from __future__ import annotations

import io
import math
import struct
import zlib

import numpy as np
import pytest
from _check import assert_close, check_op, samples_of
from PIL import Image, ImageOps

import ndd_triton as ndd
from ndd_triton import types

RGB, BGR, GRAY, YCBCR, ANY = (types.RGB, types.BGR, types.GRAY, types.YCbCr, types.ANY_DATA)


# ---- encoded test images ---------------------------------------------------------------------
def _pixels(h, w, c, seed=0):
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:h, 0:w]
    base = np.stack([(xx * 255 // max(w - 1, 1)), (yy * 255 // max(h - 1, 1)),
                     (xx + yy) * 7 % 256, 255 - xx * 20 % 256], axis=-1)[..., :c]  # fmt: skip
    noise = rng.integers(0, 40, size=(h, w, c))
    arr = np.clip(base + noise, 0, 255).astype(np.uint8)
    return arr[..., 0] if c == 1 else arr


def encode(arr, fmt, **save):
    buf = io.BytesIO()
    Image.fromarray(arr).save(buf, fmt, **save)
    return np.frombuffer(buf.getvalue(), np.uint8).copy()


def with_orientation(arr, orientation, fmt="PNG"):
    exif = Image.Exif()
    exif[0x0112] = orientation
    return encode(arr, fmt, exif=exif.tobytes())


@pytest.fixture(scope="module")
def files():
    return {
        "jpeg420": encode(_pixels(13, 17, 3), "JPEG", quality=90),
        "jpeg444": encode(_pixels(9, 22, 3, 1), "JPEG", quality=95, subsampling=0),
        "jpeg_gray": encode(_pixels(11, 7, 1, 2), "JPEG"),
        "png": encode(_pixels(7, 13, 3, 3), "PNG"),
        "png_gray": encode(_pixels(5, 9, 1, 4), "PNG"),
        "png_rgba": encode(_pixels(6, 4, 4, 5), "PNG"),
        "png_1x1": encode(_pixels(1, 1, 3, 6), "PNG"),
        "bmp": encode(_pixels(3, 5, 3, 7), "BMP"),
        "tiff": encode(_pixels(4, 6, 3, 8), "TIFF"),
        "webp": encode(_pixels(5, 7, 3, 9), "WEBP", lossless=True),
        "ppm": encode(_pixels(4, 4, 3, 10), "PPM"),
        "big": encode(_pixels(40, 60, 3, 11), "PNG"),
    }


# ---- independent reference ---------------------------------------------------------------
def ref_decode(data, output_type=RGB, dtype=None, adjust_orientation=True):
    image = Image.open(io.BytesIO(data.tobytes()))
    fmt = image.format
    if adjust_orientation:
        image = ImageOps.exif_transpose(image)
    if output_type == ANY:
        out = np.asarray(image)
        out = out[..., None] if out.ndim == 2 else out
    elif output_type == GRAY and fmt == "JPEG":
        ycc = Image.open(io.BytesIO(data.tobytes()))
        ycc.draft("YCbCr", ycc.size)  # libjpeg's Y plane, no colour conversion
        out = np.asarray(ycc)
        out = (out if out.ndim == 2 else out[..., 0])[..., None]
        if adjust_orientation:
            out = np.asarray(ImageOps.exif_transpose(Image.fromarray(out[..., 0])))[..., None]
    else:
        rgb = np.asarray(image.convert("RGB")).astype(np.float64)
        if output_type == BGR:
            out = rgb[..., ::-1]
        elif output_type == GRAY:
            out = np.floor(rgb @ [0.299, 0.587, 0.114] + 0.5)[..., None]
        elif output_type == YCBCR:
            y = 16 + (65.481 * rgb[..., 0] + 128.553 * rgb[..., 1] + 24.966 * rgb[..., 2]) / 255
            cb = 128 + (-37.797 * rgb[..., 0] - 74.203 * rgb[..., 1] + 112 * rgb[..., 2]) / 255
            cr = 128 + (112 * rgb[..., 0] - 93.786 * rgb[..., 1] - 18.214 * rgb[..., 2]) / 255
            out = np.floor(np.stack([y, cb, cr], -1) + 0.5)
        else:
            out = rgb
        out = out.astype(np.uint8)
    dtype = None if dtype is None else ndd.dtype(dtype).numpy_dtype
    if dtype == np.float32:
        return (out.astype(np.float32) / np.float32(255)).astype(np.float32)
    if dtype == np.uint16:
        return out.astype(np.uint16) * 257
    return np.ascontiguousarray(out)


def _round_half_away(x):
    return math.copysign(math.floor(abs(x) + 0.5), x)


def ref_crop(data, crop, crop_pos_x=0.5, crop_pos_y=0.5, **kw):
    full = ref_decode(data, **kw)
    ch, cw = int(crop[0]), int(crop[1])
    y0 = int(_round_half_away(crop_pos_y * (full.shape[0] - ch)))
    x0 = int(_round_half_away(crop_pos_x * (full.shape[1] - cw)))
    return full[y0:y0 + ch, x0:x0 + cw]


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
    with pytest.raises(RuntimeError, match=r"decoders.image_crop: sample 0: The cropping window "
                       r"\[-5..45, -10..70\] is not valid for image dimensions \[40 x 60\]"):
        ndd.decoders.image_crop(big, crop=(50, 80))
    with pytest.raises(RuntimeError, match="'crop_h' and 'crop_w' must be given together"):
        ndd.decoders.image_crop(big, crop_w=5)
    with pytest.raises(RuntimeError, match=r"argument 'crop_pos_x' sample 1: must be in \[0, 1\]"):
        ndd.decoders.image_crop(ndd.as_batch([big, big]), crop=(2, 2),
                                crop_pos_x=ndd.as_batch([np.float32(0.5), np.float32(1.5)]))
    with pytest.raises(ValueError, match=r"argument 'crop' expects \(H, W\)"):
        ndd.decoders.image_crop(big, crop=(1, 2, 3))
    with pytest.raises(ValueError, match="argument 'rounding' must be one of"):
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
    with pytest.raises(RuntimeError, match="'axes' and 'axis_names' are mutually exclusive"):
        ndd.decoders.image_slice(big, start=[1, 1], axes=[0, 1], axis_names="HW")
    with pytest.raises(RuntimeError, match="no slice coordinates"):
        ndd.decoders.image_slice(big)
    with pytest.raises(RuntimeError, match="anchor' and 'shape' inputs must be given together"):
        ndd.decoders.image_slice(big, np.array([1, 1]))
    with pytest.raises(RuntimeError, match="positional anchor/shape inputs or the keyword"):
        ndd.decoders.image_slice(big, np.array([1, 1]), np.array([2, 2]), start=[1, 1])
    with pytest.raises(RuntimeError, match=r"sample 0: The slice window \[30..50, 0..10\] is "
                       r"not valid for image dimensions \[40 x 60\]"):
        ndd.decoders.image_slice(big, start=[0, 30], shape=[10, 20])
    with pytest.raises(ValueError, match="argument 'shape' sample 0: expected 2 values; got 3"):
        ndd.decoders.image_slice(big, start=[0, 0], shape=[1, 2, 3])
    with pytest.raises(ValueError, match="'axes' may name only the H"):
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
    with pytest.raises(RuntimeError, match="sample 0: the encoded data is empty"):
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
    with pytest.raises(ValueError, match="argument 'random_area' expects"):
        ndd.decoders.image_random_crop(big, random_area=[0.5, 0.2])
    with pytest.raises(ValueError, match="argument 'random_aspect_ratio' expects"):
        ndd.decoders.image_random_crop(big, random_aspect_ratio=[0, 1])
    with pytest.raises(ValueError, match="argument 'num_attempts' must be positive"):
        ndd.decoders.image_random_crop(big, num_attempts=0)


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
    with pytest.raises(RuntimeError, match=f"{op}: {message}"):
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
    with pytest.raises(RuntimeError, match=r"decoders.image: input 0 must hold encoded bytes as "
                       "uint8; got i32"):
        ndd.decoders.image(files["png"].astype(np.int32))
    with pytest.raises(RuntimeError, match="input 0 must be 1-D encoded bytes per sample; got 2-D"):
        ndd.decoders.image(files["png"][:24].reshape(4, 6))
    with pytest.raises(ValueError, match=r"decoders.image: argument 'output_type' expects"):
        ndd.decoders.image(files["png"], output_type="RGB")
    with pytest.raises(ValueError, match="argument 'output_type' must be one of"):
        ndd.decoders.image(files["png"], output_type=7)
    with pytest.raises(ValueError, match="argument 'dtype' must be one of u8, u16, i16, f32; got "
                       "i32"):
        ndd.decoders.image(files["png"], dtype=ndd.int32)
    with pytest.warns(DeprecationWarning, match="argument 'split_stages' is deprecated"):
        ndd.decoders.image(files["png"], split_stages=True)
    with pytest.raises(ValueError, match="peek_image_shape: device='gpu' is not supported"):
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
    with pytest.raises(RuntimeError, match=r"io.file.read: sample 0: cannot read file "
                       r"'.*nope.jpg': No such file or directory"):
        ndd.io.file.read(_path_tensor(missing)).evaluate()
    with pytest.raises(RuntimeError, match=r"nope.jpg': No such file"):
        ndd.imread(missing)
    with pytest.raises(ValueError, match=r"io.file.read: input 0 must be 1-D uint8 samples"):
        ndd.io.file.read(np.array([1, 2], np.int32))
    with pytest.raises(ValueError, match=r"io.file.read: sample 0: the path is not valid UTF-8"):
        ndd.io.file.read(np.array([0xFF, 0xFE], np.uint8))
    with pytest.raises(TypeError, match=r"imread: path 1 must be a str or os.PathLike path; "
                       r"got int"):
        ndd.imread([str(missing), 3])
    with pytest.raises(TypeError, match="imread\\(\\) got an unexpected keyword argument 'crop'"):
        ndd.imread(missing, crop=(2, 2))
    with pytest.raises(ValueError, match="imread: the list of paths is empty"):
        ndd.imread([])


# ---- the nvImageCodec path, with a stand-in codec (no CUDA here) -----------------------------
class _FakeNvImgCodec:
    """Stands in for `nvidia.nvimgcodec`: decodes with Pillow into HWC arrays."""

    calls = 0
    fail = False

    class ColorSpec:
        RGB, UNCHANGED = "rgb", "unchanged"

    class DecodeParams:
        def __init__(self, color_spec, apply_exif_orientation):
            self.color_spec, self.orient = color_spec, apply_exif_orientation

    class CodeStream:
        def __init__(self, data):
            self.data = np.frombuffer(data, np.uint8)

    class Decoder:
        def decode(self, streams, params, cuda_stream):
            _FakeNvImgCodec.calls += 1
            if _FakeNvImgCodec.fail:
                raise RuntimeError("nvImageCodec failure")
            kind = RGB if params.color_spec == "rgb" else ANY
            return [ref_decode(s.data, kind, adjust_orientation=params.orient) for s in streams]


@pytest.fixture
def fake_device_codec(monkeypatch):
    import ndd_triton.kernels.gpu.decoders as gpu_decoders

    codec = (_FakeNvImgCodec, _FakeNvImgCodec.Decoder())
    monkeypatch.setattr(gpu_decoders, "_device_codec_wanted", lambda out: True)
    monkeypatch.setattr(gpu_decoders, "_nvimgcodec", lambda: codec)
    _FakeNvImgCodec.calls, _FakeNvImgCodec.fail = 0, False
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


def test_device_codec_failure_falls_back_to_host_decode(files, fake_device_codec):
    fake_device_codec.fail = True
    out = ndd.decoders.image(ndd.as_batch([files["png"], files["jpeg420"]]), device="gpu")
    for got, data in zip(samples_of(out), [files["png"], files["jpeg420"]], strict=True):
        assert_close(got, ref_decode(data), where="fallback")
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


# ---- simplejpeg fast path --------------------------------------------------------------------
def _photo_jpegs():
    from pathlib import Path

    folder = Path(ndd.__file__).parent / "data" / "images"
    return [np.fromfile(p, np.uint8) for p in sorted(folder.glob("*.jpg"))]


@pytest.mark.parametrize("output_type", [RGB, BGR, YCBCR, ANY, GRAY])
@pytest.mark.parametrize("orientation", [1, 6])
def test_fast_jpeg_path_matches_pillow(files, monkeypatch, output_type, orientation):
    """The optional simplejpeg path (same libjpeg-turbo settings) is bit-exact with Pillow's,
    full decodes into the output and windows alike; without simplejpeg both sides are Pillow."""
    from ndd_triton.decoders import _pillow

    jpegs = [files["jpeg420"], files["jpeg444"], files["jpeg_gray"], *_photo_jpegs(),
             with_orientation(_pixels(12, 20, 3, 12), orientation, "JPEG")]  # fmt: skip
    batch = ndd.as_batch(jpegs)
    fast_full = ndd.decoders.image(batch, output_type=output_type).evaluate()
    fast_crop = ndd.decoders.image_crop(batch, crop=(9, 5), output_type=output_type).evaluate()
    monkeypatch.setattr(_pillow, "simplejpeg", None)
    slow_full = ndd.decoders.image(batch, output_type=output_type).evaluate()
    slow_crop = ndd.decoders.image_crop(batch, crop=(9, 5), output_type=output_type).evaluate()
    for fast, slow in ((fast_full, slow_full), (fast_crop, slow_crop)):
        for i, (a, b) in enumerate(zip(samples_of(fast), samples_of(slow), strict=True)):
            np.testing.assert_array_equal(a, b, err_msg=f"sample {i}")


def test_fast_jpeg_path_leaves_damaged_data_to_pillow(files):
    from ndd_triton.decoders import _pillow

    info = _pillow.read_info(files["jpeg420"])
    data = files["jpeg420"][: len(files["jpeg420"]) * 2 // 3]
    out = np.zeros(info.shape(0, True), np.uint8)
    assert not _pillow.decode_into(out, data, info, 0, True)  # strict: libjpeg's warning
