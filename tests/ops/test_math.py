"""ndd.math: every function against NumPy in float64 (then rounded), type rules, constants,
special values, float64 accuracy of the GPU's primitive-only implementations, errors."""

import math

import numpy as np
import pytest
import torch
from _check import BACKENDS, assert_close, check_op, raises_at_call, samples_of, to_device

import ndd_triton as ndd

# function -> (NumPy reference on float64, input range)
UNARY = {
    "fabs": (np.abs, (-5, 5)), "sqrt": (np.sqrt, (0, 50)),
    "rsqrt": (lambda x: 1 / np.sqrt(x), (0.1, 50)),
    "cbrt": (np.cbrt, (-30, 30)), "exp": (np.exp, (-10, 10)), "log": (np.log, (0.01, 100)),
    "log2": (np.log2, (0.01, 100)), "log10": (np.log10, (0.01, 100)), "sin": (np.sin, (-7, 7)),
    "cos": (np.cos, (-7, 7)), "tan": (np.tan, (-1.5, 1.5)), "asin": (np.arcsin, (-1, 1)),
    "acos": (np.arccos, (-1, 1)), "atan": (np.arctan, (-20, 20)), "sinh": (np.sinh, (-5, 5)),
    "cosh": (np.cosh, (-5, 5)), "tanh": (np.tanh, (-5, 5)), "asinh": (np.arcsinh, (-50, 50)),
    "acosh": (np.arccosh, (1, 50)), "atanh": (np.arctanh, (-0.99, 0.99)),
    "floor": (np.floor, (-5, 5)), "ceil": (np.ceil, (-5, 5)), "abs": (np.abs, (-5, 5)),
}  # fmt: skip
SHAPES = [(3, 5), (1, 1), (7, 2)]


def _inputs(low, high, dtype, seed=0, shapes=SHAPES):
    rng = np.random.default_rng(seed)
    out = [rng.uniform(low, high, size=s).astype(dtype) for s in shapes]
    out[0].flat[0] = low  # the range ends (asin(+-1), acosh(1), ...)
    out[0].flat[1] = high
    return out


def _ref(fn, dtype):
    def reference(sample):
        with np.errstate(all="ignore"):
            return fn(sample.astype(np.float64)).astype(dtype)

    return reference


@pytest.mark.parametrize("name", list(UNARY))
def test_unary_float32(name):
    fn, (low, high) = UNARY[name]
    check_op(getattr(ndd.math, name), _inputs(low, high, np.float32), _ref(fn, np.float32),
             atol=1e-6, rtol=4e-6, all_modes=name == "sqrt")  # fmt: skip


@pytest.mark.parametrize("name", ["atan", "asin", "acos", "sinh", "tanh", "asinh", "acosh",
                                  "atanh", "cbrt", "log10", "tan", "exp", "cosh"])
def test_unary_float64_is_accurate(name):
    fn, (low, high) = UNARY[name]
    samples = _inputs(low, high, np.float64, seed=1, shapes=[(40, 30)])  # several tiles
    samples[0].flat[2:6] = [1e-9, -3e-5, 0.25, -0.75]  # small arguments: no cancellation
    samples[0] = np.clip(samples[0], low, high)
    check_op(getattr(ndd.math, name), samples, _ref(fn, np.float64), atol=1e-15, rtol=1e-13,
             all_modes=False)  # fmt: skip


@pytest.mark.parametrize("backend", BACKENDS)
def test_integer_inputs_and_abs(backend):
    x = to_device(ndd.as_batch([np.array([-128, -3, 0, 5, 127], np.int8)]), backend)
    assert ndd.math.sqrt(x).dtype == ndd.float32
    assert ndd.math.floor(x).dtype == ndd.float32
    absolute = ndd.math.abs(x)
    assert absolute.dtype == ndd.int8
    assert samples_of(absolute)[0].tolist() == [-128, 3, 0, 5, 127]
    assert samples_of(ndd.math.fabs(x))[0].tolist() == [128.0, 3.0, 0.0, 5.0, 127.0]
    u8 = to_device(ndd.as_batch([np.array([4, 9, 250], np.uint8)]), backend)
    assert samples_of(ndd.math.sqrt(u8))[0].tolist() == [2.0, 3.0, np.float32(np.sqrt(250))]
    assert samples_of(ndd.math.abs(u8))[0].tolist() == [4, 9, 250]
    f16 = to_device(ndd.as_batch([np.array([0.25, 4.0], np.float16)]), backend)
    result = ndd.math.sqrt(f16)
    assert result.dtype == ndd.float16
    assert samples_of(result)[0].tolist() == [0.5, 2.0]


