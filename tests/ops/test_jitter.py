"""jitter: reference built from the Philox stream (draws base + 2p, base + 2p + 1 per pixel),
both backends bit-identical, offset bounds, determinism, mask, errors."""

import numpy as np
import pytest
from _check import raises_at_call

import ndd_triton as ndd
from ndd_triton.random._philox import element_draws


def _images(shapes, dtype=np.uint8, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.integers(1, 255, size=s).astype(dtype) for s in shapes]


def jitter_ref(img, key, base, degree, fill):
    h, w, _ = img.shape
    out = np.empty_like(img)
    draws = element_draws(key, base, h * w, 2)
    for p in range(h * w):
        dx = (int(draws[p, 0]) >> 8) * (degree + 1) // 2**24 - degree // 2
        dy = (int(draws[p, 1]) >> 8) * (degree + 1) // 2**24 - degree // 2
        y, x = divmod(p, w)
        sx, sy = x + dx, y + dy
        out[y, x] = img[sy, sx] if 0 <= sx < w and 0 <= sy < h else fill
    return out


@pytest.mark.parametrize(("degree", "dtype"), [(2, np.uint8), (5, np.float32)])
def test_jitter_matches_reference_on_both_backends(degree, dtype):
    samples = _images([(20, 30, 3), (1, 1, 3), (5, 7, 3)], dtype)
    key, bases = ndd.random.RNG(seed=11).reserve(
        np.array([s.shape[0] * s.shape[1] * 2 for s in samples])
    )
    expected = [jitter_ref(s, key, int(b), degree, 9) for s, b in zip(samples, bases, strict=False)]
    for backend in ("cpu", "gpu"):
        batch = ndd.as_batch(samples, layout="HWC")
        batch = batch.gpu() if backend == "gpu" else batch
        out = ndd.jitter(batch, nDegree=degree, fill_value=9.0, rng=ndd.random.RNG(seed=11))
        assert out.device.device_type == backend
        for got, exp in zip(out.cpu(), expected, strict=False):
            np.testing.assert_array_equal(np.asarray(got), exp)


def test_jitter_offsets_bounded_mask_and_determinism():
    img = np.arange(12 * 15, dtype=np.float32).reshape(12, 15, 1)
    out = np.asarray(ndd.jitter(img, nDegree=4, fill_value=-1.0, rng=ndd.random.RNG(seed=2)))
    ys, xs = np.mgrid[0:12, 0:15]
    src = out[..., 0]
    inside = src >= 0
    sy, sx = np.divmod(src[inside].astype(int), 15)
    assert (np.abs(sy - ys[inside]) <= 2).all()
    assert (np.abs(sx - xs[inside]) <= 2).all()
    assert len(np.unique(sx - xs[inside])) == 5  # all of -2..2 occur
    again = np.asarray(ndd.jitter(img, nDegree=4, fill_value=-1.0, rng=ndd.random.RNG(seed=2)))
    np.testing.assert_array_equal(out, again)
    batch = ndd.as_batch([img, img], layout="HWC")
    res = ndd.jitter(batch.gpu(), mask=ndd.as_batch(np.array([0, 1], np.int32)))
    np.testing.assert_array_equal(np.asarray(res.cpu().select(0)), img)
    with ndd.profile() as prof:
        ndd.jitter(batch.gpu()).evaluate()
    assert prof.records[0].gpu_launches == 1


def test_jitter_errors():
    img = np.zeros((4, 5, 3), np.uint8)
    with raises_at_call(ValueError, match="jitter: argument 'nDegree' must be non-negative"):
        ndd.jitter(img, nDegree=-1)
    with raises_at_call(ValueError, match="jitter: argument 'interp_type': only INTERP_NN"):
        ndd.jitter(img, interp_type=1)
    with raises_at_call(ValueError, match="jitter: input 0 has layout 'CHW'"):
        ndd.jitter(ndd.as_tensor(img, layout="CHW"))


def test_jitter_gpu_row_blocks_channels_and_tails(monkeypatch):
    """Tiny GPU program shapes (several row blocks, column spans and tails per sample), one
    channel count per batch (constexpr) and mixed counts; exact against the reference."""
    from ndd_triton.kernels.gpu import jitter as gpu_jitter

    monkeypatch.setattr(gpu_jitter, "BLOCK_Y", 2)
    monkeypatch.setattr(gpu_jitter, "BLOCK_X", 4)
    monkeypatch.setattr(gpu_jitter, "SPAN", 8)
    samples = _images([(9, 19, 4), (5, 11, 1), (3, 2, 2)], seed=4)
    for group in (samples[:1], samples, samples[1:]):
        if len(group) == 2:  # the int64 address path
            monkeypatch.setattr(gpu_jitter, "I32_LIMIT", 1)
        sizes = np.array([s.shape[0] * s.shape[1] * 2 for s in group])
        key, bases = ndd.random.RNG(seed=3).reserve(sizes)
        expected = [jitter_ref(s, key, int(b), 3, 5) for s, b in zip(group, bases, strict=True)]
        batch = ndd.as_batch(group, layout="HWC").gpu()
        out = ndd.jitter(batch, nDegree=3, fill_value=5.0, rng=ndd.random.RNG(seed=3))
        for got, exp in zip(out.cpu(), expected, strict=True):
            np.testing.assert_array_equal(np.asarray(got), exp)
