"""random_resized_crop: windows drawn in infer from the RNG (deterministic per seed, the same
on both backends); the resampling is checked against the float64 reference on windows that
the arguments pin down."""

import numpy as np
import pytest
from _check import assert_close, raises_at_call, samples_of
from reference import resample as ref

import ndd_triton as ndd
from ndd_triton.ops.random_resized_crop import _window


def _image(shape, seed=0):
    return np.random.default_rng(seed).uniform(0, 255, size=shape).astype(np.float32)


@pytest.mark.parametrize("backend", ["cpu", "gpu"])
def test_rrc_whole_image_equals_resize(backend):
    x = _image((17, 23, 3))
    t = ndd.as_tensor(x, layout="HWC")
    t = t.gpu() if backend == "gpu" else t
    out = ndd.random_resized_crop(t, size=[9, 31], random_area=[1, 1],
                                  random_aspect_ratio=[23 / 17, 23 / 17])  # fmt: skip
    assert_close(samples_of(out)[0], ref.resize(x, "HWC", (9, 31)), atol=1e-3)


@pytest.mark.parametrize("backend", ["cpu", "gpu"])
def test_rrc_fallback_is_the_centred_window_in_range(backend):
    x = _image((20, 20, 3))
    t = ndd.as_tensor(x, layout="HWC")
    t = t.gpu() if backend == "gpu" else t
    # aspect 4..5 never fits a square at full area: fallback = centred 5x20 window
    out = ndd.random_resized_crop(t, size=[4, 6], random_area=[1, 1],
                                  random_aspect_ratio=[4, 5], num_attempts=3)  # fmt: skip
    expected = ref.resample(x, "HWC", {"H": (4, 7.0, 5 / 4), "W": (6, 0.0, 20 / 6)})
    assert_close(samples_of(out)[0], expected, atol=1e-3)


def test_rrc_fixed_size_window_is_an_exact_crop_and_deterministic():
    x = _image((20, 21, 1))
    batch = ndd.as_batch([x, x, x, x], layout="HWC")
    kwargs = {"size": [10, 10], "random_area": [100 / 420, 100 / 420],
              "random_aspect_ratio": [1, 1]}  # fmt: skip
    results = {}
    for backend in ("cpu", "gpu"):
        b = batch.gpu() if backend == "gpu" else batch
        results[backend] = samples_of(ndd.random_resized_crop(b, rng=ndd.random.RNG(seed=7),
                                                              **kwargs))  # fmt: skip
    offsets = []
    for got_cpu, got_gpu in zip(results["cpu"], results["gpu"], strict=False):
        assert_close(got_gpu, got_cpu, atol=1e-4, where="gpu vs cpu, same seed")
        hits = [(y, xx) for y in range(11) for xx in range(12)
                if np.allclose(got_cpu, x[y:y + 10, xx:xx + 10], atol=1e-3)]  # fmt: skip
        assert hits, "a 10x10 window resized to 10x10 must be an exact crop of the input"
        offsets.append(hits[0])
    assert len(set(offsets)) > 1, "windows should differ between samples"
    again = samples_of(ndd.random_resized_crop(batch, rng=ndd.random.RNG(seed=7), **kwargs))
    for a, b in zip(again, results["cpu"], strict=False):
        assert a.tobytes() == b.tobytes()


def test_rrc_window_law_stays_in_range():
    u = np.random.default_rng(3).uniform(size=(2000, 1, 4))
    for draws in u:
        y, x, h, w = _window(60, 80, draws, (0.1, 0.5), (0.5, 2.0))
        assert y >= 0
        assert y + h <= 60
        assert x >= 0
        assert x + w <= 80
        if (y, x, h, w) != (0, 0, 60, 80):  # an accepted draw, not the fallback
            assert 0.1 * 4800 * 0.8 <= h * w <= 0.5 * 4800 * 1.2
            assert 0.5 * 0.8 <= w / h <= 2.0 * 1.2


def test_rrc_default_rng_advances():
    x = _image((30, 30, 3))
    ndd.random.set_seed(11)
    a = np.asarray(ndd.random_resized_crop(x, size=8))
    b = np.asarray(ndd.random_resized_crop(x, size=8))
    ndd.random.set_seed(11)
    c = np.asarray(ndd.random_resized_crop(x, size=8))
    assert a.shape == (8, 8, 3)
    assert a.tobytes() == c.tobytes()
    assert a.tobytes() != b.tobytes()


def test_rrc_errors():
    x = np.zeros((8, 8, 3), np.uint8)
    with raises_at_call(TypeError, match="size"):
        ndd.random_resized_crop(x)
    with raises_at_call(ValueError, match=r"argument 'random_area' expects \[min, max\]"):
        ndd.random_resized_crop(x, size=4, random_area=[0.9, 0.1])
    with raises_at_call(ValueError, match=r"argument 'random_aspect_ratio' expects \[min, max\] "
                                         "with 0 < min"):
        ndd.random_resized_crop(x, size=4, random_aspect_ratio=[0, 1])
    with raises_at_call(ValueError, match="argument 'num_attempts' must be at least 1; got 0"):
        ndd.random_resized_crop(x, size=4, num_attempts=0)
    with raises_at_call(ValueError, match="argument 'size' expects 1 or 2 positive values"):
        ndd.random_resized_crop(x, size=[4, 4, 4])


def test_rrc_u8_batch_recipes_match_per_sample_path(monkeypatch):
    # uint8 LINEAR random crops build their border recipes in chunks of samples
    # (kernels/cpu/resize.py `_batch_recipe`); the bytes equal those of the per-sample path.
    from ndd_triton.kernels.cpu import resize as resize_kernel

    rng = np.random.default_rng(5)
    shapes = [(int(rng.integers(20, 90)), int(rng.integers(20, 90)), 3) for _ in range(70)]
    batch = ndd.as_batch([rng.integers(0, 256, s, dtype=np.uint8) for s in shapes], layout="HWC")
    results = []
    for per_sample in (False, True):
        if per_sample:
            monkeypatch.setattr(resize_kernel, "_batch_recipe", lambda arg: False)
        for antialias in (True, False):
            out = ndd.random_resized_crop(batch, size=[24, 31], antialias=antialias,
                                          rng=ndd.random.RNG(seed=3))  # fmt: skip
            results.append([s.tobytes() for s in samples_of(out)])
    assert results[0] == results[2]
    assert results[1] == results[3]
