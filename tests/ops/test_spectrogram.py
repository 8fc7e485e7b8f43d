"""spectrogram and power_spectrum against explicit DFT sums (ops.md §6.2, §6.3)."""

import numpy as np
import pytest
from _check import check_op, raises_at_call
from reference.audio import power_spectrum, spectrogram

import ndd_triton as ndd

RNG = np.random.default_rng(3)


def _signals(*lengths):
    return [RNG.standard_normal(n).astype(np.float32) for n in lengths]


@pytest.mark.parametrize(
    "args",
    [
        {"nfft": 16, "window_length": 16, "window_step": 8},
        {"nfft": 32, "window_length": 13, "window_step": 5, "layout": "tf", "power": 1},
        {"nfft": 16, "window_length": 16, "window_step": 4, "center_windows": False},
        {"nfft": 16, "window_length": 10, "window_step": 3, "reflect_padding": False},
        {"window_length": 7, "window_step": 3, "window_fn": [0.1, 0.5, 1, 1, 1, 0.5, 0.1]},
    ],
)
def test_spectrogram_variants_odd_and_ragged(args):
    samples = _signals(61, 1, 33, 5)
    if not args.get("center_windows", True):
        samples = _signals(61, 16, 33, 20)
    check_op(ndd.spectrogram, samples, spectrogram, args=args, atol=2e-4, rtol=1e-4,
             all_modes=False)  # fmt: skip


def test_spectrogram_defaults_shape_silence_and_column_input():
    x = RNG.standard_normal(4000).astype(np.float32)
    assert ndd.spectrogram(x).shape == (257, 16)
    assert ndd.spectrogram(x, nfft=256, window_length=256, window_step=128).shape == (129, 32)
    assert ndd.spectrogram(x, nfft=256, window_length=256, window_step=128,
                           center_windows=False).shape == (129, 30)  # fmt: skip
    assert not np.asarray(ndd.spectrogram(np.zeros(100, np.float32), window_length=16)).any()
    col = np.asarray(ndd.spectrogram(x[:300, None], window_length=32, window_step=16))
    assert np.allclose(col, spectrogram(x[:300], window_length=32, window_step=16), atol=2e-3,
                       rtol=1e-4)  # fmt: skip


def test_spectrogram_errors():
    x = np.ones(64, np.float32)
    with raises_at_call(RuntimeError, match=r"spectrogram: argument 'nfft' \(8\) must be at"):
        ndd.spectrogram(x, nfft=8, window_length=16)
    with raises_at_call(RuntimeError, match="input 0 has dtype i16; expected float32"):
        ndd.spectrogram(x.astype(np.int16))
    with raises_at_call(RuntimeError, match="must be a 1-D signal"):
        ndd.spectrogram(np.ones((4, 16), np.float32))
    with raises_at_call(RuntimeError, match="argument 'power' must be 1 or 2"):
        ndd.spectrogram(x, power=3)
    with raises_at_call(RuntimeError, match="argument 'window_fn' has 2 values"):
        ndd.spectrogram(x, window_length=16, window_fn=[1.0, 1.0])


@pytest.mark.parametrize(
    ("shapes", "args"),
    [
        ([(19,), (1,), (8,)], {}),
        ([(30,), (7,)], {"nfft": 16, "power": 1}),
        ([(9, 3), (5, 2)], {"axis": 0, "nfft": 12}),
        ([(2, 11, 3)], {"axis": 1}),
    ],
)
def test_power_spectrum_pads_truncates_any_axis(shapes, args):
    samples = [RNG.standard_normal(s).astype(np.float32) for s in shapes]
    check_op(ndd.power_spectrum, samples, power_spectrum, args=args, atol=1e-3, rtol=1e-4,
             all_modes=False)  # fmt: skip


def test_power_spectrum_spec_example_and_errors():
    out = np.asarray(ndd.power_spectrum(np.array([1, 2, 3, 4], np.float32), nfft=8))
    assert np.allclose(out, [100, 52.627, 8, 7.373, 4], atol=1e-3)
    with raises_at_call(RuntimeError, match="power_spectrum: argument 'axis' \\(2\\) is out"):
        ndd.power_spectrum(np.ones(4, np.float32), axis=2)
    with raises_at_call(RuntimeError, match="expected float32"):
        ndd.power_spectrum(np.ones(4, np.uint8))


def test_spectrogram_gpu_batch_is_two_launches_around_one_fft():
    batch = ndd.as_batch(_signals(40, 17)).gpu()
    with ndd.profile() as prof:
        ndd.spectrogram(batch, window_length=8, window_step=4).evaluate()
    (record,) = prof.records
    assert record.gpu_launches == 2
