"""Colour adjustments: independent float64 NumPy references written from the spec formulas."""

import numpy as np
import pytest
from _check import check_op, raises_at_call

import ndd_triton as ndd

# YIQ written out independently of ndd_triton.ops._color_matrix (spec ops.md §2.4).
YIQ = np.array([[0.299, 0.587, 0.114], [0.596, -0.274, -0.321], [0.211, -0.523, 0.311]])


def to_dtype(values, dtype):
    """DALI conversion: round half away from zero, saturate; floats pass through."""
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return values.astype(dtype)
    info = np.iinfo(dtype)
    rounded = np.sign(values) * np.floor(np.abs(values) + 0.5)
    return np.clip(rounded, info.min, info.max).astype(dtype)


def hsv_matrix(hue=0.0, saturation=1.0, value=1.0):
    h = np.deg2rad(hue)
    rot = np.array([[1, 0, 0],
                    [0, saturation * np.cos(h), saturation * np.sin(h)],
                    [0, -saturation * np.sin(h), saturation * np.cos(h)]])  # fmt: skip
    return value * np.linalg.inv(YIQ) @ rot @ YIQ


def half(dtype):
    return 0.5 if np.dtype(dtype).kind == "f" else {1: 128, 2: 16384, 4: 2**30}[
        np.dtype(dtype).itemsize]


def max_of(dtype):
    return 1.0 if np.dtype(dtype).kind == "f" else float(np.iinfo(dtype).max)


def ref_brightness_contrast(x, brightness=1.0, brightness_shift=0.0, contrast=1.0,
                            contrast_center=None, dtype=None):  # fmt: skip
    out = dtype.numpy_dtype if dtype is not None else x.dtype
    c = half(x.dtype) if contrast_center is None else contrast_center
    v = brightness_shift * max_of(out) + brightness * (c + contrast * (x.astype(np.float64) - c))
    return to_dtype(v, out)


def ref_matrix(x, m, offset=0.0, dtype=None):
    v = x.astype(np.float64) @ m.T + offset
    return to_dtype(v, dtype or x.dtype)


def images(shapes, dtype=np.uint8, seed=0):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "f":
        return [rng.random(s).astype(dtype) for s in shapes]
    hi = 256 if np.dtype(dtype) == np.uint8 else 30000
    return [rng.integers(0, hi, size=s).astype(dtype) for s in shapes]


RAGGED = [(5, 7, 3), (1, 1, 3), (23, 50, 3)]  # the last one needs several tiles


@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.float32])
def test_brightness_contrast_ragged(dtype):
    args = {"brightness": 1.3, "brightness_shift": 0.05, "contrast": 0.7}
    check_op(ndd.brightness_contrast, images(RAGGED, dtype), ref_brightness_contrast, args=args,
             layout="HWC", atol=1 if dtype != np.float32 else 1e-5)


def test_brightness_and_contrast_per_sample_any_channels():
    samples = images([(4, 6, 1), (3, 5, 4), (2, 2, 2)])
    check_op(ndd.brightness, samples, lambda s, **a: ref_brightness_contrast(s, **a),
             per_sample={"brightness": [0.5, 1.5, 2.0], "brightness_shift": [0.0, 0.1, -0.2]},
             layout="HWC", atol=1)
    check_op(ndd.contrast, samples, lambda s, **a: ref_brightness_contrast(s, **a),
             per_sample={"contrast": [0.0, 1.5, 2.0], "contrast_center": [10.0, 128.0, 200.0]},
             layout="HWC", atol=1)


def test_brightness_dtype_conversions():
    u8 = images([(3, 4, 3), (2, 5, 3)])
    check_op(ndd.brightness, u8, ref_brightness_contrast,
             args={"brightness": 1.7, "brightness_shift": 0.1, "dtype": ndd.float32},
             layout="HWC", atol=1e-4, all_modes=False)
    f32 = [np.array([[[0.5, 1.0, 300.0]]], np.float32)]
    out = ndd.brightness(ndd.as_tensor(f32[0], layout="HWC"), dtype=ndd.uint8)
    np.testing.assert_array_equal(np.asarray(out), [[[1, 1, 255]]])


