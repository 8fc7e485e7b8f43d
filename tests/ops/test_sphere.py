"""sphere: independent per-pixel reference (tests/reference/remap.py) on both backends."""

import numpy as np
import pytest
from _check import check_op
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
    with pytest.raises(ValueError, match="sphere: argument 'interp_type': only INTERP_NN"):
        ndd.sphere(np.zeros((4, 5, 3), np.uint8), interp_type=3)
