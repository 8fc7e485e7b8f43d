"""random.uniform / normal / coin_flip / choice / beta (core.md 13.2).

Exact references recompute the documented draw rule (draw d of key k = lane d % 4 of Philox block
d // 4; each sample's draws start at a 4-aligned base reserved in call order) with the
independent scalar Philox in tests/reference; statistics check the distributions on a few
thousand values; CPU == GPU is checked on top.
"""

import numpy as np
import pytest
from _check import raises_at_call, samples_of
from reference.philox_ref import draw

import ndd_triton as ndd

R = ndd.random


def bases(counts, start=0):
    """Per-sample first draw indices for `counts` draws each (4-aligned, in order)."""
    out, pos = [], (start + 3) // 4 * 4
    for c in counts:
        out.append(pos)
        pos += (c + 3) // 4 * 4
    return out


def ref_draws(key, base, n):
    return np.array([draw(key, base + i) for i in range(n)], dtype=np.uint64)


def unit24(u):
    return (u >> np.uint64(8)).astype(np.float64) / 2.0**24


def run_both(fn, *args, seed=7, **kwargs):
    """Results on cpu and gpu with fresh RNGs of the same seed."""
    results = []
    for device in ("cpu", "gpu"):
        res = fn(*args, device=device, rng=R.RNG(seed=seed), **kwargs)
        assert res.device.device_type == device
        results.append(samples_of(res))
    return results


def assert_same(results, atol=0.0):
    cpu, gpu = results
    assert len(cpu) == len(gpu)
    for a, b in zip(cpu, gpu, strict=True):
        assert a.dtype == b.dtype
        assert a.shape == b.shape
        if atol:
            np.testing.assert_allclose(a.astype(np.float64), b.astype(np.float64), rtol=1e-6,
                                       atol=atol)  # fmt: skip
        else:
            np.testing.assert_array_equal(a, b)


# ---- exact references -----------------------------------------------------------------------
def test_uniform_f32_matches_reference_per_sample_ranges():
    ranges = [np.array([-2.0, 3.0], np.float32), np.array([10.0, 10.5], np.float32),
              np.array([0.0, 1.0], np.float32)]  # fmt: skip
    shapes = [np.array([2, 3]), np.array([1, 5]), np.array([0, 4])]
    sizes = [6, 5, 0]
    starts = bases(sizes)
    for got in run_both(R.uniform, range=ndd.as_batch(ranges), shape=ndd.as_batch(shapes)):
        for i, (g, r) in enumerate(zip(got, ranges, strict=True)):
            lo, hi = float(r[0]), float(r[1])
            u = unit24(ref_draws(7, starts[i], sizes[i]))
            expected = (lo + u * (hi - lo)).astype(np.float32).reshape(tuple(shapes[i]))
            assert g.dtype == np.float32
            assert g.shape == tuple(shapes[i])
            np.testing.assert_array_equal(g, expected)


@pytest.mark.parametrize(("dtype", "rng_range", "lo", "hi"), [
    (ndd.int32, (0, 2), 0, 2), (ndd.int8, (-3.4, 2.5), -3, 3), (ndd.uint8, (-5, 300), 0, 255),
    (ndd.int64, (-(2**40), 2**41), -(2**40), 2**41), (ndd.uint16, (1.5, 4.49), 2, 4),
])  # fmt: skip
def test_uniform_integer_closed_range_reference(dtype, rng_range, lo, hi):
    n = 40
    d = ref_draws(7, 0, 2 * n)
    u64 = [(int(d[2 * i]) << 32) | int(d[2 * i + 1]) for i in range(n)]
    expected = np.array([lo + (u * (hi - lo + 1) >> 64) for u in u64])
    results = run_both(R.uniform, range=rng_range, shape=n, dtype=dtype)
    assert_same(results)
    got = results[0][0]
    assert got.dtype == dtype.numpy_dtype
    np.testing.assert_array_equal(got.astype(np.int64), expected)


def test_uniform_integer_covers_closed_interval():
    got = np.asarray(R.uniform(range=[0, 2], shape=300, dtype=ndd.int32, rng=R.RNG(seed=1)))
    assert set(got.tolist()) == {0, 1, 2}
    got = np.asarray(R.uniform(range=[0, 1e10], shape=2000, dtype=ndd.uint64, rng=R.RNG(seed=1)))
    assert got.max() > 9e9
    assert got.min() < 1e9


