"""grid_mask: float64 per-pixel reference of the spec's rule (§1.12), both backends."""

import math

import numpy as np
import pytest
from _check import check_op

import ndd_triton as ndd


def _images(shapes, dtype=np.uint8, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.integers(1, 255, size=s).astype(dtype) for s in shapes]


def grid_ref(img, tile=100, ratio=0.5, angle=0.0, shift_x=0.0, shift_y=0.0):
    out = img.copy()
    c, s = math.cos(angle), math.sin(angle)
    for y in range(img.shape[0]):
        for x in range(img.shape[1]):
            qx, qy = c * x - s * y - shift_x, s * x + c * y - shift_y
            if qx % tile < ratio * tile and qy % tile < ratio * tile:
                out[y, x] = 0
    return out


def test_grid_mask_ragged_per_sample_several_tiles():
    samples = _images([(30, 41, 3), (1, 1, 3), (9, 13, 3)])
    check_op(
        ndd.grid_mask,
        samples,
        grid_ref,
        layout="HWC",
        per_sample={
            "tile": [7, 3, 4],
            "ratio": [0.43, 0.5, 0.3],
            "angle": [0.3, 0.0, -1.1],
            "shift_x": [1.3, 0.0, 2.0],
            "shift_y": [0.7, 0.5, -3.0],
        },
    )


def test_grid_mask_hw_float_and_full_ratio():
    samples = [s.astype(np.float32) for s in _images([(11, 17), (5, 4)])]
    check_op(
        ndd.grid_mask,
        samples,
        grid_ref,
        args={"tile": 5, "ratio": 0.61, "angle": 0.2},
        all_modes=False,
    )
    img = _images([(6, 7, 1)])[0]
    assert not np.asarray(ndd.grid_mask(img, tile=3, ratio=1.0)).any()


def test_grid_mask_one_launch_and_errors():
    batch = ndd.as_batch(_images([(3, 5, 3), (9, 2, 3)]), layout="HWC").gpu()
    with ndd.profile() as prof:
        ndd.grid_mask(batch, tile=2).evaluate()
    assert prof.records[0].gpu_launches == 1
    with pytest.raises(
        RuntimeError, match="grid_mask: argument 'tile' sample 1: must be positive; got 0"
    ):
        ndd.grid_mask(
            ndd.as_batch(_images([(3, 3, 1), (3, 3, 1)])),
            tile=ndd.as_batch(np.array([2, 0], np.int32)),
        )
    with pytest.raises(
        ValueError,
        match=r"grid_mask: input 0 must be HW or HWC \(2 or 3 "
        r"dimensions\); got 4",
    ):
        ndd.grid_mask(np.zeros((2, 3, 3, 3), np.uint8))
