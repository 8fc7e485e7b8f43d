"""grid_mask: float64 per-pixel reference of the spec's rule (§1.12), both backends."""

import math

import numpy as np
import pytest
from _check import check_op, raises_at_call

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
    with raises_at_call(
        RuntimeError, match="grid_mask: argument 'tile' sample 1: must be positive; got 0"
    ):
        ndd.grid_mask(
            ndd.as_batch(_images([(3, 3, 1), (3, 3, 1)])),
            tile=ndd.as_batch(np.array([2, 0], np.int32)),
        )
    with raises_at_call(
        ValueError,
        match=r"grid_mask: input 0 must be HW or HWC \(2 or 3 "
        r"dimensions\); got 4",
    ):
        ndd.grid_mask(np.zeros((2, 3, 3, 3), np.uint8))


# Masked row / column runs recorded from DALI 2.4 (CPU) on a 130x130 image, angle 0: with
# integer shifts its float32 map to grid units is not periodic ((27 - 2) / 25 lands just below
# 1), and ratio 0.1 of tile 100 masks 11 columns. (tile, ratio, shift_x, shift_y): run starts
# of masked rows, masked row count, run starts of masked columns, masked column count.
RECORDED_RUNS = {
    (25, 0.2, 0.0, 2.0): ([2, 28, 53, 77, 102, 127], 28, [0, 25, 50, 75, 100, 125], 34),
    (25, 0.2, 2.0, 0.0): ([0, 25, 50, 75, 100, 125], 34, [2, 28, 53, 77, 102, 127], 28),
    (10, 0.2, 0.0, 2.0): ([2, 12, 22, 32, 42, 52, 62, 72, 82, 92, 102, 112, 122], 27,
                          [0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 110, 120], 31),
    (25, 0.2, 0.0, 2.5): ([3, 28, 53, 78, 103, 128], 27, [0, 25, 50, 75, 100, 125], 34),
    (25, 0.2, 0.0, -2.0): ([0, 24, 48, 74, 99, 123], 30, [0, 25, 50, 75, 100, 125], 34),
}


def _runs(flags):
    flags = [bool(v) for v in flags]
    return [i for i, v in enumerate(flags) if v and (i == 0 or not flags[i - 1])], sum(flags)


@pytest.mark.parametrize("backend", ["cpu", "gpu"])
@pytest.mark.parametrize("key", list(RECORDED_RUNS))
def test_grid_mask_matches_dali_float32_grid(key, backend):
    tile, ratio, sx, sy = key
    img = ndd.batch([np.ones((130, 130, 1), np.uint8)], layout="HWC")
    img = img.gpu() if backend == "gpu" else img
    out = ndd.grid_mask(img, tile=tile, ratio=ratio, shift_x=sx, shift_y=sy)
    masked = np.asarray(out.cpu().select(0))[..., 0] == 0
    rows, nrows = _runs(masked.any(axis=1))
    cols, ncols = _runs(masked.any(axis=0))
    assert (rows, nrows, cols, ncols) == RECORDED_RUNS[key]


@pytest.mark.parametrize("backend", ["cpu", "gpu"])
def test_grid_mask_ratio_tenth_of_100_masks_eleven_columns(backend):
    img = ndd.batch([np.full((5, 38, 3), 7, np.int16)], layout="HWC")
    img = img.gpu() if backend == "gpu" else img
    masked = np.asarray(ndd.grid_mask(img, ratio=0.1).cpu().select(0))[..., 0] == 0
    assert masked[0].tolist() == [True] * 11 + [False] * 27  # recorded from DALI 2.4


@pytest.mark.parametrize(
    ("shapes", "rows_kernel"),
    [
        ([(13, 17, 1), (70, 40, 1)], True),  # several row and column blocks
        ([(13, 17, 2), (9, 32, 2)], True),
        ([(9, 32, 3), (5, 16, 3)], True),  # every row 16-byte aligned
        ([(13, 17, 4), (1, 1, 4)], True),
        ([(13, 17, 5), (9, 32, 5)], False),  # more channels: the element-stream kernel
        ([(13, 17, 3), (9, 32, 1)], False),  # mixed channel counts: likewise
    ],
)
def test_grid_mask_row_and_stream_kernels(shapes, rows_kernel, monkeypatch):
    """The GPU row kernel (one channel count <= 4) and the element-stream kernel (the rest)
    agree with the reference, per-sample arguments on ragged samples."""
    from ndd_triton.kernels.gpu import grid_mask as gpu_grid_mask

    taken = []
    launch = gpu_grid_mask._rows_launch

    def spy(*args):
        taken.append(launch(*args))
        return taken[-1]

    monkeypatch.setattr(gpu_grid_mask, "_rows_launch", spy)
    check_op(
        ndd.grid_mask,
        _images(shapes, seed=5),
        grid_ref,
        layout="HWC",
        per_sample={
            "tile": [5, 4],
            "ratio": [0.4, 0.55],
            "angle": [0.7, -0.2],
            "shift_x": [0.5, 3.0],
            "shift_y": [1.5, -0.25],
        },
        all_modes=False,
    )
    assert taken
    assert all(t is rows_kernel for t in taken)