def test_coin_flip_and_normal_reference():
    n = 12
    got = np.asarray(R.coin_flip(shape=n, probability=0.4, rng=R.RNG(seed=3)))
    expected = (unit24(ref_draws(3, 0, n)) < 0.4).astype(np.int32)
    np.testing.assert_array_equal(got, expected)
    got = np.asarray(R.normal(shape=n, mean=1.5, stddev=2.0, rng=R.RNG(seed=3)))
    d = ref_draws(3, 0, 2 * n).reshape(n, 2)
    u1 = ((d[:, 0] >> np.uint64(8)) + np.uint64(1)).astype(np.float64) / 2.0**24
    u2 = unit24(d[:, 1])
    z = np.sqrt(-2.0 * np.log(u1)) * np.cos(2.0 * np.pi * u2)
    np.testing.assert_allclose(got, 1.5 + 2.0 * z, rtol=2e-6, atol=2e-6)


# ---- CPU == GPU -------------------------------------------------------------------------------
@pytest.mark.parametrize(("fn", "kwargs", "atol"), [
    (R.uniform, {"shape": [3, 5], "range": [-1.0, 4.0]}, 0),
    (R.uniform, {"shape": 9, "dtype": ndd.float64}, 0),
    (R.uniform, {"shape": 9, "dtype": ndd.uint64, "range": [0, 1.9e19]}, 0),
    (R.uniform, {"shape": 9, "values": [1.0, 2.5, -7.0], "dtype": ndd.int16}, 0),
    (R.normal, {"shape": 9, "mean": 3.0, "stddev": 0.5}, 1e-6),
    (R.normal, {"shape": 9, "stddev": 100.0, "dtype": ndd.uint8}, 1),
    (R.normal, {"shape": 9, "dtype": ndd.float16}, 1e-3),
    (R.coin_flip, {"shape": 9, "dtype": ndd.bool}, 0),
    (R.beta, {"shape": 9, "alpha": 2.0, "dtype": ndd.float64}, 0),
])  # fmt: skip
def test_cpu_equals_gpu(fn, kwargs, atol):
    assert_same(run_both(fn, batch_size=2, **kwargs), atol)


def test_choice_cpu_equals_gpu():
    assert_same(run_both(R.choice, 5, shape=7))
    a = ndd.as_batch([np.array([[1, 2], [3, 4], [5, 6]], np.int16), np.array([[9, 9]], np.int16)])
    assert_same(run_both(R.choice, a, shape=4))


def test_one_launch_per_batch():
    for fn, kwargs in ((R.uniform, {}), (R.normal, {}), (R.coin_flip, {}),
                       (R.uniform, {"values": [1.0, 2.0]}), (R.uniform, {"dtype": ndd.int8})):
        with ndd.profile() as prof:
            fn(shape=ndd.as_batch([np.array([3]), np.array([700]), np.array([0])]),
               device="gpu", **kwargs).evaluate()  # fmt: skip
        (record,) = prof.records
        assert record.gpu_launches == 1


# ---- statistics -------------------------------------------------------------------------------
def test_uniform_statistics():
    got = np.asarray(R.uniform(shape=4000, range=[2.0, 6.0], rng=R.RNG(seed=11)))
    assert got.dtype == np.float32
    assert got.min() >= 2.0
    assert got.max() < 6.0
    assert abs(got.mean() - 4.0) < 0.1
    assert abs(got.var() - 16 / 12) < 0.1
    got = np.asarray(R.uniform(shape=4000, range=[0, 1], dtype=ndd.float64, rng=R.RNG(seed=2)))
    assert got.dtype == np.float64
    assert abs(got.mean() - 0.5) < 0.03
    narrow = np.asarray(R.uniform(shape=500, range=[1.0, np.nextafter(np.float32(1), 2)],
                                  rng=R.RNG(seed=5)))  # fmt: skip
    assert (narrow == 1.0).all()  # [lo, hi) with hi one ulp above lo


def test_uniform_values_picks_from_the_set():
    got = np.asarray(R.uniform(shape=600, values=[1.0, 5.0, 7.5], range=[0, 1],
                               rng=R.RNG(seed=4)))  # fmt: skip
    assert set(got.tolist()) == {1.0, 5.0, 7.5}  # values win over range
    counts = np.unique(got, return_counts=True)[1]
    assert (abs(counts - 200) < 50).all()
    per_sample = R.uniform(values=ndd.as_batch([np.array([1.0, 2.0]), np.array([9.0])]), shape=50,
                           rng=R.RNG(seed=4))  # fmt: skip
    first, second = samples_of(per_sample)
    assert set(first.tolist()) == {1.0, 2.0}
    assert set(second.tolist()) == {9.0}


