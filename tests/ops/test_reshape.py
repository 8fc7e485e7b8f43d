"""reshape: shapes and layouts of ops.md §4.4; the data is the input's, in order."""

import numpy as np
import pytest
from _check import check_op, raises_at_call

import ndd_triton as ndd


def _data(shapes, dtype=np.uint8):
    rng = np.random.default_rng(0)
    return [rng.integers(0, 250, size=s).astype(dtype) for s in shapes]


def test_reshape_shape_with_minus_one():
    samples = _data([(4, 6), (2, 9), (30, 41)])
    check_op(ndd.reshape, samples, lambda s, shape: s.reshape(-1, 3), args={"shape": [-1, 3]})


def test_reshape_per_sample_shape():
    samples = _data([(4, 6), (2, 9)], np.float32)
    shapes = [np.array([3, 8]), np.array([6, 3])]
    check_op(ndd.reshape, samples, lambda s, shape: s.reshape(shape),
             per_sample={"shape": shapes})  # fmt: skip


def test_reshape_rel_shape_and_src_dims():
    samples = _data([(4, 6, 1), (2, 8, 1)])
    check_op(ndd.reshape, samples, lambda s, rel_shape: s.reshape(s.shape[0] // 2, -1),
             args={"rel_shape": [0.5, -1]}, all_modes=False)  # fmt: skip
    check_op(ndd.reshape, samples, lambda s, src_dims: s.reshape(1, s.shape[1], s.shape[0]),
             args={"src_dims": [-1, 1, 0]}, all_modes=False)  # fmt: skip
    check_op(ndd.reshape, samples, lambda s, rel_shape, src_dims: s.reshape(s.shape[1] * 2, -1),
             args={"rel_shape": [2, -1], "src_dims": [1, 0]}, all_modes=False)  # fmt: skip


@pytest.mark.parametrize("backend", ["cpu", "gpu"])
def test_reshape_shape_input(backend):
    samples = _data([(4, 6, 3), (2, 9, 3)])
    batch = ndd.as_batch(samples, layout="HWC")
    shapes = ndd.as_batch([np.array([24, 3], np.int32), np.array([-1, 27], np.int32)])
    if backend == "gpu":
        batch = batch.gpu()
    out = ndd.reshape(batch, shapes)
    assert out.shape == [(24, 3), (2, 27)]
    assert out.layout is None
    for got, s, shape in zip(out.cpu(), samples, [(24, 3), (2, 27)], strict=False):
        np.testing.assert_array_equal(np.asarray(got), s.reshape(shape))
    single = ndd.reshape(ndd.as_tensor(samples[0]), np.array([72]))
    np.testing.assert_array_equal(np.asarray(single), samples[0].reshape(-1))


def test_reshape_layout_rules():
    x = ndd.as_tensor(np.zeros((4, 6, 3), np.uint8), layout="HWC")
    assert ndd.reshape(x, shape=[24, 3]).layout is None
    assert ndd.reshape(x, shape=[24, 3], layout="XC").layout == "XC"
    assert ndd.reshape(x, shape=[6, 4, 3]).layout == "HWC"
    assert ndd.reshape(x, layout="ABC").layout == "ABC"
    assert ndd.reshape(x, src_dims=[1, 0, 2]).shape == (6, 4, 3)
    assert ndd.reshape(x, src_dims=[1, 0, 2]).layout == "HWC"


def test_reshape_errors():
    x = np.zeros((4, 6), np.uint8)
    with raises_at_call(RuntimeError, match="reshape: Input and output samples must occupy the "
                       "same size in bytes; sample 0: the input has 24 elements"):  # fmt: skip
        ndd.reshape(x, shape=[5, 5])
    with raises_at_call(RuntimeError, match="reshape: shape, rel_shape are mutually exclusive"):
        ndd.reshape(x, shape=[24], rel_shape=[1.0])
    with raises_at_call(RuntimeError, match="reshape: shape, shape_input are mutually exclusive"):
        ndd.reshape(x, np.array([24]), shape=[24])
    with raises_at_call(RuntimeError, match="reshape: nothing to do"):
        ndd.reshape(x)
    with raises_at_call(RuntimeError, match="reshape: argument 'shape' sample 0: only one extent "
                       "may be -1"):  # fmt: skip
        ndd.reshape(x, shape=[-1, -1])
    with raises_at_call(RuntimeError, match="argument 'shape' sample 0: cannot infer the -1 "
                       "extent"):  # fmt: skip
        ndd.reshape(x, shape=[-1, 5])
    with raises_at_call(RuntimeError, match="extents must be non-negative"):
        ndd.reshape(x, shape=[-2, -12])
    with raises_at_call(RuntimeError, match="reshape: argument 'layout' 'ABC' has 3 letters but "
                       "the output has 2 dimensions"):  # fmt: skip
        ndd.reshape(x, layout="ABC")
    with raises_at_call(RuntimeError, match="argument 'src_dims' sample 0: input dimension 1 "
                       "\\(extent 6\\) is omitted"):  # fmt: skip
        ndd.reshape(x, src_dims=[0])
    with raises_at_call(RuntimeError, match="argument 'src_dims' sample 0: 5 is not a valid"):
        ndd.reshape(x, src_dims=[5, 0])
    with raises_at_call(RuntimeError, match="argument 'rel_shape' sample 0 has 3 entries"):
        ndd.reshape(x, rel_shape=[1, 1, 1])
    with raises_at_call(RuntimeError, match="input 1 \\(shape_input\\) must be a 1-D integer"):
        ndd.reshape(x, np.array([24.0], np.float32))
    batch = ndd.as_batch([x, x])
    with raises_at_call(RuntimeError, match="every sample must get the same number of dim"):
        ndd.reshape(batch, shape=ndd.as_batch([np.array([24]), np.array([4, 6])]))


def test_reshape_one_launch_per_ragged_batch():
    batch = ndd.as_batch(_data([(3, 5), (9, 2)])).gpu()
    with ndd.profile() as prof:
        ndd.reshape(batch, shape=[-1]).evaluate()
    (record,) = prof.records
    assert record.gpu_launches == 1
