"""reductions.*: exact Python/float64 references, DALI's result types, errors, one launch."""

import math

import numpy as np
import pytest
from _check import assert_close, check_op, raises_at_call, samples_of

import ndd_triton as ndd

MOMENTS = ("sum", "mean", "mean_square", "rms")


def _axes(x, axes, axis_names, layout):
    if axis_names is not None:
        return tuple(layout.index(c) for c in axis_names)
    if axes is None:
        return tuple(range(x.ndim))
    return tuple(sorted(a % x.ndim for a in np.atleast_1d(axes)))


def _default_dtype(op, x):
    if op in ("min", "max"):
        return x.dtype
    if op == "sum" and x.dtype.kind in "iu":
        return np.dtype(np.uint64 if x.dtype.kind == "u" else np.int64)
    return np.dtype(np.float32)


def ref_reduce(
    x, op, axes=None, axis_names=None, keep_dims=False, dtype=None, layout="HWC", mean=None, ddof=0
):
    """Reduce with Python integers / float64 per output element (slow, obviously correct)."""
    red = _axes(x, axes, axis_names, layout)
    out_dtype = np.dtype(dtype) if dtype is not None else _default_dtype(op, x)
    if op in ("std_dev", "variance"):
        out_dtype = np.dtype(np.float32)
    moved = np.moveaxis(x, red, tuple(range(x.ndim - len(red), x.ndim)))
    kept_shape = moved.shape[: x.ndim - len(red)]
    rows = moved.reshape(int(np.prod(kept_shape)), -1)
    means = None if mean is None else np.broadcast_to(
        np.asarray(mean, np.float64).reshape(-1), (len(rows),))  # fmt: skip
    values = []
    for k, row in enumerate(rows):
        items = [v.item() for v in row]
        n = len(items)
        if op == "sum":
            value = sum(items) if out_dtype.kind in "iu" else math.fsum(items)
        elif op in ("mean", "mean_square", "rms"):
            sq = [v * v for v in items] if op != "mean" else items
            if out_dtype.kind in "iu":
                total = sum(int(v) for v in sq)
                value = int(total / n) if n else 0
                value = math.isqrt(value) if op == "rms" else value
            else:
                value = math.fsum(sq) / n if n else math.nan
                value = math.sqrt(value) if op == "rms" else value
        elif op in ("min", "max"):
            info = np.finfo(x.dtype) if x.dtype.kind == "f" else np.iinfo(x.dtype)
            value = (min if op == "min" else max)(items, default=info.max if op == "min" else
                                                  info.min)  # fmt: skip
        else:
            # DALI 2.4: no reduced axes -> 0; N - ddof <= 0 still divides (inf, NaN, negative)
            ssd = math.fsum((v - means[k]) ** 2 for v in items) if red else 0.0
            div = n - ddof if red else 1
            value = ssd / div if div else (math.inf if ssd else math.nan)
            value = (math.sqrt(value) if value >= 0 else math.nan) if op == "std_dev" else value
        values.append(value)
    if out_dtype.kind in "iu":  # integer accumulation wraps around (DALI: u8 sum 300 -> 44)
        bits = out_dtype.itemsize * 8
        values = [int(v) % (1 << bits) for v in values]
        result = np.array(values, dtype=np.uint64).astype(out_dtype)
    else:
        result = np.array(values, dtype=np.float64).astype(out_dtype)
    result = result.reshape(kept_shape)
    if keep_dims:
        result = result.reshape([1 if d in red else e for d, e in enumerate(x.shape)])
    return result


def _samples(shapes, dtype, seed=0, low=0, high=255):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "f":
        return [rng.uniform(-3, 3, size=s).astype(dtype) for s in shapes]
    return [rng.integers(low, high, size=s).astype(dtype) for s in shapes]


def _op(name):
    return getattr(ndd.reductions, name)


RAGGED = [(5, 7, 3), (1, 1, 3), (30, 41, 3)]  # 3690 elements: several BLOCK chunks per row


@pytest.mark.parametrize("name", [*MOMENTS, "min", "max"])
def test_all_axes_ragged_all_modes(name):
    samples = _samples(RAGGED, np.uint8)
    check_op(_op(name), samples, lambda s, **a: ref_reduce(s, name, **a), layout="HWC", rtol=1e-5)


