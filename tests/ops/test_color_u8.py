"""uint8 fast paths of the CPU colour kernels: within 1 of the exact float result, always.

The precision contract (kernels/cpu/_color_u8.py) rests on two facts checked here: OpenCV computes
exactly the fixed-point models of that module, and the models stay within 0.375 of the real
value before rounding. The ops are then checked end to end against float64 references on large
random inputs with per-sample parameters, and on all 2^24 colours for the fixed conversions.
"""

import numpy as np
import pytest

import ndd_triton as ndd
from ndd_triton import types
from ndd_triton.kernels.cpu import _color_u8 as u8
from ndd_triton.ops._color_matrix import RGB_TO_YCBCR, YCBCR_OFFSET, hsv_matrices

ALL_COLOURS = np.stack(np.meshgrid(*[np.arange(256, dtype=np.uint8)] * 3, indexing="ij"),
                       axis=-1).reshape(4096, 4096, 3)  # fmt: skip


def exact(values):
    """DALI's conversion of float values to uint8: half away from zero, saturate (negative
    values saturate to 0 whichever way their ties round, so `floor(v + 0.5)` is enough)."""
    return np.clip(np.floor(values + 0.5), 0, 255)


def max_error(got, values):
    return int(np.abs(got.astype(np.int64) - exact(values)).max())


def random_tables(rng, count, scale):
    return [u8.transform_table(rng.uniform(-scale, scale, (3, 3)),
                               rng.uniform(-300 * scale, 300 * scale, 3)) for _ in range(count)]


def test_opencv_computes_the_models():
    """Bit-exact on random colours (SIMD body) for general, diagonal and extreme matrices."""
    import cv2  # a project dependency: the fast paths exist only with it
    assert u8.transform_matches_model()
    assert u8.gray_matches_model()
    x = np.zeros((16, 16, 3), np.uint8)  # a typical colour_twist matrix takes the fast path
    assert u8.apply_u8(np.empty_like(x), x, hsv_matrices([30.0], [0.8], [1.1])[0], np.ones(3))
    rng = np.random.default_rng(0)
    pixels = rng.integers(0, 256, (1 << 16, 1, 3), dtype=np.uint8)
    tables = random_tables(rng, 8, 2.0) + random_tables(rng, 4, 10.0) + [
        u8.transform_table(np.diag([0.5] * 3), np.full(3, 100.0)),
        u8.transform_table(np.full((3, 3), -u8.MAX_COEFFICIENT), np.full(3, u8.MAX_OFFSET)),
        u8.transform_table(np.full((3, 3), u8.MAX_COEFFICIENT), np.full(3, -u8.MAX_OFFSET))]
    for table in tables:
        np.testing.assert_array_equal(cv2.transform(pixels, table).reshape(-1, 3),
                                      u8.transform_u8_model(pixels, table))  # fmt: skip
    for code, bgr in ((cv2.COLOR_RGB2GRAY, False), (cv2.COLOR_BGR2GRAY, True)):
        np.testing.assert_array_equal(cv2.cvtColor(pixels, code).reshape(-1),
                                      u8.gray_u8_model(pixels, bgr))  # fmt: skip


def test_model_error_before_rounding_is_below_0_375():
    """`|S/1024 - (m·p + o)| < 0.375` at the worst pixel of each matrix (its corners)."""
    rng = np.random.default_rng(1)
    corners = np.array(np.meshgrid([0, 255], [0, 255], [0, 255], indexing="ij")).reshape(3, -1).T
    for table in random_tables(rng, 200, 5.0) + random_tables(rng, 50, u8.MAX_COEFFICIENT / 2):
        table = np.clip(table, -u8.MAX_COEFFICIENT, u8.MAX_COEFFICIENT)
        weights = np.rint(table[:, :3] * 1024) / 1024 - table[:, :3].astype(np.float64)
        bias = np.rint(table[:, 3] * 1024) / 1024 - table[:, 3].astype(np.float64)
        # the error is affine in p, so its largest magnitude is at a corner of the RGB cube
        assert np.abs(corners @ weights.T + bias).max() < 0.375


def _colour_params(rng, n):
    return {"hue": rng.uniform(-720, 720, n), "saturation": rng.uniform(-3, 5, n),
            "brightness": rng.uniform(0, 3, n), "contrast": rng.uniform(-2, 4, n)}  # fmt: skip


def test_color_twist_per_sample_within_one():
    """16 samples, each its own matrix (large hue/saturation/contrast included), 2^16 pixels."""
    rng = np.random.default_rng(2)
    n = 16
    samples = [rng.integers(0, 256, (256, 256, 3), dtype=np.uint8) for _ in range(n)]
    params = _colour_params(rng, n)
    out = ndd.color_twist(ndd.as_batch(samples, layout="HWC"),
                          **{k: ndd.as_batch([np.float32(v) for v in vals])
                             for k, vals in params.items()})  # fmt: skip
    params32 = {k: v.astype(np.float32).astype(np.float64) for k, v in params.items()}
    b, c = params32["brightness"], params32["contrast"]
    matrices = (b * c)[:, None, None] * hsv_matrices(params32["hue"], params32["saturation"],
                                                     np.ones(n))  # fmt: skip
    worst = [max_error(np.asarray(out.select(i)),
                       samples[i].astype(np.float64) @ matrices[i].T + b[i] * (1 - c[i]) * 128)
             for i in range(n)]  # fmt: skip
    assert max(worst) <= 1, worst