@pytest.mark.parametrize("backend", BACKENDS)
def test_binary_functions(backend):
    rng = np.random.default_rng(3)
    a = [rng.uniform(-4, 4, s).astype(np.float32) for s in SHAPES]
    b = [rng.uniform(-4, 4, s).astype(np.float32) for s in SHAPES]
    left = to_device(ndd.as_batch(a), backend)
    right = to_device(ndd.as_batch(b), backend)
    cases = {
        "atan2": np.arctan2, "min": np.minimum, "max": np.maximum,
        "fpow": lambda x, y: np.power(np.abs(x), y),
    }  # fmt: skip
    for name, fn in cases.items():
        base = ndd.math.fabs(left) if name == "fpow" else left
        result = getattr(ndd.math, name)(base, right)
        assert result.dtype == ndd.float32
        for i, g in enumerate(samples_of(result)):
            with np.errstate(all="ignore"):
                exp = fn(a[i].astype(np.float64), b[i].astype(np.float64)).astype(np.float32)
            assert_close(g, exp, atol=1e-6, rtol=4e-6, where=f"{name}[{backend}] sample {i}")


@pytest.mark.parametrize("backend", BACKENDS)
def test_pow_types_and_special_values(backend):
    u8 = to_device(ndd.as_batch([np.array([0, 2, 3, 16], np.uint8)]), backend)
    result = ndd.math.pow(u8, 2)
    assert result.dtype == ndd.int32
    assert samples_of(result)[0].tolist() == [0, 4, 9, 256]
    assert samples_of(ndd.math.pow(u8, u8))[0].tolist() == [1, 4, 27, 0]  # wraps in uint8
    i32 = to_device(ndd.as_batch([np.array([2, -2, 1], np.int32)]), backend)
    assert samples_of(ndd.math.pow(i32, -1))[0].tolist() == [0, 0, 0]
    fp = ndd.math.fpow(u8, 2)
    assert fp.dtype == ndd.float32
    assert samples_of(fp)[0].tolist() == [0.0, 4.0, 9.0, 256.0]
    base = to_device(ndd.as_batch([np.array([-2, -2, -2, 0, 0, np.nan, 1], np.float32)]), backend)
    expo = to_device(ndd.as_batch([np.array([3, 2, 0.5, -1, 0, 0, np.nan], np.float32)]), backend)
    got = samples_of(ndd.math.pow(base, expo))[0]
    assert got[:2].tolist() == [-8.0, 4.0]
    assert np.isnan(got[2])
    assert got[3] == np.inf
    assert got[4:].tolist() == [1.0, 1.0, 1.0]
    x = to_device(ndd.as_batch([np.array([-2.5, 0.0, -1.0, 2.0], np.float32)]), backend)
    assert np.isnan(samples_of(ndd.math.sqrt(x))[0][0])
    assert samples_of(ndd.math.log(x))[0][1] == -np.inf
    assert np.isnan(samples_of(ndd.math.asin(x))[0][3])
    assert samples_of(ndd.math.atanh(x))[0][2] == -np.inf
    assert samples_of(ndd.math.atan(to_device(ndd.as_batch([np.array([np.inf], np.float32)]),
                                              backend)))[0][0] == np.float32(math.pi / 2)