@pytest.mark.parametrize(("op", "args", "matrix"), [
    (ndd.hue, {"hue": 90.0}, hsv_matrix(hue=90.0)),
    (ndd.saturation, {"saturation": 0.5}, hsv_matrix(saturation=0.5)),
    (ndd.hsv, {"hue": 400.0, "saturation": 0.7, "value": 1.2},
     hsv_matrix(hue=40.0, saturation=0.7, value=1.2)),
])
def test_yiq_ops(op, args, matrix):
    check_op(op, images(RAGGED), lambda s, **a: ref_matrix(s, matrix), args=args, layout="HWC",
             atol=1)


def test_spec_examples():
    x = np.array([[[100, 50, 200]]], np.uint8)
    assert np.asarray(ndd.hue(x, hue=90)).tolist() == [[[148, 55, 50]]]
    assert np.asarray(ndd.saturation(x, saturation=0)).tolist() == [[[82, 82, 82]]]
    assert np.asarray(ndd.saturation(x, saturation=-1)).tolist() == [[[64, 114, 0]]]
    assert np.asarray(ndd.hsv(x, hue=90, saturation=0.5, value=1.2)).tolist() == [[[138, 82, 80]]]
    twist = ndd.color_twist(x, hue=90, saturation=0.5, brightness=1.2, contrast=0.8)
    assert np.asarray(twist).tolist() == [[[141, 96, 94]]]
    black = ndd.color_twist(np.zeros((1, 1, 3), np.uint8), hue=90, saturation=0.5,
                            brightness=1.2, contrast=0.8)  # fmt: skip
    assert np.asarray(black).tolist() == [[[31, 31, 31]]]
    # hsv defaults to uint8 output even for float input (DALI quirk)
    assert ndd.hsv(np.full((1, 1, 3), 0.6, np.float32)).dtype == ndd.uint8


def test_color_twist_per_sample_and_sequences():
    def ref(s, hue=0.0, saturation=1.0, brightness=1.0, contrast=1.0):
        m = brightness * contrast * hsv_matrix(hue, saturation)
        return ref_matrix(s, m, brightness * (1 - contrast) * 128.0)

    per_sample = {"hue": [10.0, -70.0, 200.0], "saturation": [0.5, 1.2, 0.0],
                  "brightness": [1.1, 0.8, 1.0], "contrast": [0.9, 1.3, 0.5]}  # fmt: skip
    check_op(ndd.color_twist, images(RAGGED), ref, per_sample=per_sample, layout="HWC", atol=1)
    check_op(ndd.color_twist, images([(2, 3, 4, 3), (1, 5, 2, 3)]), ref,
             args={"hue": 33.0, "contrast": 1.2}, layout="FHWC", atol=1, all_modes=False)
    check_op(ndd.hue, images([(2, 3, 4, 3)], np.float32),
             lambda s, **a: ref_matrix(s, hsv_matrix(hue=50.0)), args={"hue": 50.0},
             layout="DHWC", atol=1e-5, all_modes=False)  # fmt: skip


@pytest.mark.parametrize("dtype", [np.int16, np.int32])
def test_color_twist_integer_contrast_centre_is_128(dtype):
    # DALI 2.4 (recorded): contrast=0.5 on [0, 100, 200] gives [64, 114, 164] for i16 and i32
    # (centre 128, not contrast's half range 16384 / 2**30); i16 [0, 10000, 20000] gives
    # [64, 5064, 10064], and [64, 255, 255] with dtype=uint8.
    for dev in ("cpu", "gpu"):
        t = ndd.as_tensor(np.array([[[0, 100, 200]]], dtype), layout="HWC")
        got = ndd.color_twist(t, contrast=0.5, device=dev).cpu()
        assert np.asarray(got).tolist() == [[[64, 114, 164]]]
        t = ndd.as_tensor(np.array([[[0, 10000, 20000]]], dtype), layout="HWC")
        got = ndd.color_twist(t, contrast=0.5, device=dev).cpu()
        assert np.asarray(got).tolist() == [[[64, 5064, 10064]]]
        got = ndd.color_twist(t, contrast=0.5, dtype=ndd.uint8, device=dev).cpu()
        assert np.asarray(got).tolist() == [[[64, 255, 255]]]
    xi = images([(4, 5, 3)], np.int16)

    def ref(s, contrast=1.0, hue=0.0):
        return ref_matrix(s, contrast * hsv_matrix(hue), (1 - contrast) * 128.0)

    check_op(ndd.color_twist, xi, ref, args={"contrast": 0.7, "hue": 20.0}, layout="HWC",
             atol=1, all_modes=False)  # fmt: skip