@pytest.mark.parametrize("name", [*MOMENTS, "min", "max"])
@pytest.mark.parametrize(
    ("args", "dtype"),
    [
        ({"axis_names": "W"}, np.float32),
        ({"axes": [0, 1], "keep_dims": True}, np.int16),
        ({"axes": -1}, np.int8),
        ({"axes": [2, 0]}, np.uint16),
    ],
)
def test_axes_and_dtypes(name, args, dtype):
    samples = _samples([(4, 6, 3), (7, 2, 2)], dtype, low=-100 if dtype in (np.int8,
                       np.int16) else 0, high=100)  # fmt: skip
    check_op(
        _op(name),
        samples,
        lambda s, **a: ref_reduce(s, name, **a),
        args=args,
        layout="HWC",
        rtol=1e-5,
        atol=1e-5,
        all_modes=False,
    )


def test_layouts_of_results():
    x = ndd.as_batch([np.ones((2, 3, 4), np.uint8)], layout="HWC")
    assert ndd.reductions.sum(x).layout is None
    assert ndd.reductions.sum(x, axis_names="W").layout == "HC"
    assert ndd.reductions.max(x, axis_names="WC").layout == "H"
    assert ndd.reductions.mean(x, axes=[0, 1], keep_dims=True).layout == "HWC"
    assert ndd.reductions.sum(x, axes=[]).layout == "HWC"


@pytest.mark.parametrize("backend", ["cpu", "gpu"])
def test_spec_example_values(backend):
    x = ndd.as_tensor(np.array([[1, 2, 3], [4, 5, 6]], np.uint8), layout="HW")
    x = x.gpu() if backend == "gpu" else x
    r = ndd.reductions
    total = r.sum(x)
    assert total.dtype == ndd.uint64
    assert int(np.asarray(total.cpu())) == 21
    by_col = r.sum(x, axes=0)
    assert by_col.layout == "W"
    np.testing.assert_array_equal(np.asarray(by_col.cpu()), [5, 7, 9])
    rows = r.sum(x, axis_names="W", keep_dims=True)
    assert rows.layout == "HW"
    np.testing.assert_array_equal(np.asarray(rows.cpu()), [[6], [15]])
    expected = {"mean": 3.5, "mean_square": 15.1667, "rms": 3.89444}
    for name, value in expected.items():
        assert float(np.asarray(getattr(r, name)(x).cpu())) == pytest.approx(value, rel=1e-5)
    mean = ndd.as_tensor(np.float32(3.5)).gpu() if backend == "gpu" else 3.5
    assert float(np.asarray(r.std_dev(x, mean).cpu())) == pytest.approx(1.70783, rel=1e-5)
    assert float(np.asarray(r.std_dev(x, mean, ddof=1).cpu())) == pytest.approx(1.87083, rel=1e-5)
    assert float(np.asarray(r.variance(x, mean).cpu())) == pytest.approx(2.91667, rel=1e-5)


@pytest.mark.parametrize("backend", ["cpu", "gpu"])
def test_dtype_override_wraps_and_truncates(backend):
    x = ndd.as_tensor(np.array([200, 100], np.uint8))
    x = x.gpu() if backend == "gpu" else x
    wrapped = ndd.reductions.sum(x, dtype=ndd.uint8)
    assert wrapped.dtype == ndd.uint8
    assert int(np.asarray(wrapped.cpu())) == 44
    as_float = ndd.reductions.sum(x, dtype=ndd.float32)
    assert as_float.dtype == ndd.float32
    assert float(np.asarray(as_float.cpu())) == 300.0
    pair = ndd.as_batch([np.array([1, 2], np.int32), np.array([-1, -2], np.int32)])
    pair = pair.gpu() if backend == "gpu" else pair
    means = samples_of(ndd.reductions.mean(pair, dtype=ndd.int32))
    assert [int(m) for m in means] == [1, -1]  # truncated toward zero
    assert means[0].dtype == np.int32


@pytest.mark.parametrize("backend", ["cpu", "gpu"])
def test_wide_integers_accumulate_exactly(backend):
    big = [np.array([2**32 - 1, 2**32 - 2, 7], np.uint32), np.array([-(2**62), -(2**62), 5],
                                                                   np.int64)]  # fmt: skip
    for sample in big:
        x = ndd.as_tensor(sample)
        x = x.gpu() if backend == "gpu" else x
        got = np.asarray(ndd.reductions.sum(x).cpu())
        assert_close(got, ref_reduce(sample, "sum"), where=f"sum {sample.dtype}")
        for name in ("min", "max"):
            got = np.asarray(getattr(ndd.reductions, name)(x).cpu())
            assert_close(got, ref_reduce(sample, name), where=f"{name} {sample.dtype}")