@pytest.mark.parametrize("backend", BACKENDS)
def test_min_max_clamp_promotion(backend):
    u8 = to_device(ndd.as_batch([np.array([[5, 60], [120, 250]], np.uint8),
                                 np.array([[0]], np.uint8)]), backend)  # fmt: skip
    clamped = ndd.math.clamp(u8, 50, 200)
    assert clamped.dtype == ndd.int32
    assert [s.tolist() for s in samples_of(clamped)] == [[[50, 60], [120, 200]], [[50]]]
    assert ndd.math.min(u8, 100).dtype == ndd.int32
    assert ndd.math.max(u8, np.uint8(100)).dtype == ndd.uint8
    i32 = to_device(ndd.as_batch([np.array([-3, 0, 3], np.int32)]), backend)
    result = ndd.math.clamp(i32, -1.5, 2.5)
    assert result.dtype == ndd.float32
    assert samples_of(result)[0].tolist() == [-1.5, 0.0, 2.5]
    lo = to_device(ndd.as_batch([np.array(-1, np.int16), np.array(0, np.int16)]), backend)
    hi = to_device(ndd.as_tensor(np.array([1, 2, 3], np.int16)), backend)
    per_sample = ndd.math.clamp(ndd.as_batch([np.array([-5, 5, 5], np.int16),
                                              np.array([-5, 1, 5], np.int16)]).to_device(
        u8.device), lo, hi)  # fmt: skip
    assert [s.tolist() for s in samples_of(per_sample)] == [[-1, 2, 3], [0, 1, 3]]


def test_one_launch_per_call():
    batch = ndd.as_batch([np.ones((40, 30), np.float32), np.ones((2, 3), np.float32)]).gpu()
    with ndd.profile() as prof:
        ndd.math.atan(batch).evaluate()
        ndd.math.clamp(batch, 0.5, batch).evaluate()
        ndd.math.pow(batch, 3).evaluate()
    assert [r.gpu_launches for r in prof.records] == [1, 1, 1]


def test_errors():
    batch = ndd.as_batch([np.zeros((2,), np.float32)])
    with raises_at_call(TypeError, match=r"math.pow: operands must be Tensors, Batches, arrays or "
                                        r"numbers; got Batch, str"):
        ndd.math.pow(batch, "2")
    with raises_at_call(OverflowError, match=r"math\.clamp: the Python int constant 3000000000"):
        ndd.math.clamp(batch, 0, 3_000_000_000)
    with raises_at_call(ValueError, match=r"math.min: Can't broadcast shapes \(2,\), \(3,\)"):
        ndd.math.min(batch, np.zeros(3, np.float32))
    with raises_at_call(ValueError, match=r"math\.atan2: Inconsistent batch size: 2 != 1"):
        ndd.math.atan2(batch, ndd.as_batch([np.zeros(2, np.float32)] * 2))
    bf16 = ndd.as_batch([torch.zeros(2, dtype=torch.bfloat16)])
    with raises_at_call(TypeError, match=r"math\.sqrt: data type bfloat16 is not supported"):
        ndd.math.sqrt(bf16)
    assert ndd.math.sqrt(4).dtype == ndd.float32  # a scalar alone becomes an int32 tensor
    assert float(np.asarray(ndd.math.pow(2, 10))) == 1024


def test_rsqrt_of_zero_matches_dali():
    # DALI 2.4 (recorded): float32 rsqrt gives NaN at +-0 (an approximation); float64 gives +-inf
    x = np.array([[0.0, -0.0, 4.0]], np.float32)
    for dev in ("cpu", "gpu"):
        f32 = np.asarray(ndd.math.rsqrt(ndd.as_tensor(x), device=dev).cpu())
        assert np.isnan(f32[0, :2]).all()
        assert f32[0, 2] == 0.5
        i32 = np.asarray(ndd.math.rsqrt(ndd.as_tensor(np.array([0, 4], np.int32)),
                                        device=dev).cpu())  # fmt: skip
        assert np.isnan(i32[0])
        f64 = np.asarray(ndd.math.rsqrt(ndd.as_tensor(x.astype(np.float64)), device=dev).cpu())
        assert f64[0, :2].tolist() == [np.inf, -np.inf]
