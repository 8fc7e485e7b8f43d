"""jpeg_compression_distortion: error bounds per quality and equality with a Pillow round trip."""

import io

import numpy as np
from _check import check_op, raises_at_call
from PIL import Image

import ndd_triton as ndd


def pillow_roundtrip(frame, quality):
    buffer = io.BytesIO()
    Image.fromarray(frame).save(buffer, format="JPEG", quality=quality, subsampling="4:2:0")
    return np.asarray(Image.open(io.BytesIO(buffer.getvalue())).convert("RGB"))


def ref_jpeg(x, quality=50):
    q = int(np.clip(quality, 1, 100))
    if x.ndim == 4:
        return np.stack([pillow_roundtrip(f, q) for f in x])
    return pillow_roundtrip(x, q)


def smooth_images(shapes, seed=0):
    rng = np.random.default_rng(seed)
    out = []
    for s in shapes:
        h, w = s[-3], s[-2]
        yy, xx = np.mgrid[0:h, 0:w]
        base = np.stack([xx * 200 / max(w, 1), yy * 200 / max(h, 1), (xx + yy) * 3 % 255], -1)
        noise = rng.normal(0, 4, size=s)
        out.append(np.clip(base + noise, 0, 255).astype(np.uint8))
    return out


def test_matches_pillow_roundtrip_per_sample_quality():
    samples = smooth_images([(16, 24, 3), (9, 13, 3), (1, 1, 3)])
    check_op(ndd.jpeg_compression_distortion, samples, ref_jpeg,
             per_sample={"quality": [np.int32(90), np.int32(10), np.int32(0)]}, layout="HWC")
    check_op(ndd.jpeg_compression_distortion, smooth_images([(2, 8, 8, 3)]), ref_jpeg,
             args={"quality": 30}, layout="FHWC", all_modes=False)


def test_error_grows_as_quality_drops():
    (img,) = smooth_images([(32, 48, 3)])
    errors = [np.abs(np.asarray(ndd.jpeg_compression_distortion(img, quality=q)).astype(int)
                     - img).mean() for q in (100, 50, 5)]  # fmt: skip
    assert errors[0] < errors[1] < errors[2]
    assert errors[0] < 3


def test_jpeg_errors():
    with raises_at_call(TypeError, match="jpeg_compression_distortion: input 0 has dtype f32"):
        ndd.jpeg_compression_distortion(np.zeros((4, 4, 3), np.float32))
    with raises_at_call(ValueError, match="input 0 sample 0: expected 3 channels"):
        ndd.jpeg_compression_distortion(np.zeros((4, 4, 1), np.uint8))
    with raises_at_call(ValueError, match="input 0 has layout 'CHW'"):
        ndd.jpeg_compression_distortion(ndd.as_tensor(np.zeros((3, 4, 4), np.uint8),
                                                      layout="CHW"))  # fmt: skip
