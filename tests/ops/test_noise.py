"""noise.gaussian / salt_and_pepper / shot (ops.md 8.1-8.3).

References recompute the documented per-element draw rule with the independent scalar Philox
(tests/reference/philox_ref.py); shot noise is checked against the Poisson pmf; CPU == GPU and
one launch per batch are checked on top.
"""

import math

import numpy as np
import pytest
from _check import check_op, raises_at_call, samples_of
from reference.philox_ref import draw

import ndd_triton as ndd

N = ndd.noise
RNG = ndd.random.RNG


def bases(counts):
    out, pos = [], 0
    for c in counts:
        out.append(pos)
        pos += (c + 3) // 4 * 4
    return out


def unit24(u):
    return (u >> 8) / 2.0**24


def images(shapes, dtype=np.uint8, seed=0):
    gen = np.random.default_rng(seed)
    return [gen.integers(0, 255, size=s).astype(dtype) for s in shapes]


def run_both(fn, samples, layout=None, seed=5, **kwargs):
    results = []
    for device in ("cpu", "gpu"):
        batch = ndd.as_batch(samples, layout=layout)
        batch = batch.gpu() if device == "gpu" else batch
        out = fn(batch, rng=RNG(seed=seed), **kwargs)
        assert out.device.device_type == device
        assert out.layout == batch.layout
        assert out.dtype == batch.dtype
        assert out.shape == batch.shape
        results.append(samples_of(out))
    return results


def assert_same(results, atol=0.0):
    for a, b in zip(*results, strict=True):
        assert a.dtype == b.dtype
        assert a.shape == b.shape
        np.testing.assert_allclose(a.astype(np.float64), b.astype(np.float64), atol=atol, rtol=0)


# ---- salt and pepper --------------------------------------------------------------------------
def ref_salt_and_pepper(x, base, key, prob, svp, salt, pepper, channel_axis):
    """Pixel = all values sharing the indices outside `channel_axis` (None: each value)."""
    moved = np.moveaxis(x, channel_axis, -1) if channel_axis is not None else x[..., None]
    flat = moved.reshape(-1, moved.shape[-1]).copy()
    for p in range(flat.shape[0]):
        if unit24(draw(key, base + 2 * p)) < prob:
            flat[p] = salt if unit24(draw(key, base + 2 * p + 1)) < svp else pepper
    out = flat.reshape(moved.shape)
    return np.moveaxis(out, -1, channel_axis) if channel_axis is not None else out[..., 0]


def test_salt_and_pepper_reference_hwc_and_chw():
    samples = images([(4, 5, 3), (2, 3, 3)])
    starts = bases([2 * 20, 2 * 6])
    results = run_both(N.salt_and_pepper, samples, "HWC", prob=0.3, salt_vs_pepper=0.4)
    assert_same(results)
    for i, got in enumerate(results[0]):
        expected = ref_salt_and_pepper(samples[i], starts[i], 5, 0.3, 0.4, 255, 0, 2)
        np.testing.assert_array_equal(got, expected)
    chw = [np.ascontiguousarray(s.transpose(2, 0, 1)) for s in samples]
    results = run_both(N.salt_and_pepper, chw, "CHW", prob=0.5, salt_val=200, pepper_val=7)
    assert_same(results)
    for i, got in enumerate(results[0]):
        expected = ref_salt_and_pepper(chw[i], starts[i], 5, 0.5, 0.5, 200, 7, 0)
        np.testing.assert_array_equal(got, expected)


def test_salt_and_pepper_per_channel_and_layoutless():
    x = np.full((30, 30, 3), 100, np.uint8)
    shared = np.asarray(N.salt_and_pepper(ndd.as_tensor(x, layout="HWC"), prob=0.2))
    assert set(np.unique(shared).tolist()) == {0, 100, 255}
    assert (shared == shared[..., :1]).all()  # one decision per pixel
    assert abs((shared[..., 0] != 100).mean() - 0.2) < 0.05
    independent = np.asarray(N.salt_and_pepper(ndd.as_tensor(x), prob=0.5, per_channel=True,
                                               rng=RNG(seed=1)))  # fmt: skip
    assert (independent != independent[..., :1]).any()
    assert abs((independent != 100).mean() - 0.5) < 0.05
    flat = ndd.as_tensor(np.full(8, 3.0, np.float32))  # layout-less 1-D: one pixel
    outs = [np.asarray(N.salt_and_pepper(flat, prob=0.5, rng=RNG(seed=s))) for s in range(12)]
    assert all(len(set(o.tolist())) == 1 for o in outs)
    assert {float(o[0]) for o in outs} == {3.0, 1.0, -1.0}  # float defaults: salt 1, pepper -1
    gray = np.full((6, 7), 9, np.int16)  # HW: no channel axis, every value decides alone
    got = np.asarray(N.salt_and_pepper(ndd.as_tensor(gray, layout="HW"), prob=1.0,
                                       rng=RNG(seed=2)))  # fmt: skip
    assert set(np.unique(got).tolist()) == {-32768, 32767}