def test_normal_statistics():
    got = np.asarray(R.normal(shape=4000, mean=2.0, stddev=3.0, rng=R.RNG(seed=8)))
    assert got.dtype == np.float32
    assert abs(got.mean() - 2.0) < 0.2
    assert abs(got.std() - 3.0) < 0.2
    negative = np.asarray(R.normal(shape=4000, stddev=-2.0, rng=R.RNG(seed=8)))
    assert abs(negative.std() - 2.0) < 0.15
    exact = np.asarray(R.normal(shape=5, mean=1.25, stddev=0.0, rng=R.RNG(seed=8)))
    assert (exact == 1.25).all()
    ints = np.asarray(R.normal(shape=2000, mean=250.0, stddev=20.0, dtype=ndd.uint8,
                               rng=R.RNG(seed=8)))  # fmt: skip
    assert ints.dtype == np.uint8
    assert ints.max() == 255
    assert (ints == 255).mean() > 0.2


def test_normal_64bit_integers_saturate():
    for dtype, low, high in ((ndd.uint64, 0, 2**64 - 1), (ndd.int64, -(2**63), 2**63 - 1)):
        results = run_both(R.normal, shape=200, stddev=1e20, dtype=dtype)
        assert_same(results, atol=1)  # compiled CUDA log/cos may differ by a float32 ulp
        got = results[0][0]
        assert got.dtype == dtype.numpy_dtype
        assert {int(got.min()), int(got.max())} == {low, high}


def test_normal_per_sample_mean_stddev():
    out = R.normal(shape=3000, mean=ndd.as_batch([np.float32(-5), np.float32(5)]),
                   stddev=ndd.as_batch([np.float32(0.5), np.float32(2)]), rng=R.RNG(seed=1))
    low, high = samples_of(out)
    assert abs(low.mean() + 5) < 0.1
    assert abs(low.std() - 0.5) < 0.05
    assert abs(high.mean() - 5) < 0.2
    assert abs(high.std() - 2) < 0.2


def test_scalar_coin_flips_of_a_batch_reference():
    """A coin per sample (one Philox pass, lane of each sample's block): sample i's draw is
    the first of its reserved block, 4 * i from the start; per-sample and shared probability."""
    ps = [0.1, 0.9, 0.5, 0.5, 0.0, 1.0, 0.3, 0.7, 0.5]
    n = len(ps)
    expected_u = unit24(np.concatenate([ref_draws(4, 4 * i, 1) for i in range(n)]))
    got = R.coin_flip(batch_size=n, probability=ndd.as_batch([np.float32(p) for p in ps]),
                      rng=R.RNG(seed=4))  # fmt: skip
    want = expected_u < np.array(ps, np.float32).astype(np.float64)
    np.testing.assert_array_equal([int(s) for s in samples_of(got)], want.astype(int))
    got = R.coin_flip(batch_size=n, probability=0.5, rng=R.RNG(seed=4))
    np.testing.assert_array_equal([int(s) for s in samples_of(got)], (expected_u < 0.5).astype(int))


def test_coin_flip_statistics_and_dtypes():
    got = np.asarray(R.coin_flip(shape=4000, probability=0.3, rng=R.RNG(seed=2)))
    assert got.dtype == np.int32
    assert set(got.tolist()) == {0, 1}
    assert abs(got.mean() - 0.3) < 0.03
    assert np.asarray(R.coin_flip(shape=50, probability=1.5)).all()  # > 1 behaves as 1
    assert not np.asarray(R.coin_flip(shape=50, probability=0.0)).any()
    assert np.asarray(R.coin_flip(shape=3, dtype=ndd.bool)).dtype == np.bool_
    assert np.asarray(R.coin_flip(shape=3, dtype=ndd.uint8)).dtype == np.uint8
    flips = R.coin_flip(batch_size=2, probability=ndd.as_batch([np.float32(0), np.float32(1)]),
                        shape=20)  # fmt: skip
    never, always = samples_of(flips)
    assert not never.any()
    assert always.all()


