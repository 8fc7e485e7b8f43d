"""roi_random_crop: start ranges (ROI kept, bounds respected), spec behaviours, errors."""

import numpy as np
from _check import raises_at_call

import ndd_triton as ndd


def _range(crop, start, end, bound=None):
    crop, start, end = map(np.asarray, (crop, start, end))
    big = crop >= end - start
    lo, hi = np.where(big, end - crop, start), np.where(big, start, end - crop)
    if bound is not None:
        lo, hi = np.clip(lo, 0, np.asarray(bound) - crop), np.clip(hi, 0, np.asarray(bound) - crop)
    return lo, hi


def test_starts_cover_their_range_without_bounds():
    rng = ndd.random.RNG(seed=3)
    seen = set()
    for _ in range(60):
        s = np.asarray(
            ndd.roi_random_crop(crop_shape=[10, 3], roi_start=[3, 4], roi_shape=[4, 6], rng=rng)
        )
        lo, hi = _range([10, 3], [3, 4], [7, 10])
        assert s.dtype == np.int64
        assert (lo <= s).all()
        assert (s <= hi).all()
        seen.add(tuple(s))
    assert min(v[0] for v in seen) < 0  # may start before 0 without bounds
    assert len({v[0] for v in seen}) == 7
    assert len({v[1] for v in seen}) == 4


def test_bounds_from_in_shape_or_input_and_per_sample_args():
    out = ndd.roi_random_crop(
        crop_shape=[5, 5],
        roi_start=ndd.as_batch([np.array([0, 0]), np.array([15, 15]), np.array([7, 8])]),
        roi_end=[[20, 20]][0],
        in_shape=[20, 20],
        batch_size=3,
        rng=ndd.random.RNG(seed=1),
    )
    for s, start in zip(out, [(0, 0), (15, 15), (7, 8)], strict=False):
        lo, hi = _range([5, 5], start, [20, 20], [20, 20])
        assert (lo <= np.asarray(s)).all()
        assert (np.asarray(s) <= hi).all()
    data = ndd.as_batch([np.zeros((12, 9, 3), np.uint8), np.zeros((6, 30, 3), np.uint8)])
    out = ndd.roi_random_crop(data, crop_shape=[4, 4, 3], roi_start=[2, 1, 0], roi_shape=[1, 1, 3])
    for s, shape in zip(out, [(12, 9, 3), (6, 30, 3)], strict=False):
        s = np.asarray(s)
        assert (s >= 0).all()
        assert (s + np.array([4, 4, 3]) <= np.array(shape)).all()
        assert s[2] == 0


def test_errors():
    with raises_at_call(
        RuntimeError,
        match=r"roi_random_crop: sample 0: Cropping shape can't be "
        r"bigger than the input shape",
    ):
        ndd.roi_random_crop(
            crop_shape=[30, 3], roi_start=[0, 0], roi_shape=[1, 1], in_shape=[20, 20]
        )
    with raises_at_call(ValueError, match="give exactly one of 'roi_end' and 'roi_shape'"):
        ndd.roi_random_crop(crop_shape=[3, 3], roi_start=[0, 0], roi_shape=[1, 1], roi_end=[2, 2])
    with raises_at_call(ValueError, match=r"argument 'roi_start' sample 0: expected 2 values"):
        ndd.roi_random_crop(crop_shape=[3, 3], roi_start=[0, 0, 0], roi_shape=[1, 1])
    with raises_at_call(ValueError, match="'in_shape' cannot be combined with the positional"):
        ndd.roi_random_crop(
            np.zeros((5, 5), np.uint8),
            crop_shape=[3, 3],
            roi_start=[0, 0],
            roi_shape=[1, 1],
            in_shape=[5, 5],
        )
    with raises_at_call(TypeError, match="crop_shape"):
        ndd.roi_random_crop(roi_start=[0, 0], roi_shape=[1, 1])
