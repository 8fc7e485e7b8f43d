"""bbox_paste: reference on both backends (GPU too, unlike DALI), odd boxes, errors."""

import numpy as np
import pytest
from _boxes import odd_samples, tiny_rows  # noqa: F401
from _check import check_op, raises_at_call
from reference import bbox as ref

import ndd_triton as ndd


@pytest.mark.parametrize("ltrb", [False, True])
def test_bbox_paste_odd_boxes(ltrb, tiny_rows):  # noqa: F811
    check_op(ndd.bbox_paste, odd_samples(ltrb), ref.bbox_paste,
             args={"ratio": 2.341, "paste_x": 0.399, "paste_y": 0.06, "ltrb": ltrb},
             atol=1e-6, rtol=1e-6)


def test_bbox_paste_per_sample_and_defaults():
    samples = odd_samples()[:4]
    check_op(ndd.bbox_paste, samples, ref.bbox_paste,
             per_sample={"ratio": [1.0, 3.0, 0.5, 1.25], "paste_x": [0.0, 1.0, 0.5, 0.2],
                         "paste_y": [0.3, 0.0, 1.0, 0.5]}, atol=1e-6, rtol=1e-6)
    out = np.asarray(ndd.bbox_paste(np.array([[0.1, 0.2, 0.3, 0.4]], np.float32), ratio=2))
    np.testing.assert_allclose(out, [[0.3, 0.35, 0.15, 0.2]], atol=1e-7)


def test_bbox_paste_errors():
    box = np.array([[0.1, 0.2, 0.3, 0.4]], np.float32)
    with raises_at_call(TypeError, match="bbox_paste.*'ratio'"):
        ndd.bbox_paste(box)
    for bad in (0.0, -1.0, float("nan"), 1e-311):  # (nan: the generic finite check)
        with raises_at_call(ValueError, match=r"bbox_paste: argument 'ratio' (sample 0: "
                                              r"expected a finite ratio > 0|expects a finite)"):
            ndd.bbox_paste(box, ratio=bad)
    with raises_at_call(ValueError, match=r"bbox_paste: input 0 \(boxes\) sample 0: expected "
                                          r"\(K, 4\)"):
        ndd.bbox_paste(np.zeros((2, 5), np.float32), ratio=2)
    with raises_at_call(RuntimeError, match="must be float32"):
        ndd.bbox_paste(box.astype(np.float64), ratio=2)
    with raises_at_call(ValueError, match="bbox_paste: input 0 sample 0 box 0: NaN"):
        ndd.bbox_paste(np.array([[np.nan, 0.2, 0.3, 0.4]], np.float32), ratio=2)
