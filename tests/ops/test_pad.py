"""pad: reference pads each sample to extents computed from the whole batch (NumPy)."""

import numpy as np
import pytest
from _check import check_op, raises_at_call, samples_of

import ndd_triton as ndd


def ref_extents(shapes, axes=None, shape=None, align=None):
    """Padded extents per sample: batch max / max(own, shape), then rounded up to align."""
    shapes = np.array(shapes)
    ndim = shapes.shape[1]
    axes = list(range(ndim)) if axes is None else [a % ndim for a in np.atleast_1d(axes)]
    out = shapes.copy()
    for i in range(len(shapes)):
        for k, a in enumerate(axes):
            s = -1 if shape is None else np.broadcast_to(shape, (len(axes),))[k]
            e = shapes[:, a].max() if s == -1 else max(shapes[i, a], s)
            if align is not None:
                al = np.broadcast_to(align, (len(axes),))[k]
                e = -(-e // al) * al
            out[i, a] = e
    return out


def ref_pad(sample, batch, axes=None, shape=None, align=None, fill_value=0.0):
    index = next(i for i, s in enumerate(batch) if s is sample or np.array_equal(s, sample))
    extents = ref_extents([s.shape for s in batch], axes, shape, align)[index]
    fill = np.array(int(fill_value)).astype(sample.dtype) if sample.dtype.kind in "iu" else \
        np.array(fill_value, dtype=sample.dtype)  # fmt: skip
    out = np.full(extents, fill, dtype=sample.dtype)
    out[tuple(slice(0, e) for e in sample.shape)] = sample
    return out


def _samples(shapes, dtype=np.uint8, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.integers(0, 100, size=s).astype(dtype) for s in shapes]


RAGGED = [(5, 7, 3), (1, 1, 3), (0, 4, 3), (13, 40, 3)]  # last: largest (Tensor check uses it)


@pytest.mark.parametrize("dtype", [np.uint8, np.float32, np.int16])
def test_pad_all_axes_ragged(dtype):
    samples = _samples(RAGGED, dtype)
    check_op(
        ndd.pad,
        samples,
        lambda s, **a: ref_pad(s, samples, **a),
        args={"fill_value": 7},
        layout="HWC",
    )


@pytest.mark.parametrize(
    "args",
    [
        {"axes": [0]},
        {"axes": [-2], "shape": [50]},
        {"axes": [0, 1], "shape": [20, -1], "fill_value": -1},
        {"axes": [1], "shape": [1], "align": [9]},
        {"align": [8, 8, 1]},
    ],
)
def test_pad_args(args):
    samples = _samples([(5, 7, 3), (2, 9, 3), (13, 40, 3)])
    check_op(
        ndd.pad,
        samples,
        lambda s, **a: ref_pad(s, samples, **a),
        args=args,
        layout="HWC",
        all_modes=False,
    )


def test_pad_axis_names_matches_axes():
    samples = _samples([(4, 2, 3), (3, 5, 3)])
    check_op(
        ndd.pad,
        samples,
        lambda s, **a: ref_pad(s, samples, axes=[1], align=4),
        args={"axis_names": "W", "align": 4},
        layout="HWC",
        all_modes=False,
    )


def test_pad_per_sample_args():
    samples = _samples([(4, 6), (7, 3), (2, 2)])
    per_sample = {
        "shape": [np.array([5, 5]), np.array([1, 9]), np.array([-1, -1])],
        "fill_value": [np.float32(3), np.float32(300), np.float32(-1)],
        "align": [np.array([2]), np.array([1]), np.array([4])],
    }
    check_op(ndd.pad, samples, lambda s, **a: ref_pad(s, samples, **a), per_sample=per_sample)


@pytest.mark.parametrize("backend", ["cpu", "gpu"])
def test_pad_spec_examples(backend):
    samples = [np.array([3, 4, 2, 5, 4], np.float32), np.array([2, 2], np.float32),
               np.array([3, 199, 5], np.float32)]  # fmt: skip
    batch = ndd.as_batch(samples)
    batch = batch.gpu() if backend == "gpu" else batch

    def lengths(**kwargs):
        return [len(s) for s in samples_of(ndd.pad(batch, fill_value=-1, **kwargs))]

    assert lengths() == [5, 5, 5]
    assert lengths(shape=7) == [7, 7, 7]
    assert lengths(shape=2) == [5, 2, 3]
    assert lengths(align=4) == [8, 8, 8]
    assert lengths(align=4, shape=1) == [8, 4, 4]
    out = samples_of(ndd.pad(batch, fill_value=-1))
    np.testing.assert_array_equal(out[1], [2, 2, -1, -1, -1])
    two_d = ndd.as_batch([np.zeros((2, 3), np.uint8), np.zeros((1, 5), np.uint8)])
    two_d = two_d.gpu() if backend == "gpu" else two_d
    assert ndd.pad(two_d).shape == [(2, 5), (2, 5)]
    assert ndd.pad(two_d, axes=0).shape == [(2, 3), (2, 5)]
    assert ndd.pad(two_d, shape=(4,)).shape == [(4, 4), (4, 5)]
    assert ndd.pad(two_d, shape=(4, -1)).shape == [(4, 5), (4, 5)]


@pytest.mark.parametrize("backend", ["cpu", "gpu"])
@pytest.mark.parametrize(
    ("dtype", "fill", "expected"),
    [
        (np.uint8, 300, 44),
        (np.uint8, -1, 255),
        (np.int8, 200, -56),
        (np.uint16, 70000.7, 4464),
        (np.float32, 2.5, 2.5),
        (np.bool_, 2.0, True),
    ],
)
def test_pad_fill_value_wraps_around(backend, dtype, fill, expected):
    batch = ndd.as_batch([np.zeros(1, dtype), np.zeros(3, dtype)])
    batch = batch.gpu() if backend == "gpu" else batch
    out = samples_of(ndd.pad(batch, fill_value=fill))[0]
    assert out.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(out, np.array([0, expected, expected]).astype(dtype))


def test_pad_tensor_input_is_a_batch_of_one():
    x = np.arange(12, dtype=np.uint8).reshape(2, 6)
    assert np.array_equal(np.asarray(ndd.pad(x)), x)
    assert ndd.pad(x, align=4).shape == (4, 8)


def test_pad_one_launch_per_ragged_batch():
    batch = ndd.as_batch(_samples([(3, 5, 3), (9, 2, 3), (4, 4, 3), (1, 1, 3)]),
                         layout="HWC").gpu()  # fmt: skip
    with ndd.profile() as prof:
        ndd.pad(batch, fill_value=1).evaluate()
    (record,) = prof.records
    assert record.gpu_launches == 1


def test_pad_errors():
    batch = ndd.as_batch([np.zeros((2, 3), np.uint8), np.zeros((1, 5), np.uint8)], layout="HW")
    with raises_at_call(
        RuntimeError, match="pad: arguments 'axes' and 'axis_names' are mutually exclusive"
    ):
        ndd.pad(batch, axes=[0], axis_names="H")
    with raises_at_call(
        IndexError,
        match=r"pad: argument 'axes': Axis index out of range: 2 not in"
        r" range \[-2,1\]",
    ):
        ndd.pad(batch, axes=[2])
    with raises_at_call(
        ValueError,
        match="pad: argument 'shape' sample 0: expected 1 or 2 values "
        r"\(one per padded axis\); got 3",
    ):
        ndd.pad(batch, shape=[1, 2, 3])
    with raises_at_call(ValueError, match="pad: argument 'shape' sample 1: extents must be -1"):
        ndd.pad(batch, shape=ndd.as_batch([np.array([1]), np.array([-5])]))
    with raises_at_call(
        ValueError, match="pad: argument 'align' sample 0: alignment must be positive; got 0"
    ):
        ndd.pad(batch, align=0)
    with raises_at_call(ValueError, match="pad: argument 'axes' must be the same for every sample"):
        ndd.pad(batch, axes=ndd.as_batch([np.array([0]), np.array([1])]))
    with raises_at_call(ValueError, match="pad: argument 'axis_names': axis 'C' is not present"):
        ndd.pad(batch, axis_names="C")
    with raises_at_call(ValueError, match="pad: argument 'fill_value' must be finite for integer"):
        ndd.pad(batch, fill_value=float("nan"))
    with raises_at_call(TypeError, match="pad: argument 'fill_value' expects a float"):
        ndd.pad(batch, fill_value=[1.0, 2.0])


@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.float32])
def test_pad_row_tiles_split_rows_and_samples(small_tiles, dtype):
    samples = _samples([(7, 5, 3), (1, 1, 3), (9, 13, 3)], dtype)  # last: largest (Tensor check)
    check_op(ndd.pad, samples, lambda s, **a: ref_pad(s, samples, **a), layout="HWC",
             all_modes=False, args={"fill_value": 7, "align": [4, 3, 1]})  # fmt: skip
