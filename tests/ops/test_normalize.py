"""normalize: float64 NumPy reference (per sample or over the batch), spec values, errors."""

import numpy as np
import pytest
from _check import assert_close, check_op, raises_at_call, samples_of

import ndd_triton as ndd


def _red_axes(x, axes, axis_names, layout):
    if axis_names is not None:
        return tuple(layout.index(c) for c in axis_names)
    return tuple(range(x.ndim)) if axes is None else tuple(a % x.ndim for a in axes)


def ref_stats(xs, red, mean=None, stddev=None, ddof=0, epsilon=0.0, batch=False):
    """Mean and stddev per sample (keepdims), from all samples together with batch=True."""
    xs = [x.astype(np.float64) for x in xs]
    if mean is not None:
        means = [np.asarray(m, np.float64) for m in mean]
    elif batch:
        total = sum(x.sum(axis=red, keepdims=True) for x in xs)
        means = [total / sum(np.prod([x.shape[a] for a in red]) for x in xs)] * len(xs)
    else:
        means = [x.mean(axis=red, keepdims=True) for x in xs]
    if stddev is not None:
        return means, [np.asarray(s, np.float64) for s in stddev]
    ssd = [((x - m) ** 2).sum(axis=red, keepdims=True) for x, m in zip(xs, means, strict=True)]
    counts = [np.prod([x.shape[a] for a in red]) for x in xs]
    if batch:
        ssd, counts = [sum(ssd)] * len(xs), [sum(counts)] * len(xs)
    return means, [np.sqrt(s / (c - ddof) + epsilon) for s, c in zip(ssd, counts, strict=True)]


def ref_apply(x, mean, std, scale=1.0, shift=0.0, dtype=None):
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(std > 0, scale * (x.astype(np.float64) - mean) / std, 0.0) + shift
    dtype = np.dtype(dtype or np.float32)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        out = np.clip(np.sign(out) * np.floor(np.abs(out) + 0.5), info.min, info.max)
    return out.astype(dtype)


def ref_normalize(x, batch_samples=None, axes=None, axis_names=None, layout="HWC", mean=None,
                  stddev=None, ddof=0, epsilon=0.0, scale=1.0, shift=0.0, dtype=None,
                  batch=False):  # fmt: skip
    red = _red_axes(x, axes, axis_names, layout)
    xs = batch_samples if batch else [x]
    means, stds = ref_stats(
        xs,
        red,
        None if mean is None else [mean] * len(xs),
        None if stddev is None else [stddev] * len(xs),
        ddof,
        epsilon,
        batch,
    )
    return ref_apply(x, means[0], stds[0], scale, shift, dtype)


def _samples(shapes, dtype, seed=0):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "f":
        return [rng.uniform(-2, 5, size=s).astype(dtype) for s in shapes]
    return [rng.integers(0, 120, size=s).astype(dtype) for s in shapes]


RAGGED = [(5, 7, 3), (2, 1, 3), (30, 40, 3)]  # 3600 elements: several BLOCK chunks per group


def test_all_axes_ragged_all_modes():
    samples = _samples(RAGGED, np.uint8)
    check_op(
        ndd.normalize,
        samples,
        lambda s, **a: ref_normalize(s, **a),
        layout="HWC",
        atol=1e-5,
        rtol=1e-5,
    )


@pytest.mark.parametrize(
    ("args", "dtype"),
    [
        ({"axes": [0, 1]}, np.float32),
        ({"axis_names": "W", "ddof": 1, "epsilon": 0.5}, np.int16),
        ({"axes": [2], "scale": 3.0, "shift": -1.5}, np.uint8),
        ({"axes": [0, 1], "dtype": ndd.uint8, "scale": 40.0, "shift": 128.0}, np.uint8),
        ({"dtype": ndd.int16, "scale": 1000.0}, np.float32),
    ],
)
def test_axes_options_and_output_types(args, dtype):
    samples = _samples([(4, 6, 3), (7, 3, 3)], dtype)
    ref_args = {k: (np.int16 if v is ndd.int16 else np.uint8) if k == "dtype" else v
                for k, v in args.items()}  # fmt: skip
    atol = 1 if "dtype" in args else 1e-5
    check_op(
        ndd.normalize,
        samples,
        lambda s, **a: ref_normalize(s, **ref_args),
        args=args,
        layout="HWC",
        atol=atol,
        rtol=1e-5,
        all_modes=False,
    )


@pytest.mark.parametrize("backend", ["cpu", "gpu"])
@pytest.mark.parametrize("args", [{"axes": [0, 1]}, {}, {"axis_names": "HC", "ddof": 2}])
def test_batch_statistics(backend, args):
    samples = _samples([(4, 6, 3), (3, 6, 3), (5, 6, 3)], np.float32, seed=2)
    batch = ndd.as_batch(samples, layout="HWC")
    batch = batch.gpu() if backend == "gpu" else batch
    got = samples_of(ndd.normalize(batch, batch=True, **args))
    for i, (g, s) in enumerate(zip(got, samples, strict=True)):
        expected = ref_normalize(
            s,
            batch_samples=samples,
            batch=True,
            **{k: tuple(v) if k == "axes" else v for k, v in args.items()},
        )
        assert_close(g, expected, atol=1e-5, rtol=1e-5, where=f"{backend} sample {i}")


