"""laplacian: reference = Σ over axes of dense outer products of the spec's windows (float64)."""

import numpy as np
import pytest
from _check import check_op, raises_at_call
from reference.correlate import correlate, to_dtype

import ndd_triton as ndd


def binomial(n):
    t = np.ones(1)
    for _ in range(n - 1):
        t = np.convolve(t, [1, 1])
    return t


def derivative(n):
    return np.convolve([1, -2, 1], binomial(n - 2))


def ref_laplacian(x, layout, window_size=3, smoothing_size=None, scale=1.0,
                  normalized_kernel=False, dtype=None):  # fmt: skip
    axes = [i for i, c in enumerate(layout) if c in "DHW"] if layout else list(range(x.ndim))
    n = len(axes)
    ws = np.broadcast_to(np.asarray(window_size).reshape(-1), (n,))
    ss = ws if smoothing_size is None else np.broadcast_to(
        np.asarray(smoothing_size).reshape(-1), (n,))
    sc = np.broadcast_to(np.asarray(scale, float).reshape(-1), (n,))
    total = 0.0
    for a in range(n):
        windows = [derivative(ws[b]) if b == a else binomial(ss[b]) for b in range(n)]
        kernel = np.ones(())
        for w in windows:
            kernel = np.multiply.outer(kernel, w)
        factor = sc[a]
        if normalized_kernel:
            factor = 2.0 ** -(sum(len(w) for w in windows) - n - 2)
        total = total + factor * correlate(x, kernel, axes)
    return to_dtype(total, dtype.numpy_dtype if dtype is not None else x.dtype)


def hw(x):
    return ndd.as_tensor(x, layout="HW")


def test_spec_impulse_responses():
    impulse = np.zeros((7, 7), np.float32)
    impulse[3, 3] = 1
    got = np.asarray(ndd.laplacian(hw(impulse)))
    np.testing.assert_array_equal(got[2:5, 2:5], [[2, 0, 2], [0, -8, 0], [2, 0, 2]])
    got = np.asarray(ndd.laplacian(hw(impulse), smoothing_size=1))
    np.testing.assert_array_equal(got[2:5, 2:5], [[0, 1, 0], [1, -4, 1], [0, 1, 0]])
    big = np.zeros((11, 11), np.float32)
    big[5, 5] = 1  # away from the border: the 7x7 kernel's own centre row
    got = np.asarray(ndd.laplacian(hw(big), window_size=7))
    np.testing.assert_array_equal(got[5, 2:9], [16, 16, -80, -160, -80, 16, 16])
    ramp = np.array([[0, 1, 4, 9, 16]], np.float32)
    got = np.asarray(ndd.laplacian(hw(ramp), smoothing_size=1))
    np.testing.assert_array_equal(got[0], [2, 2, 2, 2, -14])
    for ws, ss, divisor in [(3, 3, 4), (5, 5, 64), (7, 7, 1024), (5, 1, 4), (3, 1, 1)]:
        plain = np.asarray(ndd.laplacian(hw(impulse), window_size=ws, smoothing_size=ss))
        norm = np.asarray(ndd.laplacian(hw(impulse), window_size=ws, smoothing_size=ss,
                                        normalized_kernel=True))  # fmt: skip
        np.testing.assert_allclose(norm * divisor, plain, atol=1e-4)


def images(shapes, dtype=np.uint8, seed=0):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "f":
        return [rng.random(s).astype(dtype) for s in shapes]
    return [rng.integers(0, 256, size=s).astype(dtype) for s in shapes]


def test_ragged_uint8_saturates():
    check_op(ndd.laplacian, images([(6, 7, 3), (1, 1, 3), (20, 31, 3)]),
             lambda s, **a: ref_laplacian(s, "HWC", **a), layout="HWC", atol=1)


def test_per_sample_args_float():
    per_sample = {"window_size": [np.array([3]), np.array([5, 3]), np.array([3, 7])],
                  "smoothing_size": [np.array([1]), np.array([3, 5]), np.array([1, 3])],
                  "scale": [np.array([2.0]), np.array([1.0, -0.5]), np.array([0.25])]}
    check_op(ndd.laplacian, images([(7, 9, 2), (5, 6, 1), (8, 12, 3)], np.float32),
             lambda s, **a: ref_laplacian(s, "HWC", **a), per_sample=per_sample, layout="HWC",
             atol=1e-4)  # fmt: skip


@pytest.mark.parametrize(("layout", "shapes"), [
    ("CHW", [(2, 6, 5), (1, 4, 9)]),
    ("FHWC", [(2, 5, 6, 3)]),
    ("DHW", [(4, 5, 6)]),
])
def test_layouts_and_normalized(layout, shapes):
    check_op(ndd.laplacian, images(shapes),
             lambda s, **a: ref_laplacian(s, layout, **a),
             args={"normalized_kernel": True, "dtype": ndd.float32}, layout=layout, atol=1e-3,
             all_modes=False)  # fmt: skip


