"""nonsilent_region against a loop reference (ops.md §6.7)."""

import numpy as np
import pytest
from _check import raises_at_call, samples_of
from reference.audio import nonsilent_region

import ndd_triton as ndd

RNG = np.random.default_rng(11)


def _burst(n, begin, end, amp=0.5):
    x = np.zeros(n, np.float32)
    x[begin:end] = amp * np.sin(np.arange(end - begin) * 0.3) + 0.01 * RNG.standard_normal(
        end - begin)  # fmt: skip
    return x


@pytest.mark.parametrize("backend", ["cpu", "gpu"])
@pytest.mark.parametrize(
    "args",
    [{"window_length": 16, "cutoff_db": -20.0, "reset_interval": -1},
     {"window_length": 8, "cutoff_db": -40.0, "reference_power": 0.01},
     {"window_length": 32, "reset_interval": 64}],
)  # fmt: skip
def test_nonsilent_region(backend, args):
    samples = [_burst(300, 100, 180), _burst(97, 0, 5), np.zeros(50, np.float32),
               _burst(5, 1, 3), (RNG.standard_normal(41) * 1000).astype(np.int16)]  # fmt: skip
    samples = [s for s in samples if s.dtype == np.float32]
    batch = ndd.as_batch(samples)
    begin, length = ndd.nonsilent_region(batch.gpu() if backend == "gpu" else batch, **args)
    assert begin.dtype == ndd.int32
    assert begin.shape == [()] * len(samples)
    ref_args = {k: v for k, v in args.items() if k != "reset_interval"}
    for b, n, s in zip(samples_of(begin), samples_of(length), samples, strict=True):
        assert (int(b), int(n)) == nonsilent_region(s, **ref_args)


def test_nonsilent_region_int16_and_spec_example():
    x = (_burst(400, 100, 200) * 30000).astype(np.int16)
    b, n = ndd.nonsilent_region(x, window_length=16, reset_interval=-1)
    assert (int(np.asarray(b)), int(np.asarray(n))) == nonsilent_region(x, window_length=16)
    x = np.zeros(10000, np.float32)
    x[3000:6000] = np.sin(np.arange(3000) * 0.1)
    b, n = ndd.nonsilent_region(x)
    assert (int(np.asarray(b)), int(np.asarray(n))) == (954, 7093)


def test_nonsilent_region_errors():
    x = np.ones(10, np.float32)
    with raises_at_call(RuntimeError, match="'reset_interval' shall be -1 or a positive multiple"):
        ndd.nonsilent_region(x, window_length=100)
    with raises_at_call(RuntimeError, match="nonsilent_region: input 0 must be 1-D"):
        ndd.nonsilent_region(np.ones((5, 2), np.float32))
    with raises_at_call(RuntimeError, match="'reference_power' has to be positive"):
        ndd.nonsilent_region(x, reference_power=-1.0)
    with raises_at_call(ValueError, match="'window_length' must be positive"):
        ndd.nonsilent_region(x, window_length=0)
