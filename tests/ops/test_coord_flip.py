"""coord_flip: reference on both backends for D = 1, 2, 3 and layouts; errors."""

import numpy as np
import pytest
from _boxes import tiny_rows  # noqa: F401
from _check import check_op, raises_at_call
from reference import bbox as ref

import ndd_triton as ndd


def _points(shapes, seed=0):
    rng = np.random.default_rng(seed)
    return [(rng.random(s) * 2 - 0.5).astype(np.float32) for s in shapes]


@pytest.mark.parametrize(("d", "layout", "args"), [
    (1, "", {"center_x": 50.0}),
    (2, "", {"flip_y": 1, "center_x": 0.581, "center_y": 0.716}),
    (2, "yx", {"flip_x": 1, "flip_y": 0}),
    (3, "zyx", {"flip_x": 0, "flip_z": 1, "center_z": 0.25}),
    (3, "", {"flip_y": 1, "flip_z": 1}),
])
def test_coord_flip_layouts(d, layout, args, tiny_rows):  # noqa: F811
    samples = _points([(5, d), (0, d), (1, d), (9, d)])
    args = dict(args, layout=layout)
    check_op(ndd.coord_flip, samples, ref.coord_flip, args=args, atol=1e-6)


def test_coord_flip_per_sample():
    samples = _points([(2, 2), (6, 2), (3, 2)])
    check_op(ndd.coord_flip, samples, ref.coord_flip,
             per_sample={"flip_x": [0, 1, 1], "flip_y": [1, 0, 1], "center_x": [0.0, 1.0, 0.3],
                         "center_y": [0.5, 0.2, -1.0]}, atol=1e-6)  # fmt: skip


def test_coord_flip_errors():
    with raises_at_call(RuntimeError, match="coord_flip: input 0 must be float32 points"):
        ndd.coord_flip(np.ones((2, 2), np.int32))
    with raises_at_call(ValueError, match=r"coord_flip: input 0 must be 2-D points"):
        ndd.coord_flip(np.ones((2,), np.float32))
    with raises_at_call(ValueError, match="D = 1..3"):
        ndd.coord_flip(np.ones((2, 4), np.float32))
    with raises_at_call(ValueError, match=r"argument 'layout': dimension 'y' not found"):
        ndd.coord_flip(np.ones((2, 2), np.float32), layout="x")
    with raises_at_call(ValueError, match=r"dimension 'x' not found"):
        ndd.coord_flip(np.ones((2, 2), np.float32), layout="ab")
