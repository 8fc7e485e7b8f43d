"""cat, stack: references are np.concatenate / np.stack per sample (ops.md §4.9)."""

import numpy as np
import pytest
from _check import assert_close, raises_at_call, samples_of

import ndd_triton as ndd


def _data(shapes, dtype=np.uint8, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.integers(0, 250, size=s).astype(dtype) for s in shapes]


def _run(op, inputs, backend, **kwargs):
    inputs = [x.gpu() if backend == "gpu" else x for x in inputs]
    out = op(*inputs, **kwargs)
    assert out.device.device_type == backend
    return out


@pytest.mark.parametrize("backend", ["cpu", "gpu"])
@pytest.mark.parametrize(("axis", "dtype"), [(0, np.uint8), (1, np.float32), (2, np.int16),
                                             (-1, np.float64), (-3, np.uint8)])  # fmt: skip
def test_cat_ragged_three_inputs(backend, axis, dtype):
    base = [(5, 7, 3), (1, 1, 2), (30, 20, 3)]  # sample 2 needs several tiles

    def grow(shape, k):
        return tuple(v + k if d == axis % 3 else v for d, v in enumerate(shape))

    inputs = [_data([grow(s, k) for s in base], dtype, seed=k) for k in range(3)]
    batches = [ndd.as_batch(x, layout="HWC") for x in inputs]
    for mode in (ndd.EvalMode.eager, ndd.EvalMode.deferred):
        with mode:
            out = _run(ndd.cat, batches, backend, axis=axis)
            assert out.layout == "HWC"
            got = samples_of(out)
        assert out.shape == [g.shape for g in got]
        for i, g in enumerate(got):
            expected = np.concatenate([x[i] for x in inputs], axis=axis)
            assert_close(g, expected, where=f"cat[{backend}] axis {axis} sample {i}")


@pytest.mark.parametrize("backend", ["cpu", "gpu"])
@pytest.mark.parametrize("axis", [0, 1, 2, 3, -1, -3])
def test_stack_ragged(backend, axis):
    shapes = [(5, 7, 3), (1, 1, 1), (30, 20, 3)]
    inputs = [_data(shapes, np.int32, seed=k) for k in range(4)]
    out = _run(ndd.stack, [ndd.as_batch(x, layout="HWC") for x in inputs], backend, axis=axis)
    assert out.layout is None
    pos = axis if axis >= 0 else axis + 4
    for i, g in enumerate(samples_of(out)):
        assert_close(g, np.stack([x[i] for x in inputs], axis=pos), where=f"stack {axis} {i}")


@pytest.mark.parametrize("backend", ["cpu", "gpu"])
def test_cat_stack_tensor_broadcast_against_batch(backend):
    samples = _data([(2, 3), (4, 3)])
    row = np.array([[7, 8, 9]], np.uint8)
    out = _run(ndd.cat, [ndd.as_batch(samples), ndd.as_tensor(row)], backend)
    for g, s in zip(samples_of(out), samples, strict=False):
        assert_close(g, np.concatenate([s, row]))
    same = _data([(2, 3), (2, 3)])
    out = _run(ndd.stack, [ndd.as_tensor(same[0]), ndd.as_batch(same)], backend, axis=1)
    for g, s in zip(samples_of(out), same, strict=False):
        assert_close(g, np.stack([same[0], s], axis=1))


@pytest.mark.parametrize("backend", ["cpu", "gpu"])
def test_cat_stack_tensors_single_input_and_empty(backend):
    a, b = np.arange(6, dtype=np.float32).reshape(2, 3), np.zeros((0, 3), np.float32)
    out = _run(ndd.cat, [ndd.as_tensor(a), ndd.as_tensor(b)], backend)
    assert isinstance(out, ndd.Tensor)
    assert_close(samples_of(out)[0], a)
    out = _run(ndd.cat, [ndd.as_tensor(a)], backend, axis=1)
    assert_close(samples_of(out)[0], a)
    out = _run(ndd.stack, [ndd.as_tensor(a), ndd.as_tensor(a + 1)], backend, axis=2)
    assert_close(samples_of(out)[0], np.stack([a, a + 1], axis=2))


