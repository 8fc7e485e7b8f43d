"""gaussian_blur: reference = dense float64 correlation with the spec's window rule, reflect_101."""

import math

import numpy as np
import pytest
from _check import check_op, raises_at_call
from reference.correlate import correlate, to_dtype

import ndd_triton as ndd


def taps(sigma, window):
    if window == 0:
        window = 2 * math.ceil(3 * sigma) + 1
    if sigma == 0:
        sigma = ((window - 1) / 2 - 1) * 0.3 + 0.8
    x = np.arange(window) - (window - 1) / 2
    t = np.exp(-x * x / (2 * sigma * sigma))
    return t / t.sum()


def ref_blur(x, layout, sigma=0.0, window_size=0, dtype=None):
    axes = [i for i, c in enumerate(layout) if c in "DHW"] if layout else list(range(x.ndim))
    sig = np.broadcast_to(np.asarray(sigma, float).reshape(-1), (len(axes),))
    win = np.broadcast_to(np.asarray(window_size, int).reshape(-1), (len(axes),))
    kernel = np.ones(())
    for s, w in zip(sig, win, strict=False):
        kernel = np.multiply.outer(kernel, taps(s, w))
    out = correlate(x, kernel, axes)
    return to_dtype(out, dtype.numpy_dtype if dtype is not None else x.dtype)


def images(shapes, dtype=np.uint8, seed=0):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "f":
        return [rng.random(s).astype(dtype) for s in shapes]
    return [rng.integers(0, 256, size=s).astype(dtype) for s in shapes]


def hwc(x):
    return ndd.as_tensor(x, layout="HWC")


def test_spec_taps():
    impulse = np.zeros((1, 11, 1), np.float32)
    impulse[0, 5] = 1
    row = np.asarray(ndd.gaussian_blur(hwc(impulse), sigma=[0.01, 1.0]))[0, :, 0]
    np.testing.assert_allclose(row[2:7], [0.00443, 0.05401, 0.24204, 0.39905, 0.24204],
                               atol=1e-5)
    edge = np.zeros((1, 5, 1), np.float32)
    edge[0, 0] = 1
    got = np.asarray(ndd.gaussian_blur(hwc(edge), window_size=[1, 3]))[0, :, 0]
    np.testing.assert_allclose(got, [0.52201, 0.23899, 0, 0, 0], atol=1e-5)
    u8 = np.array([[[0], [0], [255], [0], [0]]], np.uint8)
    got = ndd.gaussian_blur(hwc(u8), window_size=[1, 3])
    assert np.asarray(got)[0, :, 0].tolist() == [0, 61, 133, 61, 0]


def test_ragged_uint8_sigma():
    samples = images([(6, 7, 3), (1, 1, 3), (20, 31, 3)])  # several tiles, 1x1 sample
    check_op(ndd.gaussian_blur, samples, lambda s, **a: ref_blur(s, "HWC", **a),
             args={"sigma": 1.3}, layout="HWC", atol=1)


def test_per_sample_per_axis_args():
    samples = images([(7, 9, 2), (5, 6, 2), (3, 12, 2)], np.float32)
    per_sample = {"sigma": [np.array([0.7], np.float32), np.array([1.0, 0.5], np.float32),
                            np.array([0.0, 1.2], np.float32)],
                  "window_size": [np.array([0], np.int32), np.array([5, 3], np.int32),
                                  np.array([7, 0], np.int32)]}  # fmt: skip
    check_op(ndd.gaussian_blur, samples, lambda s, **a: ref_blur(s, "HWC", **a),
             per_sample=per_sample, layout="HWC", atol=1e-5)


@pytest.mark.parametrize(("layout", "shapes"), [
    ("CHW", [(2, 6, 5), (3, 4, 9)]),
    ("FHWC", [(2, 5, 6, 3)]),
    ("DHWC", [(4, 5, 6, 1)]),
    (None, [(5, 6), (4, 9)]),
    (None, [(3, 4, 5)]),
])
def test_layouts(layout, shapes):
    check_op(ndd.gaussian_blur, images(shapes, np.float32),
             lambda s, **a: ref_blur(s, layout, **a), args={"sigma": 0.8}, layout=layout,
             atol=1e-5, all_modes=False)  # fmt: skip


def test_float_output_and_int16():
    check_op(ndd.gaussian_blur, images([(6, 8, 3)]), lambda s, **a: ref_blur(s, "HWC", **a),
             args={"window_size": 5, "dtype": ndd.float32}, layout="HWC", atol=1e-3,
             all_modes=False)  # fmt: skip
    check_op(ndd.gaussian_blur, images([(6, 8, 1)], np.int16),
             lambda s, **a: ref_blur(s, "HWC", **a), args={"sigma": 2.0}, layout="HWC", atol=1,
             all_modes=False)  # fmt: skip


