"""The fused colour chain kernel (compile mode, `kernels/gpu/color_chain.py`) against a NumPy
reference written from the ops' formulas, and against the ops run one by one (uint8: exact)."""

from __future__ import annotations

import numpy as np
import pytest

import ndd_triton as ndd

BS = 4


def _epoch(batches: list[ndd.Batch], body, compile_: bool) -> list[list[np.ndarray]]:
    source = ndd.ExternalSource(iter(batches), device="gpu").captured(BS) if compile_ \
        else iter(batches)  # fmt: skip
    with ndd.profile() as prof:
        outs = [[np.array(s) for s in body(x).cpu()] for x in source]
    if compile_:
        assert [it.gpu_launches for it in prof.compiled] == [1, 1]  # one launch per batch
    return outs


@pytest.mark.parametrize("channels", [3, 1])
def test_brightness_contrast_chain_float_reference(channels: int) -> None:
    gen = np.random.default_rng(channels)
    data = [[gen.random((int(gen.integers(2, 9)), int(gen.integers(2, 9)), channels),
                        dtype=np.float32) for _ in range(BS)] for _ in range(3)]  # fmt: skip
    b = np.array([0.5, 1.0, 1.5, 2.0], np.float32)
    k = np.array([0.25, 1.0, 1.75, 3.0], np.float32)
    bright, contrast = ndd.as_batch(list(b)), ndd.as_batch(list(k))

    def body(x: ndd.Batch) -> ndd.Batch:
        return ndd.contrast(ndd.brightness(x, brightness=bright), contrast=contrast)

    batches = [ndd.as_batch(d, layout="HWC", device="gpu") for d in data]
    got = _epoch(batches, body, True)
    for it, samples in enumerate(got[1:], start=1):
        for i, sample in enumerate(samples):
            # brightness: b * x; contrast around the float centre 0.5: 0.5 + k * (v - 0.5)
            expected = 0.5 + k[i] * (b[i] * data[it][i] - 0.5)
            np.testing.assert_allclose(sample, expected, rtol=1e-5, atol=1e-5)


def test_uint8_chain_with_3x3_steps_matches_the_ops_one_by_one() -> None:
    gen = np.random.default_rng(3)
    data = [[gen.integers(0, 256, (int(gen.integers(2, 9)), int(gen.integers(2, 9)), 3),
                          dtype=np.uint8) for _ in range(BS)] for _ in range(3)]  # fmt: skip
    hue = ndd.as_batch([np.float32(v) for v in (-90, -10, 30, 170)])

    def body(x: ndd.Batch) -> ndd.Batch:
        x = ndd.brightness(x, brightness=1.7, brightness_shift=-0.1)  # saturates both ends
        x = ndd.hue(x, hue=hue)
        return ndd.saturation(x, saturation=1.9, dtype=ndd.int16)

    batches = [ndd.as_batch(d, layout="HWC", device="gpu") for d in data]
    eager = _epoch(batches, body, False)
    fused = _epoch(batches, body, True)
    for xe, xf in zip(eager, fused, strict=True):
        for se, sf in zip(xe, xf, strict=True):
            assert sf.dtype == np.int16
            np.testing.assert_array_equal(sf, se)
