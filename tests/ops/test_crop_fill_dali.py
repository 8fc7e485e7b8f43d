"""crop's pad fill conversion against values recorded with DALI 2.4 (kept apart from
test_crop.py, which belongs to the crop kernel work: this checks ops/crop.py's fill table)."""

import numpy as np
import pytest

import ndd_triton as ndd

_FILLS = [114.8, 114.5, -5.0, 300.0, 2.5, -2.5, 70000.0]
# input dtype, output dtype (None: the input's) -> DALI 2.4's value at a padded pixel
_RECORDED = [
    (np.uint8, None, [114, 114, 251, 44, 2, 254, 112]),
    (np.int16, ndd.uint8, [114, 114, 251, 44, 2, 254, 112]),
    (np.uint8, ndd.float32, [114.8, 114.5, -5.0, 300.0, 2.5, -2.5, 70000.0]),
    (np.float32, ndd.uint8, [114, 114, 251, 44, 2, 254, 112]),
    (np.float32, None, [114.8, 114.5, -5.0, 300.0, 2.5, -2.5, 70000.0]),
]


@pytest.mark.parametrize(("in_dtype", "out_dtype", "expected"), _RECORDED)
def test_crop_pad_fill_is_truncated_and_wrapped_like_dali(in_dtype, out_dtype, expected):
    x = ndd.as_batch([np.full((3, 4, 1), 7, in_dtype)], layout="HWC")
    for dev in ("cpu", "gpu"):
        got = []
        for f in _FILLS:
            out = ndd.crop(x, crop=[5, 4], out_of_bounds_policy="pad", fill_values=[f],
                           dtype=out_dtype, device=dev).cpu()  # fmt: skip
            got.append(np.asarray(out.select(0))[0, 0, 0].item())
        np.testing.assert_allclose(got, expected, rtol=1e-6)


@pytest.mark.parametrize(
    ("out_dtype", "expected"),
    [(ndd.float32, [114.8, -5.0, 300.0, 2.5]), (ndd.uint8, [114, 251, 44, 2]),
     (ndd.int8, [114, -5, 44, 2])],
)  # fmt: skip
def test_crop_mirror_normalize_pad_fill_matches_dali(out_dtype, expected):
    # DALI 2.4 (recorded): the fill is not normalised, only cast like C++ to the output type
    x = ndd.as_batch([np.full((3, 4, 1), 7, np.uint8)], layout="HWC")
    for dev in ("cpu", "gpu"):
        got = []
        for f in (114.8, -5.0, 300.0, 2.5):
            out = ndd.crop_mirror_normalize(x, crop=[5, 4], out_of_bounds_policy="pad",
                                            fill_values=[f], dtype=out_dtype, mean=[1.0],
                                            std=[2.0], device=dev).cpu()  # fmt: skip
            got.append(np.asarray(out.select(0)).reshape(-1)[0].item())
        np.testing.assert_allclose(got, expected, rtol=1e-6)