def test_salt_and_pepper_per_sample_args():
    samples = images([(3, 3, 3), (3, 3, 3)])
    prob = ndd.as_batch([np.float32(0.0), np.float32(1.0)])
    salt = ndd.as_batch([np.float32(1), np.float32(77)])
    for got in run_both(N.salt_and_pepper, samples, "HWC", prob=prob, salt_vs_pepper=1.0,
                        salt_val=salt):  # fmt: skip
        np.testing.assert_array_equal(got[0], samples[0])
        assert (got[1] == 77).all()


# ---- gaussian ---------------------------------------------------------------------------------
def ref_gaussian(x, base, key, mean, stddev):
    n = x.size
    d = np.array([draw(key, base + i) for i in range(2 * n)], dtype=np.uint64).reshape(n, 2)
    u1 = ((d[:, 0] >> np.uint64(8)) + np.uint64(1)).astype(np.float64) / 2.0**24
    u2 = (d[:, 1] >> np.uint64(8)).astype(np.float64) / 2.0**24
    z = np.sqrt(-2.0 * np.log(u1)) * np.cos(2.0 * np.pi * u2)
    return x.astype(np.float64) + (mean + stddev * z).reshape(x.shape)


def test_gaussian_reference_float_ragged_per_sample():
    samples = [np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4),
               np.zeros((1, 5), np.float32)]  # fmt: skip
    means, stds = [0.5, -2.0], [1.5, 0.25]
    starts = bases([2 * 12, 2 * 5])
    results = run_both(N.gaussian, samples, mean=ndd.as_batch([np.float32(m) for m in means]),
                       stddev=ndd.as_batch([np.float32(s) for s in stds]))  # fmt: skip
    assert_same(results, atol=1e-6)
    for i, got in enumerate(results[0]):
        expected = ref_gaussian(samples[i], starts[i], 5, means[i], stds[i])
        np.testing.assert_allclose(got, expected.astype(np.float32), rtol=2e-6, atol=2e-6)


def test_gaussian_integer_rounds_and_saturates():
    x = np.full((40, 50), 250, np.uint8)
    got = np.asarray(N.gaussian(ndd.as_tensor(x), stddev=20.0, rng=RNG(seed=3)))
    assert got.dtype == np.uint8
    assert got.max() == 255
    assert got.min() < 230
    assert (got == 255).mean() > 0.3
    exact = np.asarray(N.gaussian(ndd.as_tensor(np.arange(6, dtype=np.int32)), mean=0.5,
                                  stddev=0.0))  # fmt: skip
    np.testing.assert_array_equal(exact, np.arange(6) + 1)  # x + 0.5 rounds half away
    samples = [np.full((4, 6), 100, np.int16), np.full((3, 1), -7, np.int16)]
    assert_same(run_both(N.gaussian, samples, stddev=30.0), atol=1)
    half = [np.full((5, 5), 1.0, np.float16)]
    assert_same(run_both(N.gaussian, half, stddev=0.1), atol=1e-3)


def test_gaussian_statistics():
    got = np.asarray(N.gaussian(ndd.as_tensor(np.zeros(4000, np.float32)), mean=1.0, stddev=2.0,
                                rng=RNG(seed=9)))  # fmt: skip
    assert abs(got.mean() - 1.0) < 0.15
    assert abs(got.std() - 2.0) < 0.15


# ---- shot -------------------------------------------------------------------------------------
def poisson_pmf(k, lam):
    return math.exp(-lam + k * math.log(lam) - math.lgamma(k + 1))


@pytest.mark.parametrize("lam", [2.0, 30.0])
def test_shot_matches_poisson_pmf(lam):
    factor = 4.0
    x = np.full(4000, lam * factor, np.float32)
    got = np.asarray(N.shot(ndd.as_tensor(x), factor=factor, rng=RNG(seed=12)))
    counts = got / factor
    assert (counts == np.round(counts)).all()  # multiples of the factor
    assert abs(counts.mean() - lam) < 0.1 * math.sqrt(lam) + 0.05
    assert abs(counts.var() - lam) < 0.15 * lam
    for k in range(int(lam) - 2, int(lam) + 3):
        if k >= 0:
            assert abs((counts == k).mean() - poisson_pmf(k, lam)) < 0.025


def test_shot_u8_statistics_and_edge_cases():
    x = np.full((60, 60), 100, np.uint8)
    got = np.asarray(N.shot(ndd.as_tensor(x), factor=10.0, rng=RNG(seed=1))).astype(np.float64)
    assert abs(got.mean() - 100) < 3
    assert abs(got.var() - 1000) < 150
    negative = np.array([-5.0, -0.1, 0.0], np.float32)
    np.testing.assert_array_equal(np.asarray(N.shot(ndd.as_tensor(negative))), np.zeros(3))
    same = images([(3, 4)])[0]
    np.testing.assert_array_equal(np.asarray(N.shot(ndd.as_tensor(same), factor=0.0)), same)


