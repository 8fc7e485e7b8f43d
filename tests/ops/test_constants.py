"""zeros, ones, full, zeros_like, ones_like, full_like (core.md §18) on both backends."""

import numpy as np
import pytest
from _check import assert_close, check_op, raises_at_call, samples_of

import ndd_triton as ndd

BACKENDS = ["cpu", "gpu"]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(("op", "value"), [("zeros", 0), ("ones", 1)])
def test_zeros_ones_shapes_and_dtypes(backend, op, value):
    fn = getattr(ndd, op)
    scalar = fn(device=backend)
    assert isinstance(scalar, ndd.Tensor)
    assert (scalar.dtype, scalar.shape) == (ndd.int32, ())
    assert_close(samples_of(scalar)[0], np.array(value, np.int32))
    out = fn(shape=[2, 3], dtype=ndd.float16, layout="HW", device=backend)
    assert (out.layout, out.device.device_type) == ("HW", backend)
    assert_close(samples_of(out)[0], np.full((2, 3), value, np.float16))
    batch = fn(batch_size=3, shape=7, dtype=ndd.uint8, device=backend)
    assert isinstance(batch, ndd.Batch)
    assert batch.shape == [(7,)] * 3
    for got in samples_of(batch):
        assert_close(got, np.full(7, value, np.uint8))
    shapes = ndd.as_batch([np.array([2, 1]), np.array([1, 40]), np.array([0, 3])])
    ragged = fn(shape=shapes, dtype=ndd.bool, device=backend)
    for got, shape in zip(samples_of(ragged), [(2, 1), (1, 40), (0, 3)], strict=False):
        assert_close(got, np.full(shape, value, np.bool_))


@pytest.mark.parametrize("backend", BACKENDS)
def test_full_broadcasts_the_fill_value(backend):
    fill = np.array([1, 2, 3], np.int16)
    out = ndd.full(ndd.as_tensor(fill).gpu() if backend == "gpu" else fill, shape=[2, 3])
    assert out.dtype == ndd.int16
    assert_close(samples_of(out)[0], np.broadcast_to(fill, (2, 3)))
    assert ndd.full(5, device=backend).dtype == ndd.int32
    assert ndd.full(2.5, device=backend).dtype == ndd.float32
    fills = [np.array([[1.5], [2.5], [3.5]], np.float32), np.array([[-1.0]], np.float32)]
    check_op(lambda b, **a: ndd.full(b, shape=[2, 3, 4]), fills,
             lambda s: np.broadcast_to(s, (2, 3, 4)).copy(), all_modes=False)  # fmt: skip
    check_op(ndd.full, fills, lambda s: s.copy(), all_modes=False)  # no shape: the fill itself


@pytest.mark.parametrize("backend", BACKENDS)
def test_zeros_ones_like(backend):
    samples = [np.ones((2, 3), np.int16), np.ones((1, 5), np.int16)]
    for op, value in ((ndd.zeros_like, 0), (ndd.ones_like, 1)):
        check_op(op, samples, lambda s, v=value: np.full_like(s, v), layout="HW",
                 backends=[backend], all_modes=False)  # fmt: skip
        out = op(ndd.as_batch(samples, layout="HW"), dtype=ndd.float32, device=backend)
        assert (out.dtype, out.layout) == (ndd.float32, "HW")
        for got, s in zip(samples_of(out), samples, strict=False):
            assert_close(got, np.full(s.shape, value, np.float32))


@pytest.mark.parametrize("backend", BACKENDS)
def test_full_like_converts_and_broadcasts(backend):
    samples = [np.zeros((2, 3), np.uint8), np.zeros((30, 41), np.uint8)]
    check_op(lambda b: ndd.full_like(b, 300), samples, lambda s: np.full_like(s, 255),
             backends=[backend], all_modes=False)  # fmt: skip
    check_op(lambda b: ndd.full_like(b, -2.5), [s.astype(np.int32) for s in samples],
             lambda s: np.full_like(s, -3), backends=[backend], all_modes=False)  # fmt: skip
    row = np.array([0.4, 1.5, 2.5], np.float32)

    def ref(s):
        return np.broadcast_to(np.array([0, 2, 3], np.uint8), s.shape).copy()

    check_op(lambda b: ndd.full_like(b, row), [np.zeros((2, 3), np.uint8), np.zeros((1, 3),
             np.uint8)], ref, backends=[backend], all_modes=False)  # fmt: skip


def test_constants_errors():
    with raises_at_call(RuntimeError, match="full: sample 0: Shapes 2 x 3 and 2 can't be "
                       "broadcast"):  # fmt: skip
        ndd.full(np.array([1, 2]), shape=[2, 3])
    with raises_at_call(RuntimeError, match="full_like: sample 0: Shapes 2 x 3 and 4 can't be"):
        ndd.full_like(np.zeros((2, 3)), np.arange(4))
    with raises_at_call(TypeError, match="unexpected keyword argument 'dtype'"):
        ndd.full(1, shape=[2], dtype=ndd.float32)
    with raises_at_call(ValueError, match="zeros: argument 'layout' 'HWC' has 3 letters but the "
                       "output has 2 dimensions"):  # fmt: skip
        ndd.zeros(shape=[2, 3], layout="HWC")
    with raises_at_call(ValueError, match="ones: argument 'shape' sample 0: extents must be "
                       "non-negative; got \\(-1, 2\\)"):  # fmt: skip
        ndd.ones(shape=[-1, 2])
    with raises_at_call(ValueError, match="argument 'shape' must give every sample the same "
                       "number of dimensions"):  # fmt: skip
        ndd.zeros(shape=ndd.as_batch([np.array([1]), np.array([1, 2])]))
    with raises_at_call(TypeError, match="zeros_like: argument 'dtype' is bfloat16"):
        ndd.zeros_like(np.zeros(2), dtype=ndd.bfloat16)
    with raises_at_call(TypeError, match="zeros: argument 'dtype' is bfloat16"):
        ndd.zeros(dtype=ndd.bfloat16)


@pytest.mark.parametrize("name", ["zeros", "ones", "full", "zeros_like", "ones_like",
                                  "full_like"])  # fmt: skip
def test_constants_one_launch_per_ragged_batch(name):
    like = ndd.as_batch([np.zeros((3, 5), np.uint8), np.zeros((9, 2), np.uint8)]).gpu()
    calls = {
        "zeros": lambda: ndd.zeros(
            shape=ndd.as_batch([np.array([3]), np.array([40])]), device="gpu"
        ),
        "ones": lambda: ndd.ones(batch_size=3, shape=[2, 2], device="gpu"),
        "full": lambda: ndd.full(ndd.as_batch([np.array([1]), np.array([2])]).gpu(), shape=[4]),
        "zeros_like": lambda: ndd.zeros_like(like),
        "ones_like": lambda: ndd.ones_like(like),
        "full_like": lambda: ndd.full_like(like, ndd.as_tensor(np.array(7.6)).gpu()),
    }
    with ndd.profile() as prof:
        calls[name]().evaluate()
    assert [r.gpu_launches for r in prof.records if r.op == name] == [1]