def test_given_mean_and_stddev_per_sample_tensors():
    samples = _samples([(4, 5, 3), (6, 2, 3)], np.uint8, seed=4)
    means = [np.array([[[10.0, 50.0, 90.0]]], np.float32), np.array([[[1.0, 2.0, 3.0]]],
                                                                    np.float32)]  # fmt: skip
    stds = [np.array([[[2.0, 4.0, 8.0]]], np.float32), np.array([[[1.0, 0.5, 0.0]]], np.float32)]
    check_op(ndd.normalize, samples,
             lambda s, mean, stddev, **a: ref_apply(s, mean, stddev),
             per_sample={"mean": means, "stddev": stds}, args={"axes": [0, 1]}, layout="HWC",
             atol=1e-5, rtol=1e-5)  # fmt: skip


def test_given_scalars_and_only_mean_or_only_stddev():
    samples = _samples([(3, 4, 3), (5, 2, 3)], np.float32, seed=5)
    check_op(ndd.normalize, samples,
             lambda s, **a: ref_apply(s, 0.5, 2.0, scale=1.5, shift=0.25),
             args={"mean": 0.5, "stddev": 2.0, "scale": 1.5, "shift": 0.25}, layout="HWC",
             atol=1e-5, rtol=1e-5, all_modes=False)  # fmt: skip
    check_op(ndd.normalize, samples, lambda s, **a: ref_normalize(s, mean=0.7, axes=(0, 1)),
             args={"mean": 0.7, "axes": [0, 1]}, layout="HWC", atol=1e-5, rtol=1e-5,
             all_modes=False)  # fmt: skip
    check_op(
        ndd.normalize,
        samples,
        lambda s, **a: ref_normalize(s, stddev=3.0),
        args={"stddev": 3.0},
        layout="HWC",
        atol=1e-5,
        rtol=1e-5,
        all_modes=False,
    )


@pytest.mark.parametrize("backend", ["cpu", "gpu"])
def test_spec_example_values(backend):
    x = ndd.as_tensor(np.array([[1, 2, 3], [4, 5, 6]], np.float32), layout="HW")
    x = x.gpu() if backend == "gpu" else x

    def run(**kwargs):
        return np.asarray(ndd.normalize(x, **kwargs).cpu())

    a, b, c = 1.46385, 0.87831, 0.29277
    np.testing.assert_allclose(run(), [[-a, -b, -c], [c, b, a]], rtol=1e-4)
    np.testing.assert_allclose(run(axes=[0]), [[-1, -1, -1], [1, 1, 1]], rtol=1e-5)
    np.testing.assert_allclose(run(axis_names="W"), [[-1.2247, 0, 1.2247]] * 2, atol=1e-4)
    np.testing.assert_allclose(run(ddof=1)[0, 0], -1.33631, rtol=1e-4)
    np.testing.assert_allclose(run(scale=2, shift=10)[0, 0], 7.0723, rtol=1e-4)
    np.testing.assert_allclose(run(scale=2, shift=10)[1, 2], 12.9277, rtol=1e-4)
    u8 = run(dtype=ndd.uint8, scale=64, shift=128)
    assert u8.dtype == np.uint8
    assert u8.ravel().tolist() == [34, 72, 109, 147, 184, 222]
    assert run(dtype=ndd.int32).ravel().tolist() == [-1, -1, 0, 0, 1, 1]
    rms = np.sqrt(np.mean(np.arange(1, 7) ** 2))
    np.testing.assert_allclose(run(mean=0).ravel(), np.arange(1, 7) / rms, rtol=1e-5)
    const = ndd.as_tensor(np.full((2, 3), 7, np.uint8))
    const = const.gpu() if backend == "gpu" else const
    out = np.asarray(ndd.normalize(const).cpu())
    assert out.dtype == np.float32
    assert np.array_equal(out, np.zeros((2, 3), np.float32))
    pair = ndd.as_batch([np.array([1, 2], np.float32), np.array([3, 4], np.float32)])
    pair = pair.gpu() if backend == "gpu" else pair
    got = samples_of(ndd.normalize(pair, batch=True))
    np.testing.assert_allclose(np.concatenate(got), [-1.3416, -0.4472, 0.4472, 1.3416], rtol=1e-4)


