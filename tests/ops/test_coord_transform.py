"""coord_transform: reference on both backends (M, T, MT, scalars, per-sample, integer
outputs with rounding), and errors."""

import numpy as np
import pytest
from _boxes import tiny_rows  # noqa: F401
from _check import check_op, raises_at_call
from reference import bbox as ref

import ndd_triton as ndd


def _vectors(shapes, dtype=np.float32, seed=0):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "f":
        return [(rng.random(s) * 4 - 2).astype(dtype) for s in shapes]
    return [rng.integers(0, 200, s).astype(dtype) for s in shapes]


@pytest.mark.parametrize("args", [
    {"M": [0, 1, 1, 0]},
    {"M": [-1.341, 1.65, -0.966, -0.085], "T": [-0.809, 0.286]},
    {"M": [1, 0, 0, 1, 1, 1], "T": 5.0},
    {"MT": [1, 0, 10, 0, 1, 20]},
    {"MT": 2.0},
    {"M": 0.5},
    {"T": [1.0, -2.0]},
    {},
])
def test_coord_transform_2d(args, tiny_rows):  # noqa: F811
    samples = _vectors([(5, 2), (0, 2), (1, 2), (9, 2)])
    check_op(ndd.coord_transform, samples, ref.coord_transform, args=args, atol=1e-5,
             rtol=1e-6)


def test_coord_transform_3_to_1_and_higher_rank():
    samples = _vectors([(2, 3, 3), (1, 1, 3)])
    check_op(ndd.coord_transform, samples, ref.coord_transform,
             args={"MT": [1.224, 0.073, 1.841, -1.58]}, atol=1e-5, rtol=1e-6)


@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.int32, np.uint16])
def test_coord_transform_integer_output_rounds_and_saturates(dtype):
    samples = _vectors([(4, 2), (3, 2)], dtype)
    check_op(ndd.coord_transform, samples,
             lambda s, dtype=None, **a: ref.coord_transform(s, dtype=s.dtype, **a),
             args={"M": [1.5, -0.5, 0.25, 2.0], "T": [0.5, -3.0],
                   "dtype": getattr(ndd, np.dtype(dtype).name)})
    out = ndd.coord_transform(np.array([[1], [3], [255], [0]], np.uint8), M=0.5, dtype=ndd.uint8)
    assert np.asarray(out).reshape(-1).tolist() == [1, 2, 128, 0]  # DALI 2.4: half away


def test_coord_transform_integer_input_float_output_and_per_sample_m():
    samples = _vectors([(2, 2), (6, 2)], np.int32)
    check_op(ndd.coord_transform, samples, ref.coord_transform, args={"M": 0.5}, atol=1e-6)
    samples = _vectors([(2, 2), (3, 2)])
    check_op(ndd.coord_transform, samples, ref.coord_transform,
             per_sample={"M": [np.array([[0, 1], [1, 0]], np.float32),
                               np.array([[2, 0], [0.5, 1]], np.float32)],
                         "T": [np.array([1, 2], np.float32), np.array([0, -1], np.float32)]},
             atol=1e-5)  # fmt: skip


def test_coord_transform_errors():
    p = np.ones((2, 2), np.float32)
    with raises_at_call(ValueError, match="cannot form a matrix with 3 elements and 2 columns"):
        ndd.coord_transform(p, M=[1, 2, 3])
    with raises_at_call(ValueError, match=r"argument 'T': expected a single value or a list "
                                          r"of 3 elements"):
        ndd.coord_transform(p, M=[1, 0, 0, 1, 1, 1], T=[1, 2])
    with raises_at_call(ValueError, match="'MT' cannot be used together with 'M' or 'T'"):
        ndd.coord_transform(p, MT=[1, 0, 10, 0, 1, 20], M=[1, 0, 0, 1])
    with raises_at_call(ValueError, match="must not be an empty list"):
        ndd.coord_transform(p, M=[])
    with raises_at_call(ValueError, match="at least 2 dimensions"):
        ndd.coord_transform(np.ones(3, np.float32))
    with raises_at_call(RuntimeError, match=r"argument 'dtype'.*input's type \(f32\) or "
                                            r"float32; got u8"):
        ndd.coord_transform(p, M=0.5, dtype=ndd.uint8)
    with raises_at_call(RuntimeError, match="unsupported input type f64"):
        ndd.coord_transform(p.astype(np.float64))
    with raises_at_call(ValueError, match="same shape"):
        ndd.coord_transform(ndd.as_batch([p, p]),
                            M=ndd.as_batch([np.eye(2, dtype=np.float32),
                                            np.ones((1, 2), np.float32)]))
