"""random_crop_generator: spec examples, window invariants, determinism, errors (CPU only)."""

import math

import numpy as np
from _check import raises_at_call

import ndd_triton as ndd


def test_spec_examples():
    anchor, shape = ndd.random_crop_generator(
        np.array([100, 200]), random_area=[0.25, 0.25], random_aspect_ratio=[1, 1]
    )
    assert anchor.dtype == ndd.int32
    assert shape.dtype == ndd.int32
    np.testing.assert_array_equal(np.asarray(shape), [71, 71])
    a = np.asarray(anchor)
    assert 0 <= a[0] <= 100 - 71
    assert 0 <= a[1] <= 200 - 71
    _, shape = ndd.random_crop_generator(
        np.array([100, 200]), random_area=[1, 1], random_aspect_ratio=[1, 1]
    )
    np.testing.assert_array_equal(np.asarray(shape), [100, 100])  # impossible -> fallback


def test_windows_fit_follow_the_ranges_and_are_deterministic():
    shapes = [np.array([40, 60, 3], np.int64), np.array([17, 9, 3], np.int64)] * 20
    batch = ndd.as_batch(shapes)
    a1, s1 = ndd.random_crop_generator(batch, random_area=[0.2, 0.6], rng=ndd.random.RNG(seed=5))
    a2, s2 = ndd.random_crop_generator(batch, random_area=[0.2, 0.6], rng=ndd.random.RNG(seed=5))
    for x, y in ((a1, a2), (s1, s2)):
        assert [np.asarray(t).tolist() for t in x] == [np.asarray(t).tolist() for t in y]
    for shape, anchor, size in zip(shapes, a1, s1, strict=False):
        (y, x), (h, w) = np.asarray(anchor), np.asarray(size)
        assert y >= 0
        assert y + h <= shape[0]
        assert x >= 0
        assert x + w <= shape[1]
        area = h * w / (shape[0] * shape[1])
        fallback = (h, w) in (
            (shape[0], shape[1]),
            (shape[0], round(shape[0] * 4 / 3)),
            (round(shape[1] / (4 / 3)), shape[1]),
        )
        assert fallback or (0.15 < area < 0.7 and 0.7 < w / h < 1.45 and math.isfinite(area))


def test_errors():
    with raises_at_call(
        ValueError,
        match=r"random_crop_generator: input 0 sample 0: expected a "
        r"shape \(H, W\) or \(H, W, C\)",
    ):
        ndd.random_crop_generator(np.array([1, 2, 3, 4]))
    with raises_at_call(TypeError, match="input 0 must be an int32/int64 shape; got f32"):
        ndd.random_crop_generator(np.array([10.0, 20.0], np.float32))
    with raises_at_call(ValueError, match="argument 'random_aspect_ratio' expects"):
        ndd.random_crop_generator(np.array([10, 20]), random_aspect_ratio=[2, 1])
    with raises_at_call(ValueError, match="not supported"):
        ndd.random_crop_generator(np.array([10, 20]), device="gpu")