def test_empty_sample_and_launches():
    batch = ndd.as_batch([np.zeros((0, 3), np.float32), np.ones((2, 3), np.float32)])
    for backend in ("cpu", "gpu"):
        b = batch.gpu() if backend == "gpu" else batch
        got = samples_of(ndd.normalize(b, axes=[0]))
        assert got[0].shape == (0, 3)
        assert_close(got[1], np.zeros((2, 3), np.float32), where=backend)
    ragged = ndd.as_batch(_samples([(3, 5, 3), (9, 2, 3), (4, 4, 3)], np.uint8),
                          layout="HWC").gpu()  # fmt: skip
    # computed statistics: one launch for them (a program per group), one streaming the output
    for kwargs, launches in (({}, 2), ({"axes": [0, 1], "batch": True}, 2),
                             ({"mean": 3.0, "stddev": 2.0}, 1), ({"stddev": 2.0}, 2)):
        with ndd.profile() as prof:
            ndd.normalize(ragged, **kwargs).evaluate()
        (record,) = prof.records
        assert record.gpu_launches == launches, kwargs


def test_errors():
    x = ndd.as_tensor(np.zeros((2, 3, 3), np.float32), layout="HWC")
    with raises_at_call(
        RuntimeError, match="normalize: arguments 'axes' and 'axis_names' are mutually exclusive"
    ):
        ndd.normalize(x, axes=[0], axis_names="H")
    with raises_at_call(
        RuntimeError,
        match="normalize: argument 'dtype' must be float32 or an integer type; got f16",
    ):
        ndd.normalize(x, dtype=ndd.float16)
    with raises_at_call(
        ValueError,
        match=r"normalize: argument 'mean' sample 0: Normalization "
        r"parameters' shape \(1, 1, 2\) must have extent 1",
    ):
        ndd.normalize(x, axes=[0, 1], mean=ndd.as_tensor(np.zeros((1, 1, 2), np.float32)))
    with raises_at_call(ValueError, match=r"argument 'stddev' sample 0: .*shape \(2, 1, 3\)"):
        ndd.normalize(x, axes=[0, 1], stddev=ndd.as_tensor(np.ones((2, 1, 3), np.float32)))
    ragged = ndd.as_batch([np.zeros((2, 3, 3), np.float32), np.zeros((2, 3, 1), np.float32)],
                          layout="HWC")  # fmt: skip
    with raises_at_call(
        ValueError,
        match="normalize: batch=True needs the same non-reduced "
        r"extents in every sample; sample 1 has \(1, 1, 1\)",
    ):
        ndd.normalize(ragged, axes=[0, 1], batch=True)
    pair = ndd.as_batch([np.zeros((2, 2), np.float32)] * 2)
    with raises_at_call(
        ValueError,
        match="normalize: argument 'mean' must be the same for every sample with batch=True",
    ):
        ndd.normalize(pair, batch=True, mean=ndd.as_batch([np.float32(0), np.float32(1)]))
    with raises_at_call(ValueError, match="normalize: argument 'ddof' must be non-negative"):
        ndd.normalize(x, ddof=-1)
    with raises_at_call(ValueError, match="normalize: argument 'epsilon' must be non-negative"):
        ndd.normalize(x, epsilon=-0.1)
    with raises_at_call(
        TypeError, match="normalize: input 0 has dtype bool; expected an integer or float type"
    ):
        ndd.normalize(np.zeros(3, np.bool_))
    with raises_at_call(
        IndexError,
        match=r"normalize: argument 'axes': Axis index out of range: "
        r"3 not in range \[-3,2\]",
    ):
        ndd.normalize(x, axes=[3])


def test_per_channel_statistics_of_a_larger_sample():
    # 1200 rows of 3 channels: the CPU's blocked per-channel sums (rows folded 341 at a time).
    samples = _samples([(30, 40, 3), (3, 2, 3)], np.uint8, seed=8)
    check_op(ndd.normalize, samples, lambda s, **a: ref_normalize(s, axes=(0, 1), ddof=1),
             args={"axis_names": "HW", "ddof": 1}, layout="HWC", atol=1e-5, rtol=1e-5,
             all_modes=False)  # fmt: skip


def test_epsilon_applies_to_a_given_stddev():
    # DALI 2.4 (recorded): with stddev=2 and epsilon=5 it divides by sqrt(4 + 5) = 3
    x = ndd.as_batch([np.array([[[1.0], [2.0], [4.0]]], np.float32)], layout="HWC")
    mean = ndd.as_batch([np.full((1, 1, 1), 1.0, np.float32)])
    std = ndd.as_batch([np.full((1, 1, 1), 2.0, np.float32)])
    for dev in ("cpu", "gpu"):
        def run(dev=dev, **kw):
            return np.asarray(ndd.normalize(x, device=dev, **kw).cpu().select(0)).ravel()

        np.testing.assert_allclose(run(mean=mean, stddev=std, epsilon=5.0), [0, 1 / 3, 1],
                                   rtol=1e-6)  # fmt: skip
        np.testing.assert_allclose(run(stddev=std, epsilon=5.0), [-0.44444448, -0.11111116,
                                   0.55555546], rtol=1e-5)  # fmt: skip
        np.testing.assert_allclose(run(mean=mean, stddev=std, ddof=1), [0, 0.5, 1.5], rtol=1e-6)
