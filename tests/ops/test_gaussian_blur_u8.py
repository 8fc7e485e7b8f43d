"""uint8 -> uint8 gaussian_blur on the CPU (OpenCV float32 straight to uint8): within 1 of exact.

The fast path rounds ties to even, DALI half away from zero, so outputs may differ from the
exact result by 1 where the float value is a tie, and nowhere else: a fixed-point path would
differ on a few % of the pixels.
"""

import numpy as np
import pytest

import ndd_triton as ndd
from ndd_triton.kernels._conv_tables import gaussian_taps
from ndd_triton.kernels.cpu import gaussian_blur as kernel


def blur_reference(x, taps_h, taps_w):
    """float64 separable correlation with reflect-101 borders (NumPy's "reflect")."""
    rh, rw = len(taps_h) // 2, len(taps_w) // 2
    padded = np.pad(x.astype(np.float64), ((rh, rh), (rw, rw), (0, 0)), mode="reflect")
    rows = sum(t * padded[i:i + x.shape[0]] for i, t in enumerate(taps_h))
    return sum(t * rows[:, i:i + x.shape[1]] for i, t in enumerate(taps_w))


def test_opencv_uint8_filter_is_its_float_path():
    assert kernel.u8_blur_is_float()


@pytest.mark.parametrize(("sigma", "window"), [(1.0, None), ((1.76, 0.6), None), (None, 3),
                                               (2.5, (9, 15))])  # fmt: skip
def test_uint8_blur_within_one_of_exact(sigma, window):
    rng = np.random.default_rng(5)
    samples = [rng.integers(0, 256, (96, 128, 3), dtype=np.uint8) for _ in range(3)]
    args = {k: v for k, v in (("sigma", sigma), ("window_size", window)) if v is not None}
    out = ndd.gaussian_blur(ndd.as_batch(samples, layout="HWC"), **args)
    sig = np.broadcast_to(np.asarray(sigma if sigma is not None else 0.0, float), 2)
    win = np.broadcast_to(np.asarray(window if window is not None else 0, int), 2)
    # per axis, outermost (H) first; gaussian_taps derives a missing window or sigma
    taps = [np.asarray(gaussian_taps(float(s), int(w))) for s, w in zip(sig, win, strict=True)]
    for i, s in enumerate(samples):
        got = np.asarray(out.select(i)).astype(np.float64)
        exact = np.clip(np.floor(blur_reference(s, taps[0], taps[1]) + 0.5), 0, 255)
        assert np.abs(got - exact).max() <= 1
        assert (got != exact).mean() < 1e-3  # ties only