def test_cat_stack_layouts():
    hw = ndd.as_tensor(np.zeros((2, 3), np.uint8), layout="HW")
    assert ndd.cat(hw, hw, axis_name="W").shape == (2, 6)
    assert ndd.stack(hw, hw, axis=0, axis_name="N").layout == "NHW"
    assert ndd.stack(hw, hw, axis=2, axis_name="C").layout == "HWC"
    assert ndd.stack(hw, hw).layout is None
    other = ndd.as_tensor(np.zeros((2, 3), np.uint8), layout="XY")
    assert ndd.cat(hw, other).layout == "HW"


def test_cat_stack_errors():
    a = np.zeros((2, 3), np.uint8)
    with raises_at_call(ValueError, match="cat: inputs must be passed as separate positional "
                       "arguments"):  # fmt: skip
        ndd.cat([a, a])
    with raises_at_call(ValueError, match="stack: inputs must be passed as separate"):
        ndd.stack([a, a])
    with raises_at_call(RuntimeError, match="cat: All inputs must have the same type and number "
                       "of dimensions; input 0 is 2-D u8, input 1 is 2-D f32"):  # fmt: skip
        ndd.cat(a, a.astype(np.float32))
    with raises_at_call(RuntimeError, match="All inputs must have the same type and number"):
        ndd.stack(a, a[None])
    with raises_at_call(RuntimeError, match="cat: Concatenated tensors can differ in size only in "
                       "the concatenation axis \\(0\\); sample 0: input 0 has shape \\(2, 3\\), "
                       "input 1 has \\(2, 4\\)"):  # fmt: skip
        ndd.cat(a, np.zeros((2, 4), np.uint8))
    with raises_at_call(RuntimeError, match="stack: stacked tensors must have equal shapes; "
                       "sample 0"):  # fmt: skip
        ndd.stack(a, np.zeros((3, 3), np.uint8))
    with raises_at_call(RuntimeError, match="cat: argument 'axis' 2 is out of range for 2-D inputs"
                       " \\(expected -2\\.\\.1\\)"):  # fmt: skip
        ndd.cat(a, a, axis=2)
    with raises_at_call(RuntimeError, match="stack: argument 'axis' -3 is out of range for 2-D "
                       "inputs \\(expected -2\\.\\.2\\)"):  # fmt: skip
        ndd.stack(a, a, axis=-3)
    with raises_at_call(RuntimeError, match="cat: argument 'axis_name' 'C' is not an axis of the "
                       "input layout 'HW'"):  # fmt: skip
        ndd.cat(ndd.as_tensor(a, layout="HW"), a, axis_name="C")
    with raises_at_call(RuntimeError, match="stack: argument 'axis_name' must be one letter"):
        ndd.stack(a, a, axis_name="NN")


@pytest.mark.parametrize("op", [ndd.cat, ndd.stack])
def test_cat_stack_one_launch_for_many_inputs(op):
    inputs = [ndd.as_batch(_data([(3, 5), (2, 5)], seed=k)).gpu() for k in range(5)]
    with ndd.profile() as prof:
        op(*inputs).evaluate()
    (record,) = prof.records
    assert record.gpu_launches == 1


@pytest.mark.parametrize("backend", ["cpu", "gpu"])
def test_cat_first_input_empty_in_every_sample(backend):
    empty = ndd.as_batch([np.zeros((0, 3), np.int8), np.zeros((0, 3), np.int8)])
    full = _data([(2, 3), (1, 3)], np.int8)
    out = _run(ndd.cat, [empty, ndd.as_batch(full), empty], backend)
    for g, s in zip(samples_of(out), full, strict=True):
        assert_close(g, s)


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_cat_row_tiles_split_rows_and_samples(small_tiles, axis):
    inputs = [_data([(7, 13, 3), (1, 1, 3), (9, 5, 3)], np.int16, seed=k) for k in range(2)]
    out = _run(ndd.cat, [ndd.as_batch(x, layout="HWC") for x in inputs], "gpu", axis=axis)
    for i, g in enumerate(samples_of(out)):
        assert_close(g, np.concatenate([x[i] for x in inputs], axis=axis), where=f"cat {i}")
