"""preemphasis_filter against a loop reference (ops.md §6.1)."""

import numpy as np
import pytest
from _check import check_op, raises_at_call
from reference.audio import preemphasis

import ndd_triton as ndd

RNG = np.random.default_rng(7)


@pytest.mark.parametrize("border", ["zero", "clamp", "reflect"])
def test_preemphasis_borders_odd_lengths_and_one_sample(border):
    samples = [RNG.standard_normal(n).astype(np.float32) for n in (1, 2, 1027, 5)]
    check_op(ndd.preemphasis_filter, samples, preemphasis, args={"border": border},
             atol=1e-6, rtol=1e-6, all_modes=border == "clamp")  # fmt: skip


def test_preemphasis_per_sample_coefficient_and_multichannel():
    samples = [RNG.standard_normal((9, 2)).astype(np.float32),
               RNG.standard_normal((1500, 1)).astype(np.float32)]  # fmt: skip
    check_op(ndd.preemphasis_filter, samples, preemphasis, per_sample={"preemph_coeff": [0.5, 0.9]},
             atol=1e-6, rtol=1e-6, all_modes=False)  # fmt: skip


def test_preemphasis_int16_in_float_and_int16_out():
    samples = [np.array([1000, -32768, 32767, 7], np.int16), np.array([3], np.int16)]
    check_op(ndd.preemphasis_filter, samples, preemphasis, atol=1e-2, rtol=1e-6, all_modes=False)
    check_op(ndd.preemphasis_filter, samples, lambda s, **a: preemphasis(s, dtype=np.int16),
             args={"dtype": ndd.int16}, all_modes=False)  # fmt: skip


def test_preemphasis_spec_example_and_silence():
    x = np.array([1, 2, 3, 4], np.float32)
    assert np.allclose(np.asarray(ndd.preemphasis_filter(x)), [0.03, 1.03, 1.06, 1.09])
    assert np.allclose(np.asarray(ndd.preemphasis_filter(x, border="reflect"))[0], -0.94)
    assert not np.asarray(ndd.preemphasis_filter(np.zeros(7, np.float32))).any()


def test_preemphasis_errors():
    x = np.ones(4, np.float32)
    with raises_at_call(RuntimeError, match="preemphasis_filter: argument 'border' must be one"):
        ndd.preemphasis_filter(x, border="wrap")
    with raises_at_call(RuntimeError, match="input 0 has dtype bool; expected a numeric type"):
        ndd.preemphasis_filter(x.astype(bool))
    out = ndd.preemphasis_filter(x.astype(np.float64), border="zero")  # any numeric input
    assert out.dtype == ndd.float32
    assert np.allclose(np.asarray(out), preemphasis(x, border="zero"))