def test_choice_semantics():
    got = np.asarray(R.choice(4, shape=800, rng=R.RNG(seed=3)))
    assert got.dtype == np.int32
    assert set(got.tolist()) == {0, 1, 2, 3}
    weighted = np.asarray(R.choice(3, shape=3000, p=[0.1, 0.0, 0.9], rng=R.RNG(seed=3)))
    assert 1 not in weighted.tolist()
    assert abs((weighted == 2).mean() - 0.9) < 0.03
    values = np.asarray(R.choice(np.array([1.5, -2.5], np.float32), shape=300))
    assert values.dtype == np.float32
    assert set(values.tolist()) == {1.5, -2.5}
    rows = np.asarray(R.choice(np.array([[1, 2], [3, 4]], np.int16), shape=[5]))
    assert rows.shape == (5, 2)
    assert all(r.tolist() in ([1, 2], [3, 4]) for r in rows)
    assert np.asarray(R.choice(7)).shape == ()
    like = R.choice(3, ndd.as_batch([np.zeros((2, 3)), np.zeros((4, 1))]))
    assert like.shape == [(2, 3), (4, 1)]
    assert np.asarray(R.choice(5, shape=3, p=[0.2, 0.2, 0.2, 0.2, 0.20001])).shape == (3,)


def test_beta_statistics():
    got = np.asarray(R.beta(shape=3000, alpha=2.0, beta=5.0, rng=R.RNG(seed=6)))
    assert got.dtype == np.float32
    assert got.min() >= 0
    assert got.max() <= 1
    assert abs(got.mean() - 2 / 7) < 0.02
    assert np.asarray(R.beta(shape=3, dtype=ndd.float64)).dtype == np.float64


# ---- shapes, batches, modes -------------------------------------------------------------------
def test_shapes_and_batch_size():
    assert R.uniform().shape == ()
    assert isinstance(R.uniform(), ndd.Tensor)
    assert R.uniform(shape=0).shape == (0,)
    assert R.uniform(shape=[]).shape == ()
    assert R.uniform(shape=(2, 3)).shape == (2, 3)
    assert R.uniform(shape=ndd.as_tensor(np.array([4, 1]))).shape == (4, 1)
    out = R.normal(batch_size=3, shape=2)
    assert isinstance(out, ndd.Batch)
    assert out.shape == [(2,), (2,), (2,)]
    ragged = R.uniform(shape=ndd.as_batch([np.array([2, 2]), np.array([0, 3])]))
    assert ragged.shape == [(2, 2), (0, 3)]
    like = R.coin_flip(ndd.as_batch([np.zeros((3, 2), np.uint8), np.zeros((1,) * 2, np.uint8)]))
    assert like.shape == [(3, 2), (1, 1)]
    assert like.dtype == ndd.int32
    single = R.uniform(ndd.as_tensor(np.zeros((2, 5))))
    assert isinstance(single, ndd.Tensor)
    assert single.shape == (2, 5)
    first, second = samples_of(R.uniform(batch_size=2, shape=4, rng=R.RNG(seed=1)))
    assert not np.array_equal(first, second)  # samples get their own draws


def test_eval_modes_give_the_same_values():
    results = []
    for mode in (ndd.EvalMode.deferred, ndd.EvalMode.eager, ndd.EvalMode.sync_cpu,
                 ndd.EvalMode.sync_full):  # fmt: skip
        with mode:
            results.append(np.asarray(R.uniform(shape=16, rng=R.RNG(seed=21))))
    for r in results[1:]:
        np.testing.assert_array_equal(r, results[0])


def test_default_rng_is_used_and_advanced():
    R.set_seed(77)
    first = np.asarray(R.uniform(shape=5))
    second = np.asarray(R.uniform(shape=5))
    assert not np.array_equal(first, second)
    R.set_seed(77)
    np.testing.assert_array_equal(np.asarray(R.uniform(shape=5)), first)


def test_signatures_and_exports():
    import inspect

    assert str(inspect.signature(R.uniform)) == ("(shape_like=None, /, *, batch_size=None, "
                                                 "device=None, dtype=None, range=None, "
                                                 "shape=None, values=None, rng=None)")
    assert str(inspect.signature(R.choice)) == ("(a, shape_like=None, /, *, batch_size=None, "
                                                "device=None, p=None, shape=None, rng=None)")
    for name in ("uniform", "normal", "coin_flip", "choice", "beta", "RNG", "set_seed"):
        assert name in R.__all__
        assert hasattr(R, name)