@pytest.mark.parametrize("backend", ["cpu", "gpu"])
def test_empty_samples(backend):
    batch = ndd.as_batch([np.zeros((0, 3), np.float32), np.ones((2, 3), np.float32)])
    batch = batch.gpu() if backend == "gpu" else batch
    r = ndd.reductions
    assert [float(v) for v in samples_of(r.sum(batch))] == [0.0, 6.0]
    mean = samples_of(r.mean(batch))
    assert np.isnan(mean[0])
    assert float(mean[1]) == 1.0
    assert float(samples_of(r.max(batch))[0]) == float(np.finfo(np.float32).min)
    assert float(samples_of(r.min(batch))[0]) == float(np.finfo(np.float32).max)
    per_col = samples_of(r.sum(batch, axes=0))
    np.testing.assert_array_equal(per_col[0], np.zeros(3, np.float32))
    empty_u8 = ndd.as_batch([np.zeros((0,), np.uint8)])
    empty_u8 = empty_u8.gpu() if backend == "gpu" else empty_u8
    assert int(samples_of(r.min(empty_u8))[0]) == 255
    assert int(samples_of(r.sum(empty_u8))[0]) == 0


def test_no_axes_means_no_reduction():
    samples = _samples([(3, 4), (2, 5)], np.uint8)
    check_op(
        ndd.reductions.sum,
        samples,
        lambda s, **a: s.astype(np.uint64),
        args={"axes": []},
        all_modes=False,
    )


@pytest.mark.parametrize("name", ["std_dev", "variance"])
@pytest.mark.parametrize("backend", ["cpu", "gpu"])
def test_std_dev_variance_with_mean_input(name, backend):
    xs = _samples([(4, 5, 3), (6, 2, 3), (1, 1, 3)], np.float32, seed=3)
    op = getattr(ndd.reductions, name)
    kept = [x.mean(axis=(0, 1), keepdims=True).astype(np.float32) for x in xs]
    flat = [k.reshape(3) for k in kept]
    scalar = [np.float32(x.mean()) for x in xs]
    cases = [
        ({"axes": [0, 1]}, kept),
        ({"axes": [0, 1], "keep_dims": True}, flat),
        ({"ddof": 1}, scalar),
        ({"axes": 1, "ddof": 1}, [x.mean(axis=1) for x in xs]),
    ]
    for args, means in cases:
        data = ndd.as_batch(xs, layout="HWC")
        mean = ndd.as_batch([np.asarray(m, np.float32) for m in means])
        if backend == "gpu":
            data, mean = data.gpu(), mean.gpu()
        got = samples_of(op(data, mean, **args))
        for i, (g, x, m) in enumerate(zip(got, xs, means, strict=True)):
            assert_close(g, ref_reduce(x, name, mean=m, **args), atol=1e-5, rtol=1e-5,
                         where=f"{name} {args} sample {i}")  # fmt: skip


def test_std_dev_u8_input_and_scalar_mean():
    x = np.array([[1, 2], [3, 10]], np.uint8)
    for backend in ("cpu", "gpu"):
        t = ndd.as_tensor(x).gpu() if backend == "gpu" else ndd.as_tensor(x)
        mean = ndd.as_tensor(np.float32(4.0))
        mean = mean.gpu() if backend == "gpu" else mean
        got = np.asarray(ndd.reductions.std_dev(t, mean).cpu())
        assert_close(got, ref_reduce(x, "std_dev", mean=4.0), rtol=1e-6)


def test_one_launch_per_ragged_batch():
    batch = ndd.as_batch(_samples([(3, 5, 3), (9, 2, 3), (4, 4, 3), (1, 1, 3)], np.uint8),
                         layout="HWC").gpu()  # fmt: skip
    mean = ndd.as_batch([np.zeros(3, np.float32)] * 4).gpu()
    for name in ("sum", "mean", "mean_square", "rms", "min", "max", "std_dev", "variance"):
        op = getattr(ndd.reductions, name)
        with ndd.profile() as prof:
            args = (batch, mean) if name in ("std_dev", "variance") else (batch,)
            op(*args, axis_names="HW").evaluate()
        (record,) = prof.records
        assert record.gpu_launches == 1, name


