"""Per-sample argument conversion: the vectorised path for uniform host batches matches the
per-sample path (values, dtypes and errors)."""

from __future__ import annotations

import numpy as np
import pytest

import ndd_triton as ndd
from ndd_triton.ops import args as _args
from ndd_triton.ops.schema import Arg

CASES = [
    (Arg("x", "float", per_sample=True), np.array([[1.5], [2.0], [-3.25]], np.float32)),
    (Arg("x", "int", per_sample=True), np.array([1.9, -2.7, 3.0], np.float64)),
    (Arg("x", "bool", per_sample=True), np.array([1, 0, 1], np.int32)),
    (Arg("x", "enum", per_sample=True), np.array([[0], [1], [2]], np.uint8)),
    (Arg("x", "float", vector=True, per_sample=True), np.arange(6, dtype=np.int16).reshape(3, 2)),
    (Arg("x", "float", vector=True, length=3, per_sample=True), np.arange(3.0).reshape(3, 1)),
    (Arg("x", "int", vector=True, length=2, per_sample=True), np.arange(6).reshape(3, 2)),
    (Arg("x", "float", vector=True, length=2, per_sample=True), np.arange(6.0).reshape(3, 1, 2)),
]


def _both(monkeypatch: pytest.MonkeyPatch, arg: Arg, data: np.ndarray):  # type: ignore[no-untyped-def]
    batch = ndd.as_batch(data)  # one (N, ...) array: the dense path
    assert _args._dense_host_array(batch) is not None
    fast = _args.per_sample_value("op", arg, batch, len(data))
    with monkeypatch.context() as m:
        m.setattr(_args, "_dense_host_array", lambda value: None)
        slow = _args.per_sample_value("op", arg, batch, len(data))
    return fast, slow


@pytest.mark.parametrize(("arg", "data"), CASES,
                         ids=[f"{a.kind}-{a.vector}-{a.length}" for a, _ in CASES])
def test_dense_batch_argument_matches_per_sample_conversion(monkeypatch, arg, data):
    fast, slow = _both(monkeypatch, arg, data)
    assert isinstance(slow, np.ndarray)
    assert fast.dtype == slow.dtype and fast.shape == slow.shape
    np.testing.assert_array_equal(fast, slow)
    data[...] = 0  # the converted values do not alias the batch
    np.testing.assert_array_equal(fast, slow)


@pytest.mark.parametrize("arg,data,message", [
    (Arg("x", "float", per_sample=True), np.zeros((3, 2), np.float32),
     r"argument 'x' sample 0 expects a scalar per sample; got shape \(2,\)"),
    (Arg("x", "float", vector=True, length=3, per_sample=True), np.zeros((3, 2), np.float32),
     "argument 'x' sample 0: expected 3 values; got 2"),
])
def test_dense_batch_argument_errors_match(monkeypatch, arg, data, message):
    batch = ndd.as_batch(data)
    with pytest.raises(ValueError, match=message):
        _args.per_sample_value("op", arg, batch, len(data))
    monkeypatch.setattr(_args, "_dense_host_array", lambda value: None)
    with pytest.raises(ValueError, match=message):
        _args.per_sample_value("op", arg, batch, len(data))


def test_flip_with_a_coin_flip_batch_flips_the_chosen_samples():
    images = np.arange(8 * 2 * 4 * 1, dtype=np.uint8).reshape(8, 2, 4, 1)
    flips = ndd.random.coin_flip(batch_size=8, rng=ndd.random.RNG(seed=3))
    chosen = [bool(np.asarray(flips.select(i))) for i in range(8)]
    assert 0 < sum(chosen) < 8
    out = ndd.flip(ndd.as_batch(images, layout="HWC"), horizontal=flips)
    for i, flipped in enumerate(chosen):
        expected = images[i, :, ::-1] if flipped else images[i]
        np.testing.assert_array_equal(np.asarray(out.select(i)), expected)


# Long constant lists and arrays (box_encoder's thousands of anchor coordinates) convert in
# one NumPy pass; the result must be the value-by-value conversion's, and values that need
# the per-value path (NaN, huge ints, mixed kinds) still get its exact error.
LONG = [
    (Arg("x", "float", vector=True), np.linspace(-3, 3, 40, dtype=np.float32)),
    (Arg("x", "float", vector=True), np.linspace(-3, 3, 40).tolist()),
    (Arg("x", "float", vector=True), np.arange(24, dtype=np.int16).reshape(6, 4)),
    (Arg("x", "float", vector=True), list(range(20))),
    (Arg("x", "int", vector=True), np.linspace(-9.7, 9.7, 30)),
    (Arg("x", "int", vector=True), list(range(-10, 10))),
    (Arg("x", "int", vector=True), np.arange(20, dtype=np.uint64)),
    (Arg("x", "int", vector=True), [True] * 10 + [2] * 10),
    (Arg("x", "float", vector=True), [1, 2.5] * 10),
    (Arg("fill_value", "float", vector=True), [float("nan")] * 20),
]


@pytest.mark.parametrize(("arg", "value"), LONG, ids=[str(i) for i in range(len(LONG))])
def test_long_constant_lists_convert_as_value_by_value(arg, value):
    fast = _args.constant_value("op", arg, value)
    slow = [_args.convert_scalar("op", arg, v) for v in np.asarray(value, dtype=object).ravel()]
    assert [type(v) for v in fast] == [type(v) for v in slow]
    assert [repr(v) for v in fast] == [repr(v) for v in slow]


@pytest.mark.parametrize("value", [[1.0] * 19 + [float("nan")], np.array([1.0] * 19 + [np.inf],
                                   np.float32), [1.0] * 19 + [1e39]])  # fmt: skip
def test_long_constant_lists_keep_the_per_value_error(value):
    with pytest.raises(ValueError, match="argument 'x' expects a finite number"):
        _args.constant_value("op", Arg("x", "float", vector=True), value)


def test_long_int_lists_out_of_int64_keep_the_per_value_error():
    with pytest.raises(ValueError, match="argument 'x' expects an integer within int64"):
        _args.constant_value("op", Arg("x", "int", vector=True), [2**70] + [1] * 20)