def test_color_errors():
    x = np.zeros((2, 3, 3), np.uint8)
    with raises_at_call(ValueError, match="brightness: input 0 has layout 'CHW'"):
        ndd.brightness(ndd.as_tensor(x, layout="CHW"))
    with raises_at_call(ValueError, match="contrast: input 0 has 2 dimensions and no layout"):
        ndd.contrast(np.zeros((2, 3), np.uint8))
    two = ndd.as_batch([np.zeros((2, 2, 3), np.uint8), np.zeros((2, 2, 2), np.uint8)],
                       layout="HWC")  # fmt: skip
    with raises_at_call(ValueError, match=r"hue: input 0 sample 1: expected 3 channels \(RGB\); "
                                         "got 2"):  # fmt: skip
        ndd.hue(two, hue=10)
    with raises_at_call(TypeError, match="brightness: argument 'dtype' must be one of"):
        ndd.brightness(x, dtype=ndd.float64)
    with raises_at_call(TypeError, match="saturation: input 0 has dtype f64"):
        ndd.saturation(x.astype(np.float64))
    with raises_at_call(ValueError, match="hue: argument 'image_type' must be one of"):
        ndd.hue(x, image_type=ndd.types.GRAY)
    with raises_at_call(ValueError, match="hsv: argument 'value' sample 1 expects a scalar"):
        ndd.hsv(ndd.as_batch([x, x]), value=ndd.as_batch([np.ones(1), np.ones(2)]))


def test_color_one_launch_per_ragged_batch():
    batch = ndd.as_batch(images([(3, 5, 3), (9, 2, 3), (1, 1, 3)]), layout="HWC").gpu()
    with ndd.profile() as prof:
        ndd.color_twist(batch, hue=ndd.as_batch([np.float32(v) for v in (1, 2, 3)])).evaluate()
    (record,) = prof.records
    assert record.gpu_launches == 1


@pytest.mark.parametrize(("dtype", "out_dtype", "atol"), [
    (np.uint8, None, 0), (np.int8, ndd.int16, 0), (np.uint8, ndd.float32, 1e-4)])
def test_cpu_table_path_matches_reference(dtype, out_dtype, atol):
    """8-bit samples of 4096+ elements go through a 256-entry table on the CPU (cv2.LUT), except
    uint8 -> uint8, which takes the 10-bit fixed-point path: exact here, as 0.5 and 50 are."""
    x = np.random.default_rng(3).integers(0, 256, (40, 41, 3)).astype(np.uint8).view(dtype)
    args = {"brightness": 1.0, "contrast": 0.5, "contrast_center": 100.0}
    if out_dtype is not None:
        args["dtype"] = out_dtype
    got = np.asarray(ndd.brightness_contrast(ndd.as_tensor(x, layout="HWC"), **args))
    expected = ref_brightness_contrast(x, **args)
    assert got.dtype == expected.dtype
    # contrast 0.5 around 100 puts every odd input on a .5 tie: half away from zero, exactly
    np.testing.assert_allclose(got.astype(np.float64), expected, atol=atol, rtol=1e-6)


def test_cpu_transform_chunks(monkeypatch):
    """The CPU's float32 OpenCV transform runs in pixel chunks; chunk edges must not show
    (int16 output: uint8 -> uint8 takes the fixed-point path, tests/ops/test_color_u8.py)."""
    monkeypatch.setattr("ndd_triton.kernels.cpu.color.CHUNK_PIXELS", 7)
    matrix = 1.1 * 0.9 * hsv_matrix(30.0, 0.8)
    for x in images([(5, 7, 3), (23, 50, 3)]):
        got = ndd.color_twist(ndd.as_tensor(x, layout="HWC"), hue=30.0, saturation=0.8,
                              brightness=1.1, contrast=0.9, dtype=ndd.int16)  # fmt: skip
        expected = ref_matrix(x, matrix, 1.1 * 0.1 * 128.0, dtype=np.int16)
        np.testing.assert_allclose(np.asarray(got).astype(np.int64), expected, atol=1)
