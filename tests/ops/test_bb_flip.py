"""bb_flip: reference tests/reference/bbox.py on both backends; odd boxes; errors."""

import numpy as np
import pytest
from _boxes import odd_samples, tiny_rows  # noqa: F401
from _check import check_op, raises_at_call
from reference import bbox as ref

import ndd_triton as ndd


@pytest.mark.parametrize("ltrb", [False, True])
def test_bb_flip_odd_boxes(ltrb, tiny_rows):  # noqa: F811
    check_op(ndd.bb_flip, odd_samples(ltrb), ref.bb_flip, args={"ltrb": ltrb, "vertical": 1},
             atol=1e-6)


def test_bb_flip_per_sample_flags():
    samples = odd_samples()[:4]
    check_op(ndd.bb_flip, samples, ref.bb_flip,
             args={"ltrb": True},
             per_sample={"horizontal": [0, 1, 2, -1], "vertical": [1, 0, 1, 0]}, atol=1e-6)


def test_bb_flip_shapes_single_box_and_3d():
    one = np.array([0.1, 0.2, 0.3, 0.4], np.float32)
    out = np.asarray(ndd.bb_flip(one))
    np.testing.assert_allclose(out, [0.6, 0.2, 0.3, 0.4], atol=1e-6)
    stacked = np.tile(one, (2, 3, 1))
    np.testing.assert_allclose(np.asarray(ndd.bb_flip(stacked, ltrb=True)),
                               np.tile([0.7, 0.2, 0.9, 0.4], (2, 3, 1)), atol=1e-6)
    # values are not clamped and xywh goes through the corners, as DALI (bits of DALI 2.4)
    out = np.asarray(ndd.bb_flip(np.array([[1.5, 0.2, 0.3, 0.4]], np.float32)))
    assert out.tolist() == np.array([[-0.7999999523, 0.2, 0.2999999523, 0.4000000358]],
                                    np.float32).tolist()


@pytest.mark.parametrize("backend", ["cpu", "gpu"])
def test_bb_flip_errors(backend):
    def call(x, **kw):
        t = ndd.as_tensor(x)
        return ndd.bb_flip(t.gpu() if backend == "gpu" else t, **kw)

    for width in (3, 5):
        with raises_at_call(ValueError, match=r"bb_flip: input 0 \(boxes\) sample 0: expected "
                                              rf"\(K, 4\) boxes.*got shape \(2, {width}\)"):
            call(np.zeros((2, width), np.float32))
    with raises_at_call(RuntimeError, match="bb_flip: input 0 .* must be float32; got f64"):
        call(np.zeros((2, 4)))
    if backend == "cpu":  # value checks run in the CPU kernel (docs/differences.md)
        with raises_at_call(ValueError, match="bb_flip: input 0 sample 0 box 1: NaN coordinate"):
            call(np.array([[0, 0, 1, 1], [np.nan, 0, 1, 1]], np.float32))
        with raises_at_call(ValueError, match=r"bb_flip: .*box 0: inverted box \(end < start\)"):
            call(np.array([[0.5, 0, 0.2, 1]], np.float32), ltrb=True)
        with raises_at_call(ValueError, match="negative width or height"):
            call(np.array([[0.5, 0, -0.2, 1]], np.float32))