# ---- errors -----------------------------------------------------------------------------------
@pytest.mark.parametrize(("call", "exc", "match"), [
    (lambda: R.uniform(range=[5, 5]), RuntimeError, r"random.uniform: Invalid range \[5, 5\)\."),
    (lambda: R.uniform(range=[3]), RuntimeError, r"Invalid range \[3, 3\)\."),
    (lambda: R.uniform(range=[2.5, 1]), RuntimeError, r"Invalid range \[2.5, 1\)\."),
    (lambda: R.uniform(range=[0, 1, 2]), ValueError,
     r"argument 'range' sample 0: expected \[lo, hi\]; got 3 values"),
    (lambda: R.uniform(dtype=ndd.float16), RuntimeError,
     "random.uniform: argument 'dtype' must be one of .*; got f16"),
    (lambda: R.uniform(dtype=ndd.bool), RuntimeError, "argument 'dtype' must be one of"),
    (lambda: R.uniform(values=ndd.as_batch([np.zeros(0)])), RuntimeError,
     "argument 'values' sample 0: needs at least one value"),
    (lambda: R.uniform(shape=-1), RuntimeError,
     r"argument 'shape' sample 0: extents must be non-negative; got \[-1\]"),
    (lambda: R.uniform(shape=ndd.as_batch([np.array([1, 2]), np.array([3])])), ValueError,
     "argument 'shape' sample 1: all samples need the same number of dimensions"),
    (lambda: R.uniform(np.zeros(3), shape=3), ValueError,
     "'shape' and 'shape_like' cannot both be given"),
    (lambda: R.uniform(batch_size=0), RuntimeError, "batch_size must be positive; got 0"),
    (lambda: R.uniform(range="ab"), ValueError, "argument 'range' expects"),
    (lambda: R.normal(dtype=ndd.bool), RuntimeError, "random.normal: argument 'dtype'"),
    (lambda: R.coin_flip(dtype=ndd.float32), RuntimeError,
     "random.coin_flip: argument 'dtype' must be one of bool, u8, i32; got f32"),
    (lambda: R.choice(2.5), RuntimeError,
     "random.choice: input 'a' must be an integer .*; got a f32 scalar"),
    (lambda: R.choice(np.zeros(0, np.int32)), RuntimeError,
     "input 'a' sample 0: needs at least one choice"),
    (lambda: R.choice(np.arange(3), p=[0.5, 0.5]), RuntimeError,
     "argument 'p' sample 0: expected 3 probabilities .*; got 2"),
    (lambda: R.choice(np.arange(2), p=[0.5, 0.6]), RuntimeError,
     r"argument 'p' sample 0: probabilities must sum to 1 \(within 0.0001\); got sum 1.1"),
    (lambda: R.choice(np.arange(2), p=[-0.5, 1.5]), RuntimeError,
     "probabilities must be finite and non-negative"),
    (lambda: np.asarray(R.choice(3, p=[0.5, 0.5])), RuntimeError,
     "random.choice: argument 'p' sample 0: expected 3 probabilities"),
    (lambda: np.asarray(R.choice(0)), RuntimeError,
     "input 'a' sample 0: the number of choices must be positive; got 0"),
    (lambda: R.beta(alpha=0.0), RuntimeError,
     "random.beta: argument 'alpha' sample 0: must be positive and finite; got 0"),
    (lambda: R.beta(beta=float("inf")), RuntimeError, "argument 'beta' expects a finite"),
    (lambda: R.beta(dtype=ndd.int32), RuntimeError,
     "random.beta: argument 'dtype' must be one of f32, f64; got i32"),
    (lambda: R.normal(seed=3), TypeError, "unexpected keyword argument 'seed'"),
    (lambda: R.coin_flip(rng=3), TypeError, "argument 'rng' expects an ndd.random.RNG; got int"),
    # a nested list is not a shape (DALI: "Shapes must be 1D tensors"); it was read as (3, 4, 7)
    (lambda: R.coin_flip(shape=[[3], [4], [7]], batch_size=3), ValueError,
     "random.coin_flip: argument 'shape' must be an int or a flat list of ints per sample"),
    (lambda: R.uniform(shape=ndd.as_batch([np.ones((1, 2), np.int32)] * 2)), ValueError,
     "random.uniform: argument 'shape' must be an int or a flat list of ints per sample"),
])  # fmt: skip
def test_errors(call, exc, match):
    with raises_at_call(exc, match=match):
        call()


def test_values_do_not_depend_on_the_thread_count():
    shapes = ndd.as_batch([np.array([40]), np.array([3]), np.array([0]), np.array([25])])
    results = []
    for threads in (1, 3):
        with ndd.EvalContext(num_threads=threads):
            out = R.normal(shape=shapes, stddev=ndd.as_batch([np.float32(s) for s in range(4)]),
                           rng=R.RNG(seed=31))  # fmt: skip
            results.append(samples_of(out))
    for a, b in zip(*results, strict=True):
        np.testing.assert_array_equal(a, b)