def test_laplacian_errors():
    x = ndd.as_tensor(np.zeros((5, 5), np.uint8), layout="HW")
    with raises_at_call(ValueError, match="laplacian: argument 'window_size' sample 0: expected "
                                         r"an odd window size in 3\.\.31; got 4"):  # fmt: skip
        ndd.laplacian(x, window_size=4)
    with raises_at_call(ValueError, match="argument 'smoothing_size' sample 1: expected an odd "
                                         r"window size in 1\.\.31; got 0"):  # fmt: skip
        ndd.laplacian(ndd.as_batch([x, x]), smoothing_size=ndd.as_batch(
            [np.array([1]), np.array([0])]))
    with raises_at_call(ValueError, match="argument 'scale' cannot be combined with "
                                         "normalized_kernel"):  # fmt: skip
        ndd.laplacian(x, scale=2.0, normalized_kernel=True)
    with raises_at_call(ValueError, match="argument 'window_size' sample 0: expected 1 or 2 "
                                         "values"):  # fmt: skip
        ndd.laplacian(x, window_size=[3, 3, 3])
    with raises_at_call(TypeError, match="laplacian: argument 'dtype' must be the input type"):
        ndd.laplacian(x, dtype=ndd.int32)


@pytest.mark.parametrize(("layout", "shapes", "launches"), [
    ("HWC", [(3, 5, 3), (9, 2, 3), (1, 1, 3)], 2),
    ("DHW", [(3, 4, 5), (2, 2, 2)], 3),
])
def test_one_launch_per_pass_per_ragged_batch(layout, shapes, launches):
    """One launch per spatial axis, each carrying every term, whatever the batch size."""
    batch = ndd.as_batch(images(shapes), layout=layout).gpu()
    with ndd.profile() as prof:
        ndd.laplacian(batch, window_size=5).evaluate()
    (record,) = prof.records
    assert record.gpu_launches == launches


@pytest.fixture
def small_gpu_blocks(monkeypatch):
    """GPU blocks of at most 16 row elements and 64 outputs: several blocks per sample."""
    from ndd_triton.kernels.gpu import _conv

    monkeypatch.setattr(_conv, "MAX_BX", 16)
    monkeypatch.setattr(_conv, "BLOCK_ELEMENTS", 64)


@pytest.mark.parametrize(("shapes", "dtype", "layout", "args"), [
    ([(13, 14, 3), (2, 3, 3)], np.uint8, "HWC", {"scale": 1.5}),  # 2x3: smaller than window
    ([(9, 16), (5, 11)], np.float32, "HW", {"window_size": [5, 3], "smoothing_size": [1, 5]}),
    ([(5, 9, 7), (2, 3, 4)], np.int16, "DHW", {"window_size": 3}),  # torch order, scaled sum
    ([(19, 2), (4, 3)], np.float32, "WC", {"scale": 0.5}),  # one spatial axis
])
def test_gpu_blocks_edges_and_wide_windows(small_gpu_blocks, shapes, dtype, layout, args):
    """Interior and edge blocks in both directions, windows longer than the sample."""
    check_op(ndd.laplacian, images(shapes, dtype), lambda s, **a: ref_laplacian(s, layout, **a),
             args=args, layout=layout, atol=1 if np.dtype(dtype).kind in "iu" else 1e-4,
             backends=("gpu",), all_modes=False)  # fmt: skip


@pytest.mark.parametrize(("args", "dtype"), [
    ({}, np.uint8),                                      # exact integer: one dense filter2D
    ({"scale": 1.5}, np.uint8),                          # separable float32 terms
    ({"window_size": 5, "dtype": ndd.float32}, np.int16),
])
def test_cpu_opencv_paths_and_bands(monkeypatch, args, dtype):
    """OpenCV paths of the CPU kernel, in 4-row bands (halo rows, first and last band)."""
    from ndd_triton.kernels.cpu import _opencv

    monkeypatch.setattr(_opencv, "BAND_ELEMENTS", 1)
    monkeypatch.setattr(_opencv, "MIN_BAND_ROWS", 4)
    rng = np.random.default_rng(5)
    samples = [rng.integers(0, 256, s).astype(dtype) for s in [(19, 11, 3), (6, 5, 1), (1, 1, 3)]]
    check_op(ndd.laplacian, samples, lambda s, **a: ref_laplacian(s, "HWC", **a), args=args,
             layout="HWC", atol=1 if "dtype" not in args else 1e-3, backends=("cpu",),
             all_modes=False)  # fmt: skip