@pytest.mark.parametrize("shape", [(17, 23, 3), (37, 41, 1), (5, 13, 11, 4)])
def test_brightness_contrast_any_channels_and_tails(shape):
    """Elementwise ops: bytes three at a time, plus odd tails (element counts not divisible by
    3, pixel counts not a multiple of the SIMD width), per-sample parameters."""
    rng = np.random.default_rng(3)
    n = 12
    samples = [rng.integers(0, 256, shape, dtype=np.uint8) for _ in range(n)]
    bright, shift = rng.uniform(0, 4, n), rng.uniform(-0.5, 0.5, n)
    contrast, center = rng.uniform(-3, 5, n), rng.uniform(0, 255, n)
    layout = "FHWC" if len(shape) == 4 else "HWC"
    out = ndd.brightness_contrast(
        ndd.as_batch(samples, layout=layout), brightness=ndd.as_batch(list(bright)),
        brightness_shift=ndd.as_batch(list(shift)), contrast=ndd.as_batch(list(contrast)),
        contrast_center=ndd.as_batch(list(center)))  # fmt: skip
    for i, s in enumerate(samples):
        values = shift[i] * 255 + bright[i] * (center[i] + contrast[i] * (s - center[i]))
        assert max_error(np.asarray(out.select(i)), values) <= 1


def test_large_coefficients_take_the_exact_path():
    """Beyond the fixed-point range (|m| > 31) the bytes are the exact float path's."""
    x = np.random.default_rng(4).integers(0, 256, (64, 64, 3), dtype=np.uint8)
    assert not u8.fits_fixed_point(np.array([[40.0]]), np.array([0.0]))
    got = np.asarray(ndd.brightness(ndd.as_tensor(x, layout="HWC"), brightness=40.0,
                                    brightness_shift=-19.9))  # fmt: skip
    # the exact path's float32 arithmetic: gain · x + (offset + 0.5), clamp, truncate
    values = np.float32(40.0) * x.astype(np.float32) + (np.float32(-19.9 * 255) + np.float32(0.5))
    np.testing.assert_array_equal(got, np.clip(np.floor(values), 0, 255))


def all_colours_error(got, matrix, offset):
    """Largest |got - exact| over all 2^24 colours; `got[r, g, b, k]`, one channel at a time.

    The reference is `matrix[k, 0]·r + offset[k]` plus `matrix[k, 1]·g + matrix[k, 2]·b`,
    each part in float64 then added in float32 (error ~1e-5: a rounding flip it causes moves
    the reference by 1 only where the fast path's own error is below 0.375, never to 2).
    """
    levels = np.arange(256, dtype=np.float64)
    worst = 0.0
    for k in range(matrix.shape[0]):
        red = (levels * matrix[k, 0] + offset[k] + 0.5).astype(np.float32)
        green_blue = (levels[:, None] * matrix[k, 1] + levels * matrix[k, 2]).astype(np.float32)
        values = red[:, None, None] + green_blue[None]
        np.floor(values, out=values)
        np.clip(values, 0, 255, out=values)
        values -= got[..., k]
        worst = max(worst, float(np.abs(values).max()))
    return worst


_INV = np.linalg.inv(RGB_TO_YCBCR)
_SWAP = np.eye(3)[::-1]
_GRAY = np.array([[0.299, 0.587, 0.114]])


@pytest.mark.parametrize(("src", "dst", "matrix", "offset"), [
    (types.RGB, types.YCbCr, RGB_TO_YCBCR, YCBCR_OFFSET),
    (types.BGR, types.YCbCr, RGB_TO_YCBCR @ _SWAP, YCBCR_OFFSET),
    (types.YCbCr, types.RGB, _INV, -_INV @ YCBCR_OFFSET),
    (types.YCbCr, types.BGR, _SWAP @ _INV, -_SWAP @ _INV @ YCBCR_OFFSET),
    (types.RGB, types.GRAY, _GRAY, np.zeros(1)),
    (types.BGR, types.GRAY, _GRAY @ _SWAP, np.zeros(1)),
    (types.YCbCr, types.GRAY, np.array([[255 / 219, 0, 0]]), np.array([-16 * 255 / 219])),
    (types.RGB, types.BGR, _SWAP, np.zeros(3)),
], ids=lambda v: getattr(v, "name", ""))
def test_conversions_on_all_colours(src, dst, matrix, offset):
    """Fixed conversions have no parameters: all 2^24 colours cover every input."""
    out = ndd.color_space_conversion(ndd.as_tensor(ALL_COLOURS, layout="HWC"), image_type=src,
                                     output_type=dst)  # fmt: skip
    got = np.asarray(out).reshape(256, 256, 256, -1)  # [R, G, B, channel] of ALL_COLOURS
    # byte moves (RGB -> BGR) are exact; the rest within 1
    assert all_colours_error(got, matrix, offset) <= (0 if dst == types.BGR and src == types.RGB
                                                      else 1)  # fmt: skip


def test_gray_sources_on_all_levels():
    """GRAY -> colour: replication and per-channel tables, exact on every level."""
    gray = np.tile(np.arange(256, dtype=np.uint8), 16).reshape(64, 64, 1)
    levels = gray.reshape(-1).astype(np.float64)
    rgb = np.asarray(ndd.color_space_conversion(gray, image_type=types.GRAY,
                                                output_type=types.RGB))  # fmt: skip
    np.testing.assert_array_equal(rgb, np.repeat(gray, 3, axis=-1))
    ycc = ndd.color_space_conversion(gray, image_type=types.GRAY, output_type=types.YCbCr)
    ycc = np.asarray(ycc).reshape(-1, 3)
    np.testing.assert_array_equal(ycc[:, 0], exact(16 + levels * 219 / 255))
    assert (ycc[:, 1:] == 128).all()