def test_gaussian_blur_errors():
    x = np.zeros((4, 4, 3), np.uint8)
    with raises_at_call(ValueError, match="gaussian_blur: argument 'sigma' sample 0: sigma and "
                                         "window_size are both 0"):  # fmt: skip
        ndd.gaussian_blur(x)
    with raises_at_call(ValueError, match="argument 'window_size' sample 1: the window must have "
                                         "an odd length; got 4"):  # fmt: skip
        ndd.gaussian_blur(ndd.as_batch([x, x]), window_size=ndd.as_batch(
            [np.int32(3), np.int32(4)]))
    with raises_at_call(ValueError, match=r"argument 'sigma' sample 0: expected 1 or 2 values \("
                                         "one per spatial axis\\); got 3"):  # fmt: skip
        ndd.gaussian_blur(ndd.as_tensor(x, layout="HWC"), sigma=[1, 2, 3])
    with raises_at_call(ValueError, match="argument 'sigma' sample 0: must not be negative"):
        ndd.gaussian_blur(x, sigma=-1)
    with raises_at_call(TypeError, match="argument 'dtype' must be the input type"):
        ndd.gaussian_blur(x, sigma=1, dtype=ndd.int16)
    with raises_at_call(ValueError, match="input 0 has 1 dimensions and no layout"):
        ndd.gaussian_blur(np.zeros(5, np.float32), sigma=1)
    with raises_at_call(ValueError, match="input 0 has layout 'XY'"):
        ndd.gaussian_blur(ndd.as_tensor(np.zeros((3, 3), np.uint8), layout="XY"), sigma=1)


@pytest.mark.parametrize(("layout", "shapes", "launches"), [
    ("HWC", [(3, 5, 3), (9, 2, 3), (1, 1, 3)], 2),
    ("DHWC", [(3, 4, 5, 1), (2, 2, 2, 1)], 3),
])
def test_one_launch_per_pass_per_ragged_batch(layout, shapes, launches):
    """One launch per spatial axis (separable passes), whatever the batch size."""
    batch = ndd.as_batch(images(shapes), layout=layout).gpu()
    sigma = ndd.as_batch([np.float32(0.5 + i) for i in range(len(shapes))])
    with ndd.profile() as prof:
        ndd.gaussian_blur(batch, sigma=sigma).evaluate()
    (record,) = prof.records
    assert record.gpu_launches == launches


@pytest.fixture
def small_gpu_blocks(monkeypatch):
    """GPU blocks of at most 16 row elements and 64 outputs: several blocks per sample."""
    from ndd_triton.kernels.gpu import _conv

    monkeypatch.setattr(_conv, "MAX_BX", 16)
    monkeypatch.setattr(_conv, "BLOCK_ELEMENTS", 64)


@pytest.mark.parametrize(("shapes", "dtype", "layout", "args"), [
    ([(13, 14, 3), (3, 2, 3)], np.uint8, "HWC", {"sigma": 1.0}),  # 3x2: smaller than window
    ([(7, 9, 1), (6, 5, 5)], np.float32, "HWC", {"sigma": [1.0, 0.6]}),  # channels from table
    ([(9, 16, 1), (5, 32, 1)], np.float32, "HWC", {"window_size": 5}),  # 16-aligned rows
    ([(4, 9, 7, 2), (2, 3, 4, 2)], np.uint16, "DHWC", {"sigma": 0.7}),  # D, W, H passes
    ([(19, 2), (4, 3)], np.float32, "WC", {"sigma": 1.5}),  # one spatial axis
])
def test_gpu_blocks_edges_and_wide_windows(small_gpu_blocks, shapes, dtype, layout, args):
    """Interior and edge blocks in both directions, windows longer than the sample."""
    check_op(ndd.gaussian_blur, images(shapes, dtype), lambda s, **a: ref_blur(s, layout, **a),
             args=args, layout=layout, atol=1 if np.dtype(dtype).kind in "iu" else 1e-5,
             backends=("gpu",), all_modes=False)  # fmt: skip


def test_gpu_int64_index_path(monkeypatch):
    """Samples of 2^31+ elements index in int64 (forced here for small ones)."""
    from ndd_triton.kernels.gpu import _conv

    monkeypatch.setattr(_conv, "INT32_LIMIT", 1)
    check_op(ndd.gaussian_blur, images([(6, 7, 3), (5, 3, 3)]),
             lambda s, **a: ref_blur(s, "HWC", **a), args={"sigma": 1.0}, layout="HWC", atol=1,
             backends=("gpu",), all_modes=False)  # fmt: skip


@pytest.mark.parametrize("path", ["opencv", "torch"])
def test_cpu_row_bands(monkeypatch, path):
    from ndd_triton.kernels.cpu import _opencv
    from ndd_triton.kernels.cpu import gaussian_blur as cpu_kernel

    monkeypatch.setattr(cpu_kernel, "BAND_ELEMENTS", 1)  # 8-row bands: edge, interior, edge
    monkeypatch.setattr(_opencv, "BAND_ELEMENTS", 1)  # 4-row bands with halo rows
    monkeypatch.setattr(_opencv, "MIN_BAND_ROWS", 4)
    if path == "torch":  # planes OpenCV cannot hold (more than 512 channels) take this path
        monkeypatch.setattr(cpu_kernel, "plane_view", lambda *_: None)
    samples = [*images([(30, 9, 3), (5, 4, 3)]), images([(3, 26, 7)])[0]]
    check_op(ndd.gaussian_blur, samples[:2], lambda s, **a: ref_blur(s, "HWC", **a),
             args={"sigma": [2.0, 1.0]}, layout="HWC", atol=1, backends=("cpu",),
             all_modes=False)  # fmt: skip
    check_op(ndd.gaussian_blur, samples[2:], lambda s, **a: ref_blur(s, "CHW", **a),
             args={"sigma": 1.5}, layout="CHW", atol=1, backends=("cpu",), all_modes=False)
