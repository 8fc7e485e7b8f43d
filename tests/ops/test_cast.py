"""cast, cast_like: an independent float64 reference of DALI's conversion rules (ops.md §4.7)."""

import numpy as np
import pytest
from _check import check_op, raises_at_call

import ndd_triton as ndd

SPECIAL = np.array([-1.5, -0.5, 0.5, 1.5, 2.5, 254.6, 255.5, 300, np.nan, np.inf, -np.inf,
                    0.49999997, -0.49999997, 8388609.0, -129.5, 2.0e9, 3.0e9, -3.0e9, 1e19,
                    65519.0, 70000.0], dtype=np.float32)  # fmt: skip


def ref_convert(x, dtype):
    """Round half away from zero, saturate; NaN -> 0 below 32 bits, else the minimum."""
    dtype = np.dtype(dtype)
    x = np.asarray(x)
    if dtype.kind == "b":
        if x.dtype.kind == "f":
            return (np.abs(x.astype(np.float64)) >= 0.5) | np.isnan(x)
        return x != 0
    if dtype.kind == "f":
        with np.errstate(over="ignore"):
            return x.astype(dtype)
    info = np.iinfo(dtype)
    out = []
    for v in x.reshape(-1).tolist():  # Python ints/floats: exact, obviously correct
        if isinstance(v, float):
            if v != v:
                out.append(info.min if dtype.itemsize >= 4 else 0)
                continue
            if abs(v) == float("inf"):
                out.append(info.max if v > 0 else info.min)
                continue
            whole = int(v)  # truncates toward zero
            frac = v - whole
            v = whole + (1 if frac >= 0.5 else -1 if frac <= -0.5 else 0)
        out.append(min(max(int(v), int(info.min)), int(info.max)))
    return np.array(out, dtype=dtype).reshape(x.shape)


TARGETS = [np.uint8, np.int8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.float16,
           np.float64, np.bool_]  # fmt: skip


@pytest.mark.parametrize("target", TARGETS)
def test_cast_float32_special_values(target):
    samples = [SPECIAL, SPECIAL[::-1][:7].copy()]
    check_op(ndd.cast, samples, lambda s, dtype: ref_convert(s, target),
             args={"dtype": ndd.dtype(target)}, all_modes=False)  # fmt: skip


@pytest.mark.parametrize(
    ("source", "target"),
    [
        (np.int32, np.uint8),
        (np.int32, np.int8),
        (np.uint8, np.int8),
        (np.int64, np.int16),
        (np.uint32, np.int32),
        (np.uint64, np.int64),
        (np.int16, np.uint64),
        (np.bool_, np.int32),
        (np.int32, np.float32),
        (np.float64, np.int32),
        (np.uint8, np.bool_),
        (np.float16, np.int8),
    ],
)
def test_cast_integer_saturation(source, target):
    rng = np.random.default_rng(1)
    if np.dtype(source).kind == "b":
        values = rng.integers(0, 2, 40).astype(bool)
    elif np.dtype(source).kind == "f":
        values = (rng.standard_normal(40) * 300).astype(source)
    else:
        info = np.iinfo(source)
        extremes = np.array([info.min, info.max, 0, 1], dtype=source)
        values = np.concatenate([extremes, rng.integers(info.min, info.max, 36, dtype=source,
                                                        endpoint=True)])  # fmt: skip
    samples = [values.reshape(5, 8), values[:6].reshape(2, 3)]
    check_op(ndd.cast, samples, lambda s, dtype: ref_convert(s, target),
             args={"dtype": ndd.dtype(target)}, all_modes=False)  # fmt: skip


def test_cast_keeps_layout_and_several_tiles_in_all_modes():
    rng = np.random.default_rng(2)
    samples = [
        (rng.standard_normal((30, 41, 3)) * 200).astype(np.float32),
        (rng.standard_normal((1, 1, 3)) * 200).astype(np.float32),
    ]
    check_op(ndd.cast, samples, lambda s, dtype: ref_convert(s, np.uint8),
             args={"dtype": ndd.uint8}, layout="HWC")  # fmt: skip
    out = ndd.cast(ndd.as_batch(samples, layout="HWC"), dtype=ndd.int16)
    assert out.layout == "HWC"


@pytest.mark.parametrize("backend", ["cpu", "gpu"])
def test_cast_like_takes_dtype_from_like_and_broadcasts_a_tensor(backend):
    samples = [np.array([1.5, -2.5, 300.0], np.float32), np.array([0.4, 70000.0], np.float32)]
    batch = ndd.as_batch(samples)
    like = ndd.as_tensor(np.zeros((4, 4), np.int16))
    if backend == "gpu":
        batch, like = batch.gpu(), like.gpu()
    out = ndd.cast_like(batch, like)
    assert out.dtype == ndd.int16
    assert out.device.device_type == backend
    for got, sample in zip(out.cpu(), samples, strict=False):
        np.testing.assert_array_equal(np.asarray(got), ref_convert(sample, np.int16))
    like_batch = ndd.as_batch([np.zeros(1, np.uint8)] * 2)
    out = ndd.cast_like(batch, like_batch.gpu() if backend == "gpu" else like_batch)
    assert [np.asarray(s).tolist() for s in out.cpu()] == [[2, 0, 255], [0, 255]]


def test_cast_errors():
    x = np.zeros(3, np.float32)
    with raises_at_call(TypeError, match="cast: argument 'dtype' is bfloat16"):
        ndd.cast(x, dtype=ndd.bfloat16)
    with raises_at_call(TypeError, match="missing 1 required keyword-only argument: 'dtype'"):
        ndd.cast(x)
    with raises_at_call(TypeError, match="cast: argument 'dtype' expects a dtype"):
        ndd.cast(x, dtype="not-a-type")
    bf16 = ndd.as_tensor(np.zeros(2, np.float32)).torch().to(__import__("torch").bfloat16)
    with raises_at_call(TypeError, match=r"cast_like: input 1 .*bfloat16"):
        ndd.cast_like(x, ndd.as_tensor(bf16))
    with raises_at_call(TypeError, match="cast: input 0 has dtype bfloat16; expected one of"):
        ndd.cast(ndd.as_tensor(bf16), dtype=ndd.float32)


@pytest.mark.parametrize("op", ["cast", "cast_like"])
def test_cast_one_launch_per_ragged_batch(op):
    batch = ndd.as_batch([np.ones((3, 5), np.float32), np.ones((9, 2), np.float32)]).gpu()
    with ndd.profile() as prof:
        if op == "cast":
            ndd.cast(batch, dtype=ndd.uint8).evaluate()
        else:
            ndd.cast_like(batch, ndd.as_tensor(np.zeros(1, np.int8)).gpu()).evaluate()
    assert [r.gpu_launches for r in prof.records if r.op == op] == [1]
