"""color_space_conversion: float64 references from the BT.601 formulas of spec ops.md §2.9."""

import numpy as np
import pytest
from _check import check_op, raises_at_call

import ndd_triton as ndd
from ndd_triton import types

RGB, BGR, GRAY, YCBCR = types.RGB, types.BGR, types.GRAY, types.YCbCr


def _round(v):
    return np.clip(np.floor(v + 0.5), 0, 255).astype(np.uint8)


def to_rgb(x, space):
    x = x.astype(np.float64)
    if space == RGB:
        return x
    if space == BGR:
        return x[..., ::-1]
    if space == GRAY:
        return np.repeat(x, 3, axis=-1)
    y, cb, cr = x[..., 0] - 16, x[..., 1] - 128, x[..., 2] - 128
    m = np.array([[65.481, 128.553, 24.966], [-37.797, -74.203, 112.0],
                  [112.0, -93.786, -18.214]]) / 255  # fmt: skip
    return np.stack([y, cb, cr], axis=-1) @ np.linalg.inv(m).T


def ref_convert(x, image_type, output_type):
    if image_type == GRAY and output_type == YCBCR:
        g = x[..., 0].astype(np.float64)
        return _round(np.stack([16 + 219 * g / 255, 128 + 0 * g, 128 + 0 * g], axis=-1))
    if image_type == YCBCR and output_type == GRAY:
        return _round((x[..., :1].astype(np.float64) - 16) * 255 / 219)
    rgb = to_rgb(x, image_type)
    r, g, b = rgb[..., 0], rgb[..., 1], rgb[..., 2]
    if output_type == RGB:
        return _round(rgb)
    if output_type == BGR:
        return _round(rgb[..., ::-1])
    if output_type == GRAY:
        return _round(0.299 * r + 0.587 * g + 0.114 * b)[..., None]
    return _round(np.stack([16 + (65.481 * r + 128.553 * g + 24.966 * b) / 255,
                            128 + (-37.797 * r - 74.203 * g + 112.0 * b) / 255,
                            128 + (112.0 * r - 93.786 * g - 18.214 * b) / 255], axis=-1))


def images(channels, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.integers(0, 256, size=(h, w, channels), dtype=np.uint8)
            for h, w in [(4, 5), (1, 1), (21, 50)]]  # fmt: skip


PAIRS = [(a, b) for a in (RGB, BGR, GRAY, YCBCR) for b in (RGB, BGR, GRAY, YCBCR) if a != b]


@pytest.mark.parametrize(("src", "dst"), PAIRS, ids=lambda t: t.name)
def test_conversions(src, dst):
    exact = (src, dst) in [(RGB, BGR), (BGR, RGB), (GRAY, RGB), (GRAY, BGR)]
    check_op(ndd.color_space_conversion, images(1 if src == GRAY else 3),
             lambda s, **a: ref_convert(s, **a), args={"image_type": src, "output_type": dst},
             layout="HWC", atol=0 if exact else 1, all_modes=False)  # fmt: skip


def test_spec_examples_and_sequences():
    px = np.array([[[0, 0, 0], [255, 255, 255], [255, 0, 0], [0, 255, 0], [0, 0, 255],
                    [100, 50, 200]]], np.uint8)  # fmt: skip
    out = ndd.color_space_conversion(px, image_type=RGB, output_type=YCBCR)
    assert np.asarray(out).tolist() == [[[16, 128, 128], [235, 128, 128], [81, 90, 240],
                                         [145, 54, 34], [41, 240, 110], [86, 186, 139]]]
    ycc = np.array([[[0, 0, 0], [255, 255, 255]]], np.uint8)
    out = ndd.color_space_conversion(ycc, image_type=YCBCR, output_type=RGB)
    assert np.asarray(out).tolist() == [[[0, 136, 0], [255, 125, 255]]]
    seq = images(3)[2].reshape(2, 21, 25, 3)
    check_op(ndd.color_space_conversion, [seq], lambda s, **a: ref_convert(s, **a),
             args={"image_type": RGB, "output_type": GRAY}, layout="FHWC", atol=1,
             all_modes=False)  # fmt: skip


def test_color_space_conversion_errors():
    rgb = np.zeros((2, 2, 3), np.uint8)
    conv = ndd.color_space_conversion
    with raises_at_call(TypeError, match="missing 2 required keyword-only arguments"):
        conv(rgb)
    with raises_at_call(TypeError, match="color_space_conversion: input 0 has dtype f32; only "
                                        "uint8"):  # fmt: skip
        conv(rgb.astype(np.float32), image_type=RGB, output_type=BGR)
    with raises_at_call(ValueError, match="sample 1: image_type GRAY expects 1 channel"):
        conv(ndd.as_batch([np.zeros((2, 2, 1), np.uint8), rgb]), image_type=GRAY,
             output_type=RGB)  # fmt: skip
    with raises_at_call(ValueError, match="from RGB to RGB is not supported"):
        conv(rgb, image_type=RGB, output_type=RGB)
    with raises_at_call(ValueError, match="from RGB to ANY_DATA is not supported"):
        conv(rgb, image_type=RGB, output_type=types.ANY_DATA)
    with raises_at_call(ValueError, match="argument 'output_type' must be one of"):
        conv(rgb, image_type=RGB, output_type=7)