def test_shot_cpu_equals_gpu_both_branches_per_sample_factor():
    samples = [np.array([[0, 3, 8, 40], [255, 17, 1, 90]], np.uint8),
               np.array([[5, 250, 60]], np.uint8)]  # fmt: skip
    factor = ndd.as_batch([np.float32(2.0), np.float32(0.5)])  # lam up to 500: PTRS branch
    assert_same(run_both(N.shot, samples, factor=factor))
    floats = [np.array([0.5, 12.0, 3000.0], np.float32)]
    assert_same(run_both(N.shot, floats, factor=1.0))
    assert_same(run_both(N.shot, floats, factor=0.0))


# ---- deterministic limits through the common battery (all modes, Batch/Tensor, metadata) ------
def _round_sat_u8(x):
    return np.clip(np.floor(np.abs(x) + 0.5) * np.sign(x), 0, 255).astype(np.uint8)


def test_battery_gaussian_with_zero_stddev_is_a_shift():
    samples = images([(3, 4, 3), (1, 2, 3), (5, 1, 3)])
    check_op(N.gaussian, samples, lambda s, mean, stddev: _round_sat_u8(s + np.float32(mean)),
             per_sample={"mean": [np.float32(2.5), np.float32(-300), np.float32(0.49)],
                         "stddev": [np.float32(0)] * 3}, layout="HWC")  # fmt: skip


def test_battery_salt_and_pepper_limits():
    samples = images([(3, 4, 3), (2, 2, 3)])
    check_op(N.salt_and_pepper, samples, lambda s, **a: np.full_like(s, 9),
             args={"prob": 1.0, "salt_vs_pepper": 1.0, "salt_val": 9.4}, layout="HWC")
    check_op(N.salt_and_pepper, samples, lambda s, **a: s.copy(), args={"prob": 0.0},
             layout="HWC", all_modes=False)  # fmt: skip


def test_battery_shot_factor_zero_is_identity():
    samples = [np.linspace(-3, 7, 10, dtype=np.float32).reshape(2, 5), np.ones((1, 2), np.float32)]
    check_op(N.shot, samples, lambda s, **a: s.copy(), args={"factor": 0.0}, all_modes=False)


# ---- shared -----------------------------------------------------------------------------------
@pytest.mark.parametrize("op", [N.gaussian, N.salt_and_pepper, N.shot])
def test_one_launch_per_batch_and_input_untouched(op):
    samples = images([(3, 5, 3), (9, 2, 3), (1, 1, 3)])
    originals = [s.copy() for s in samples]
    batch = ndd.as_batch(samples, layout="HWC").gpu()
    with ndd.profile() as prof:
        op(batch).evaluate()
    (record,) = prof.records
    assert record.gpu_launches == 1
    for s, o in zip(samples, originals, strict=True):
        np.testing.assert_array_equal(s, o)


@pytest.mark.parametrize(("op", "kwargs"), [(N.gaussian, {}), (N.salt_and_pepper, {"prob": 0.5}),
                                             (N.shot, {})])  # fmt: skip
def test_same_seed_same_noise_and_rng_advances(op, kwargs):
    x = ndd.as_tensor(images([(4, 4, 3)])[0], layout="HWC")
    a = np.asarray(op(x, rng=RNG(seed=4), **kwargs))
    b = np.asarray(op(x, rng=RNG(seed=4), **kwargs))
    np.testing.assert_array_equal(a, b)
    rng = RNG(seed=4)
    first, second = np.asarray(op(x, rng=rng, **kwargs)), np.asarray(op(x, rng=rng, **kwargs))
    assert not np.array_equal(first, second)


@pytest.mark.parametrize(("call", "exc", "match"), [
    (lambda: N.gaussian(np.zeros(3, np.bool_)), TypeError,
     "noise.gaussian: input 0 has dtype bool; expected one of"),
    (lambda: N.salt_and_pepper(ndd.as_tensor(np.zeros((2, 2), np.uint8), layout="HW"),
                               per_channel=True), ValueError,
     "noise.salt_and_pepper: argument 'per_channel' needs an input with a 'C' axis or no "
     "layout; got layout 'HW'"),
    (lambda: N.shot(np.zeros(3, np.uint8), rng=1), TypeError,
     "noise.shot: argument 'rng' expects an ndd.random.RNG; got int"),
    (lambda: N.shot(np.zeros(3, np.uint8), seed=1), TypeError,
     "unexpected keyword argument 'seed'"),
    (lambda: N.gaussian(np.zeros(3, np.float32), stddev=[1.0, 2.0]), TypeError,
     "noise.gaussian: argument 'stddev' expects a float"),
    (lambda: N.salt_and_pepper(np.zeros(3, np.float32), prob="x"), ValueError,
     "noise.salt_and_pepper: argument 'prob' expects a float"),
    (lambda: N.gaussian(ndd.as_batch([np.zeros(2, np.float32)] * 2),
                        mean=ndd.as_batch([np.float32(0)] * 3)), ValueError,
     "Inconsistent batch size"),
])  # fmt: skip
def test_errors(call, exc, match):
    with raises_at_call(exc, match=match):
        call()
