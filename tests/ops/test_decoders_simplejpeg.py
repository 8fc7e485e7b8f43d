"""The simplejpeg fast path of the CPU decoders: bit-exact with Pillow, damaged data left to
Pillow, and decoders.image bound to batches of plain RGB JPEGs (one libjpeg call per sample),
on the CPU backend and in the GPU kernel's host decode alike."""

from __future__ import annotations

import numpy as np
import pytest
from _check import samples_of
from _decoder_data import (
    ANY,
    BGR,
    GRAY,
    RGB,
    YCBCR,
    _pixels,
    photo_jpegs,
    ref_decode,
    with_orientation,
)

import ndd_triton as ndd


@pytest.mark.parametrize("output_type", [RGB, BGR, YCBCR, ANY, GRAY])
@pytest.mark.parametrize("orientation", [1, 6])
def test_fast_jpeg_path_matches_pillow(files, monkeypatch, output_type, orientation):
    """The optional simplejpeg path (same libjpeg-turbo settings) is bit-exact with Pillow's,
    full decodes into the output and windows alike; without simplejpeg both sides are Pillow."""
    from ndd_triton.decoders import _pillow

    jpegs = [files["jpeg420"], files["jpeg444"], files["jpeg_gray"], *photo_jpegs(),
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


def _rgb_photos():
    from ndd_triton.decoders import _pillow

    return [d for d in photo_jpegs() if _pillow.read_info(d).mode == "RGB"]


@pytest.fixture
def direct_calls(monkeypatch):
    """Counts the per-sample libjpeg calls of the bound `decoders.image` kernel. The GPU decoder
    is held on its host path (decode + one upload), which these tests are about: on real CUDA
    with nvImageCodec it would decode on the device (tests/ops/test_decoders_device_codec.py)."""
    from ndd_triton.decoders import _pillow
    from ndd_triton.kernels.gpu import decoders as gpu_decoders

    monkeypatch.setattr(gpu_decoders, "_device_codec_wanted", lambda out: False)

    calls: list[int] = []
    real = _pillow.direct_rgb_decoder()

    def counting(data, colorspace, buffer):
        calls.append(len(data))
        return real(data, colorspace, buffer=buffer)

    monkeypatch.setattr(_pillow, "direct_rgb_decoder", lambda: counting)
    return calls


@pytest.mark.parametrize("device", ["cpu", "gpu"])
@pytest.mark.parametrize("mode", ["eager", "sync_cpu"])
@pytest.mark.parametrize("size", ["small", "pool"])
def test_a_batch_of_plain_jpegs_is_one_libjpeg_call_per_sample(files, direct_calls, mode, size,
                                                               device):  # fmt: skip
    """decoders.image binds to a batch whose every image is a plain RGB JPEG: one libjpeg call
    per sample, pixels bit-exact with Pillow; pooled (pipelined in eager) or inline."""
    jpegs = [files["jpeg420"], files["jpeg444"], *(_rgb_photos() if size == "pool" else [])]
    with getattr(ndd.EvalMode, mode), ndd.EvalContext(num_threads=2):
        out = ndd.decoders.image(ndd.as_batch(jpegs), device=device).evaluate()
    assert len(direct_calls) == len(jpegs)
    for i, (got, data) in enumerate(zip(samples_of(out), jpegs, strict=True)):
        np.testing.assert_array_equal(got, ref_decode(data), err_msg=f"sample {i}")


@pytest.mark.parametrize("device", ["cpu", "gpu"])
@pytest.mark.parametrize("other", ["png", "jpeg_gray", "exif6", "bgr", "float"])
def test_batches_the_binding_does_not_cover_take_the_general_path(files, direct_calls, other,
                                                                  device):  # fmt: skip
    """One image (or an argument) outside the direct RGB case sends the whole batch through
    the general per-sample kernel, with the same pixels as Pillow."""
    extra = {"png": files["png"], "jpeg_gray": files["jpeg_gray"],
             "exif6": with_orientation(_pixels(12, 20, 3, 12), 6, "JPEG")}.get(other)  # fmt: skip
    jpegs = [files["jpeg420"], files["jpeg444"], *([extra] if extra is not None else [])]
    kw = {"bgr": {"output_type": BGR}, "float": {"dtype": ndd.float32}}.get(other, {})
    out = ndd.decoders.image(ndd.as_batch(jpegs), device=device, **kw).evaluate()
    assert direct_calls == []
    for i, (got, data) in enumerate(zip(samples_of(out), jpegs, strict=True)):
        ref = ref_decode(data, kw.get("output_type", RGB))
        ref = ref.astype(np.float32) / 255 if other == "float" else ref
        np.testing.assert_allclose(got, ref, atol=1e-6, err_msg=f"sample {i}")


@pytest.mark.parametrize("device", ["cpu", "gpu"])
@pytest.mark.parametrize("mode", ["eager", "sync_cpu"])
def test_a_damaged_jpeg_in_a_bound_batch_fails_naming_it(direct_calls, mode, device):
    """A JPEG whose header parses but whose data is cut fails in the bound kernel as in the
    general one (libjpeg reports, Pillow decides, the message names the sample); the next
    batch decodes."""
    photos = _rgb_photos()
    jpegs = [*photos, photos[0][: len(photos[0]) * 2 // 3]]
    with getattr(ndd.EvalMode, mode), ndd.EvalContext(num_threads=2):
        with pytest.raises(RuntimeError, match=rf"decoders.image: sample {len(jpegs) - 1}: "):
            ndd.decoders.image(ndd.as_batch(jpegs), device=device).evaluate()
        assert len(direct_calls) == len(jpegs)
        again = ndd.decoders.image(ndd.as_batch(jpegs[:-1]), device=device).evaluate()
    for got, data in zip(samples_of(again), jpegs, strict=False):
        np.testing.assert_array_equal(got, ref_decode(data))
