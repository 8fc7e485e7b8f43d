"""mel_filter_bank, mfcc and to_decibels against loop references (ops.md §6.4-§6.6)."""

import numpy as np
import pytest
from _check import check_op, raises_at_call
from reference.audio import dct, mel_filter_bank, to_decibels

import ndd_triton as ndd

RNG = np.random.default_rng(5)


def _spectra(*shapes):
    return [RNG.random(s).astype(np.float32) for s in shapes]


@pytest.mark.parametrize(
    "args",
    [
        {"nfilter": 6, "sample_rate": 16000.0},
        {"nfilter": 5, "sample_rate": 16000.0, "mel_formula": "htk", "normalize": False},
        {"nfilter": 4, "sample_rate": 22050.0, "freq_low": 300.0, "freq_high": 6000.0},
    ],
)
def test_mel_filter_bank_ft(args):
    check_op(ndd.mel_filter_bank, _spectra((33, 7), (33, 1), (17, 3)), mel_filter_bank,
             args=args, layout="ft", atol=1e-5, rtol=1e-4, all_modes=False)  # fmt: skip


def test_mel_filter_bank_tf_and_layoutless():
    samples = _spectra((5, 33), (2, 33))
    ref = lambda s, **a: mel_filter_bank(s, axis=1, **a)
    check_op(ndd.mel_filter_bank, samples, ref, args={"nfilter": 7, "sample_rate": 8000.0},
             layout="tf", atol=1e-5, rtol=1e-4, all_modes=False)  # fmt: skip
    out = ndd.mel_filter_bank(_spectra((17, 4))[0], nfilter=3, sample_rate=8000.0)
    assert out.shape == (3, 4)


def test_mel_filter_bank_errors():
    x = ndd.as_tensor(np.ones((9, 3), np.float32), layout="ft")
    with raises_at_call(RuntimeError, match="argument 'mel_formula' must be 'slaney' or 'htk'"):
        ndd.mel_filter_bank(x, mel_formula="x")
    with raises_at_call(RuntimeError, match="mel_filter_bank: input 0 has dtype u8"):
        ndd.mel_filter_bank(np.ones((9, 3), np.uint8))


@pytest.mark.parametrize(
    "args",
    [
        {"n_mfcc": 5},
        {"n_mfcc": 4, "dct_type": 1},
        {"n_mfcc": 30, "dct_type": 2, "normalize": True},
        {"n_mfcc": 6, "dct_type": 3, "normalize": True},
        {"n_mfcc": 6, "dct_type": 3},
        {"n_mfcc": 7, "dct_type": 4, "normalize": True},
        {"n_mfcc": 6, "dct_type": 4},
        {"n_mfcc": 6, "lifter": 4.5},
    ],
)
def test_mfcc_types(args):
    check_op(ndd.mfcc, _spectra((11, 3), (11, 1), (9, 4)), dct, args=args, layout="ft",
             atol=1e-4, rtol=1e-4, all_modes=False)  # fmt: skip


def test_mfcc_axis1_and_errors():
    check_op(ndd.mfcc, _spectra((3, 10), (2, 10)), dct, args={"n_mfcc": 4, "axis": 1},
             layout="tf", atol=1e-4, rtol=1e-4, all_modes=False)  # fmt: skip
    x = np.ones((5, 2), np.float32)
    with raises_at_call(RuntimeError, match="not supported for DCT type I"):
        ndd.mfcc(x, dct_type=1, normalize=True)
    with raises_at_call(RuntimeError, match="argument 'dct_type' must be 1, 2, 3 or 4"):
        ndd.mfcc(x, dct_type=5)
    with raises_at_call(RuntimeError, match="argument 'axis' \\(2\\) is out of range"):
        ndd.mfcc(x, axis=2)


@pytest.mark.parametrize(
    "args",
    [{}, {"multiplier": 20.0, "cutoff_db": -80.0}, {"reference": 0.5, "cutoff_db": -30.0}],
)
def test_to_decibels(args):
    samples = _spectra((4, 5), (1, 1), (7, 3))
    samples.append(np.zeros((2, 3), np.float32))  # silence: cutoff_db everywhere
    check_op(ndd.to_decibels, samples, to_decibels, args=args, atol=1e-3, rtol=1e-5,
             all_modes=not args)  # fmt: skip


@pytest.mark.parametrize("numpy_log10", [True, False])
def test_to_decibels_cpu_log10_choices(monkeypatch, numpy_log10):
    """Both float32 log10s the CPU kernel may pick (NumPy's AVX-512 loop or torch's) match the
    reference, per sample and packed (a batch laid out in one buffer) alike."""
    from ndd_triton.kernels.cpu import to_decibels as kernel

    monkeypatch.setattr(kernel, "_NUMPY_LOG10", numpy_log10)
    samples = _spectra((64, 9), (64, 31), (1, 1)) + [np.zeros((3, 2), np.float32)]
    want = [to_decibels(x, multiplier=20.0, cutoff_db=-80.0) for x in samples]
    separate = ndd.to_decibels(ndd.as_batch(samples), multiplier=20.0, cutoff_db=-80.0)
    one_buffer = ndd.copy(ndd.as_batch(samples))  # an op's output: the packed kernel runs
    packed = ndd.to_decibels(one_buffer, multiplier=20.0, cutoff_db=-80.0)
    for got in (separate, packed):
        for k, expected in enumerate(want):
            np.testing.assert_allclose(np.asarray(got.select(k)), expected, atol=1e-4, rtol=1e-6)


def test_to_decibels_zero_multiplier_gives_zeros():
    for device in ("cpu", "gpu"):
        x = ndd.as_tensor(np.array([0.0, 0.5, 2.0], np.float32))
        out = ndd.to_decibels(x.gpu() if device == "gpu" else x, multiplier=0.0)
        assert np.asarray(out.cpu()).tolist() == [0.0, 0.0, 0.0]


def test_to_decibels_errors():
    with raises_at_call(RuntimeError, match="to_decibels: input 0 has dtype i32"):
        ndd.to_decibels(np.ones(3, np.int32))