def test_errors():
    x = np.zeros((2, 3), np.float32)
    r = ndd.reductions
    with raises_at_call(
        IndexError,
        match=r"reductions.sum: argument 'axes': Axis index out of "
        r"range: 2 not in range \[-2,1\]",
    ):
        r.sum(x, axes=2)
    with raises_at_call(IndexError, match=r"not in range \[-2,1\]"):
        r.max(x, axes=[-3])
    with raises_at_call(
        RuntimeError,
        match=r"reductions.mean: arguments 'axes' and 'axis_names' "
        "are mutually exclusive",
    ):
        r.mean(ndd.as_tensor(x, layout="HW"), axes=0, axis_names="W")
    with raises_at_call(RuntimeError, match=r"reductions.sum: Unsupported input type f16"):
        r.sum(np.zeros(3, np.float16))
    with raises_at_call(RuntimeError, match="Unsupported input type bool"):
        r.min(np.zeros(3, np.bool_))
    with raises_at_call(
        RuntimeError,
        match=r"reductions.mean: argument 'dtype' i32 cannot hold a "
        "reduction of float input f32",
    ):
        r.mean(x, dtype=ndd.int32)
    with raises_at_call(
        RuntimeError,
        match=r"reductions.sum: argument 'dtype' must be an integer "
        "type, float32 or float64; got f16",
    ):
        r.sum(np.zeros(3, np.uint8), dtype=ndd.float16)
    with raises_at_call(
        RuntimeError,
        match=r"reductions.std_dev: input 'mean' must be float32 or "
        "float64; got i32",
    ):
        r.std_dev(x, np.int32(1))
    with raises_at_call(
        ValueError,
        match=r"reductions.variance: input 'mean' sample 0: shape "
        r"\(2,\) does not match the reduced shape \(3,\)",
    ):
        r.variance(x, np.zeros(2, np.float32), axes=0)
    with raises_at_call(ValueError, match="argument 'ddof' must be non-negative; got -1"):
        r.variance(x, np.float32(0), ddof=-1)
    with raises_at_call(
        ValueError,
        match=r"reductions.rms: argument 'axis_names': axis 'C' is not "
        "present in the input layout 'HW'",
    ):
        r.rms(ndd.as_tensor(x, layout="HW"), axis_names="C")
    with raises_at_call(ValueError, match=r"argument 'axis_names' .* needs an input layout"):
        r.sum(x, axis_names="W")
    with raises_at_call(ValueError, match="argument 'axes' lists an axis twice"):
        r.sum(x, axes=[0, -2])
    with raises_at_call(TypeError, match="unexpected keyword argument 'dtype'"):
        r.min(x, dtype=ndd.float32)


@pytest.mark.parametrize("name", ["sum", "mean", "rms", "max"])
@pytest.mark.parametrize("dtype", [np.uint8, np.float32])
def test_per_channel_of_larger_samples(name, dtype):
    # 1230 rows of 3 channels: the CPU's blocked per-channel path (rows folded 341 at a time).
    samples = _samples([(30, 41, 3), (2, 3, 3)], dtype, seed=7)
    check_op(
        _op(name),
        samples,
        lambda s, **a: ref_reduce(s, name, **a),
        args={"axis_names": "HW"},
        layout="HWC",
        rtol=1e-5,
        all_modes=False,
    )


def test_spread_degenerate_divisors_and_no_axes_match_dali():
    r = ndd.reductions
    # DALI 2.4 (recorded): N - ddof == 0 -> inf, N - ddof < 0 -> ssd / (N - ddof); no reduced
    # axes -> 0 whatever the mean and ddof.
    one = ndd.as_batch([np.array([5], np.uint8)])
    two = ndd.as_batch([np.array([5, 9], np.float32)])
    x = ndd.as_batch([np.array([[1, 2, 3], [4, 5, 9]], np.float32)])
    for dev in ("cpu", "gpu"):
        def val(out):
            return np.asarray(out.cpu().select(0))

        assert val(r.variance(one, 2.0, ddof=1, device=dev)) == np.inf
        assert val(r.std_dev(one, 2.0, ddof=1, device=dev)) == np.inf
        assert val(r.variance(two, 2.0, ddof=3, device=dev)) == -58.0
        assert np.isnan(val(r.std_dev(two, 2.0, ddof=3, device=dev)))
        for kw in ({}, {"ddof": 1}):
            np.testing.assert_array_equal(val(r.std_dev(x, 2.0, axes=[], device=dev, **kw)),
                                          np.zeros((2, 3), np.float32))  # fmt: skip
            np.testing.assert_array_equal(val(r.variance(x, 2.0, axes=[], device=dev, **kw)),
                                          np.zeros((2, 3), np.float32))  # fmt: skip
