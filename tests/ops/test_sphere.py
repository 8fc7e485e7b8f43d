"""sphere: independent per-pixel reference (tests/reference/remap.py) on both backends."""

import numpy as np
import pytest
from _check import check_op, raises_at_call
from reference.remap import sphere_ref

import ndd_triton as ndd


def _images(shapes, dtype=np.uint8, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.integers(0, 255, size=s).astype(dtype) for s in shapes]


@pytest.mark.parametrize("interp", [0, 1])
def test_sphere_wide_tall_ragged_mask(interp):
    samples = _images([(20, 43, 3), (13, 8, 3), (1, 1, 3), (6, 6, 1)])
    samples[3] = samples[3][..., :1]
    for group, masks in ((samples[:3], [1, 1, 0]), (samples[3:], [1])):
        check_op(
            ndd.sphere,
            group,
            sphere_ref,
            layout="HWC",
            atol=1,
            all_modes=False,
            args={"interp_type": interp, "fill_value": 9.0},
            per_sample={"mask": masks},
        )


def test_sphere_float():
    samples = [s / 255 for s in _images([(9, 14, 3)], np.float32)]
    check_op(ndd.sphere, samples, sphere_ref, layout="HWC", atol=1e-4, args={"interp_type": 1})


def test_sphere_one_launch_and_errors():
    batch = ndd.as_batch(_images([(3, 5, 3), (9, 2, 3)]), layout="HWC").gpu()
    with ndd.profile() as prof:
        ndd.sphere(batch).evaluate()
    assert prof.records[0].gpu_launches == 1
    with raises_at_call(ValueError, match="sphere: argument 'interp_type': only INTERP_NN"):
        ndd.sphere(np.zeros((4, 5, 3), np.uint8), interp_type=3)


# DALI 2.4 sphere (NN, fill_value=-1) on images whose pixel value is its flat index: the source
# pixel each output pixel reads (-1 = fill), recorded with the real DALI (tools/dali_diff.py).
_DALI_SPHERE_NN = {
    (1, 1): [[-1]],
    (1, 5): [[0, 2, 2, 3, 4]],
    (3, 8): [
        [0, 2, 11, 11, 12, 12, 5, 7],
        [8, 10, 11, 11, 12, 12, 13, 15],
        [16, 18, 11, 11, 12, 12, 21, 23],
    ],
    (4, 5): [[0, 1, 2, 3, -1], [5, 6, 7, 8, 9], [10, 11, 12, 13, 14], [15, 16, 17, 18, -1]],
    (5, 5): [
        [-1, 1, 2, 3, -1],
        [5, 6, 12, 8, 9],
        [10, 12, 12, 13, 14],
        [15, 16, 17, 18, 19],
        [-1, 21, 22, 23, -1],
    ],
    (6, 6): [
        [0, 1, 2, 3, 4, 5],
        [6, 7, 14, 15, 10, 11],
        [12, 14, 14, 15, 15, 17],
        [18, 20, 20, 21, 21, 23],
        [24, 25, 20, 21, 28, 29],
        [30, 31, 32, 33, 34, 35],
    ],
    (7, 3): [
        [0, 1, 2],
        [6, 7, 8],
        [10, 10, 10],
        [10, 10, 10],
        [10, 10, 10],
        [12, 13, 14],
        [18, 19, 20],
    ],
}


def test_sphere_nn_matches_dali_recorded():
    shapes = list(_DALI_SPHERE_NN)
    imgs = [np.arange(h * w, dtype=np.float32).reshape(h, w, 1) for h, w in shapes]
    for dev in ("cpu", "gpu"):
        out = ndd.sphere(ndd.as_batch(imgs, layout="HWC"), fill_value=-1.0, device=dev)
        for (h, w), got in zip(shapes, out.cpu(), strict=True):
            np.testing.assert_array_equal(np.asarray(got)[..., 0], _DALI_SPHERE_NN[(h, w)])


def test_sphere_1x1_nn_fill_linear_nan():
    img = ndd.as_batch([np.full((1, 1, 3), 9, np.uint8)], layout="HWC")
    imgf = ndd.as_batch([np.full((1, 1, 2), 9, np.float32)], layout="HWC")
    for dev in ("cpu", "gpu"):
        nn = ndd.sphere(img, fill_value=4.0, device=dev).cpu()
        lin = ndd.sphere(img, fill_value=4.0, interp_type=1, device=dev).cpu()
        linf = ndd.sphere(imgf, fill_value=4.0, interp_type=1, device=dev).cpu()
        assert np.asarray(nn.select(0)).tolist() == [[[4, 4, 4]]]  # DALI 2.4: fill
        assert np.asarray(lin.select(0)).tolist() == [[[0, 0, 0]]]  # DALI 2.4: NaN -> 0
        assert np.isnan(np.asarray(linf.select(0))).all()


@pytest.mark.parametrize("interp", [0, 1])
def test_sphere_gpu_row_blocks_channels_and_tails(monkeypatch, interp):
    """Tiny GPU program shapes: several row blocks, column spans and tails per sample; mixed
    channel counts in one batch."""
    from ndd_triton.kernels.gpu import water as gpu_water

    monkeypatch.setattr(gpu_water, "BLOCK_Y", 2)
    monkeypatch.setattr(gpu_water, "BLOCK_X", 4)
    monkeypatch.setattr(gpu_water, "SPAN", 8)
    mixed = _images([(11, 17, 1), (6, 9, 4)], seed=6)
    check_op(ndd.sphere, mixed, sphere_ref, layout="HWC", atol=1, all_modes=False,
             backends=("gpu",), args={"interp_type": interp, "fill_value": 3.0},
             per_sample={"mask": [1, 1]})  # fmt: skip
