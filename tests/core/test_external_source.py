"""ndd.ExternalSource (core.md §16)."""

from __future__ import annotations

import numpy as np
import pytest

import ndd_triton as ndd


def values(out):
    return np.asarray(out).tolist()


def test_callable_source_returns_tensors():
    counter = iter(range(100))
    source = ndd.ExternalSource(lambda: np.full((2,), next(counter), np.int16))
    first, second = source(), source()
    assert isinstance(first, ndd.Tensor)
    assert first.dtype == ndd.int16
    assert values(first) == [0, 0]
    assert values(second) == [1, 1]


def test_batch_size_broadcasts_a_sample():
    source = ndd.ExternalSource(lambda: np.arange(3, dtype=np.float32))
    out = source(batch_size=4)
    assert isinstance(out, ndd.Batch)
    assert out.batch_size == 4
    assert out.torch().tolist() == [[0.0, 1.0, 2.0]] * 4


def test_batch_values_and_size_check():
    source = ndd.ExternalSource(lambda: ndd.batch([np.zeros(2), np.ones(3)]))
    out = source()
    assert isinstance(out, ndd.Batch)
    assert out.shape == [(2,), (3,)]
    assert source(batch_size=2).batch_size == 2
    with pytest.raises(ValueError, match="Expected batch size 3, got 2"):
        source(batch_size=3)


def test_iterable_ends_with_stop_iteration():
    source = ndd.ExternalSource([np.array([1]), np.array([2])])
    assert values(source()) == [1]
    assert values(source()) == [2]
    with pytest.raises(StopIteration):
        source()
    with pytest.raises(StopIteration):
        source()  # no cycling: stays exhausted


@pytest.mark.parametrize("cycle", [True, "quiet"])
def test_cycle_quiet_restarts(cycle):
    source = ndd.ExternalSource([np.array([1]), np.array([2])], cycle=cycle)
    assert [values(source())[0] for _ in range(5)] == [1, 2, 1, 2, 1]


def test_cycle_raise_stops_once_then_restarts():
    source = ndd.ExternalSource([np.array([1]), np.array([2])], cycle="raise")
    assert [values(source())[0] for _ in range(2)] == [1, 2]
    with pytest.raises(StopIteration):
        source()
    assert values(source()) == [1]


def test_generator_function_and_generator():
    def gen():
        yield np.array([7])
        yield np.array([8])

    looping = ndd.ExternalSource(gen, cycle=True)
    assert [values(looping())[0] for _ in range(3)] == [7, 8, 7]
    once = ndd.ExternalSource(gen())
    assert values(once()) == [7]
    assert values(once()) == [8]
    with pytest.raises(StopIteration):
        once()


def test_multiple_outputs_with_layout_and_dtype():
    source = ndd.ExternalSource(lambda: (np.zeros((2, 2, 3), np.uint8), [1, 2]), num_outputs=2,
                                layout=["HWC", None], dtype=[None, ndd.float32])  # fmt: skip
    image, label = source()
    assert image.layout == "HWC"
    assert image.dtype == ndd.uint8
    assert label.dtype == ndd.float32
    assert values(label) == [1.0, 2.0]
    images, labels = source(batch_size=2)
    assert images.layout == "HWC"
    assert labels.batch_size == 2


def test_gpu_device():
    source = ndd.ExternalSource(lambda: np.arange(4), device="gpu")
    assert source().device.device_type == "gpu"
    assert source(batch_size=2).device.device_type == "gpu"


@pytest.mark.parametrize(("args", "kwargs", "error", "message"), [
    ((lambda: 1,), {"cycle": True}, ValueError,
     "The argument cycle can only be specified if source is iterable."),
    (([1],), {"cycle": "often"}, ValueError, "invalid cycle 'often'; expected one of None"),
    ((3,), {}, TypeError, "source must be a callable or an iterable; got int"),
    ((lambda: 1, 0), {}, ValueError, "num_outputs must be >= 1; got 0"),
    ((lambda: 1, "2"), {}, TypeError, "num_outputs expects an int; got str"),
    ((lambda: 1, 2), {"layout": ["A", "B", "C"]}, ValueError,
     "layout has 3 entries; expected one value or 2"),
])  # fmt: skip
def test_constructor_errors(args, kwargs, error, message):
    with pytest.raises(error, match=message):
        ndd.ExternalSource(*args, **kwargs)


def test_call_errors():
    source = ndd.ExternalSource(lambda: (np.zeros(1),), num_outputs=2)
    with pytest.raises(ValueError, match="Expected 2 outputs from the source"):
        source()
    with pytest.raises(TypeError, match="takes 1 positional argument"):
        source(2)
    with pytest.raises(TypeError, match="batch_size expects an int; got float"):
        source(batch_size=1.5)
    ragged = ndd.ExternalSource(lambda: [np.zeros(2), np.zeros(3)])
    with pytest.raises(ValueError, match="different shapes"):
        ragged()


def test_captured_epoch_helper():
    source = ndd.ExternalSource([np.array([1]), np.array([2]), np.array([3])])
    with pytest.warns(UserWarning, match="no operators were called"):  # as DALI 2.4 warns
        assert [b.torch().tolist() for b in source.captured(2)] == [[[1], [1]], [[2], [2]],
                                                                    [[3], [3]]]  # fmt: skip
