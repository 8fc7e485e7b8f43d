"""filter: reference = float64 correlation over np.pad borders, ties-to-even integer rounding."""

import numpy as np
import pytest
from _check import check_op, raises_at_call, samples_of
from reference.correlate import correlate, to_dtype

import ndd_triton as ndd


def spatial_axes(layout, ndim):
    return [i for i, c in enumerate(layout) if c in "DHW"] if layout else list(range(ndim))


def ref_filter(x, kernel, layout, anchor=-1, border="reflect_101", mode="same", dtype=None,
               fill=0.0):  # fmt: skip
    axes = spatial_axes(layout, x.ndim)
    anchors = np.broadcast_to(np.asarray(anchor).reshape(-1), (len(axes),))
    anchors = [k // 2 if a == -1 else int(a) for a, k in zip(anchors, kernel.shape, strict=False)]
    out = correlate(x, kernel, axes, anchors, border, float(fill), valid=mode == "valid")
    return to_dtype(out, dtype.numpy_dtype if dtype is not None else x.dtype, ties_to_even=True)


def images(shapes, dtype=np.uint8, seed=0):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "f":
        return [(rng.random(s) * 4 - 2).astype(dtype) for s in shapes]
    info = np.iinfo(dtype)
    return [rng.integers(max(info.min, -300), min(info.max, 300), size=s).astype(dtype)
            for s in shapes]  # fmt: skip


KERNEL = np.array([[0.5, -1.0, 0.25], [1.5, 0.5, 0.0]], np.float32)  # even height: anchor 1


def shared_kernel_op(kernel):
    def op(data, **kwargs):
        return ndd.filter(data, ndd.as_tensor(kernel), **kwargs)

    op.__name__ = "filter"
    return op


@pytest.mark.parametrize("border", ["reflect_101", "reflect_1001", "wrap", "clamp", "constant"])
def test_borders_ragged(border):
    samples = images([(5, 6, 3), (1, 1, 3), (17, 70, 3)])  # several tiles and a 1x1 sample
    check_op(shared_kernel_op(KERNEL), samples,
             lambda s, **a: ref_filter(s, KERNEL, "HWC", **a), args={"border": border},
             layout="HWC", atol=1, all_modes=border == "reflect_101")  # fmt: skip


@pytest.mark.parametrize("dtype", [np.int8, np.uint16, np.int16, np.float16, np.float32])
def test_dtypes(dtype):
    tol = {np.float16: 2e-2, np.float32: 1e-5}.get(dtype, 1)
    check_op(shared_kernel_op(KERNEL), images([(4, 7, 2), (6, 3, 2)], dtype),
             lambda s, **a: ref_filter(s, KERNEL, "HWC", **a), layout="HWC", atol=tol,
             all_modes=False)  # fmt: skip


@pytest.mark.parametrize(("layout", "shapes", "kernel"), [
    ("CHW", [(2, 6, 5), (3, 4, 9)], KERNEL),
    ("FHWC", [(2, 5, 6, 3)], KERNEL),
    ("FCHW", [(2, 3, 5, 6)], KERNEL),
    (None, [(5, 6), (4, 9)], KERNEL),
    ("DHWC", [(3, 4, 5, 2)], np.arange(12, dtype=np.float32).reshape(2, 3, 2) / 10),
    (None, [(3, 4, 5)], np.ones((3, 1, 2), np.float32) / 6),
])
def test_layouts(layout, shapes, kernel):
    check_op(shared_kernel_op(kernel), images(shapes, np.float32),
             lambda s, **a: ref_filter(s, kernel, layout, **a), layout=layout, atol=1e-5,
             all_modes=False)  # fmt: skip


def test_ties_to_even_and_saturation():
    x = ndd.as_tensor(np.array([[1, 3, 5, 7]], np.uint8), layout="HW")
    half = ndd.as_tensor(np.array([[0.5]], np.float32))
    assert np.asarray(ndd.filter(x, half)).tolist() == [[0, 2, 2, 4]]
    big = ndd.as_tensor(np.array([[200]], np.uint8), layout="HW")
    assert np.asarray(ndd.filter(big, ndd.as_tensor(np.array([[2.0]], np.float32)))).tolist() \
        == [[255]]  # fmt: skip


@pytest.mark.parametrize("backend", ["cpu", "gpu"])
def test_per_sample_kernels_anchor_fill_valid(backend):
    data = images([(6, 7, 3), (9, 5, 3), (4, 4, 3)])
    kernels = [np.array([[1.0, 2.0], [0.5, -1.0]], np.float32),
               np.arange(15, dtype=np.float32).reshape(3, 5) / 20,
               np.array([[0.0, 1.0, 0.0]], np.float32)]  # fmt: skip
    fills = [np.uint8(7), np.uint8(200), np.uint8(0)]
    anchors = [np.array([0, 1]), np.array([2, 0]), np.array([-1])]

    def run(**kwargs):
        batch = ndd.as_batch(data, layout="HWC")
        fill = ndd.as_batch(fills) if kwargs.pop("with_fill", False) else None
        if backend == "gpu":
            batch = batch.gpu()
        return samples_of(ndd.filter(batch, ndd.as_batch(kernels), fill, **kwargs))

    got = run(border="constant", with_fill=True, anchor=ndd.as_batch(anchors))
    for g, x, k, f, a in zip(got, data, kernels, fills, anchors, strict=False):
        np.testing.assert_allclose(g, ref_filter(x, k, "HWC", anchor=a, border="constant",
                                                 fill=f), atol=1)  # fmt: skip
    got = run(mode="valid", dtype=ndd.float32)
    for g, x, k in zip(got, data, kernels, strict=False):
        expected = ref_filter(x, k, "HWC", mode="valid", dtype=ndd.float32)
        assert g.shape == expected.shape
        np.testing.assert_allclose(g, expected, atol=1e-4)


@pytest.mark.parametrize("border", ["reflect_101", "reflect_1001", "wrap", "clamp", "constant"])
@pytest.mark.parametrize("dtype", [None, ndd.float32])
def test_cpu_opencv_bands(monkeypatch, border, dtype):
    """OpenCV paths of the CPU kernel (direct same-type output, float32 bands, padded borders)
    in 4-row bands, against the reference; fill 9 makes constant pad the plane first."""
    from ndd_triton.kernels.cpu import _opencv

    monkeypatch.setattr(_opencv, "BAND_ELEMENTS", 1)
    monkeypatch.setattr(_opencv, "MIN_BAND_ROWS", 4)
    kernel = np.arange(15, dtype=np.float32).reshape(5, 3) / 20 - 0.3
    data = images([(17, 9, 3), (3, 2, 1), (1, 1, 3)])
    for x in data:
        fill = np.uint8(9)
        args = {"border": border, "anchor": [1, 2]} | ({"dtype": dtype} if dtype else {})
        got = ndd.filter(ndd.as_tensor(x, layout="HWC"), ndd.as_tensor(kernel),
                         ndd.as_tensor(fill), **args)  # fmt: skip
        expected = ref_filter(x, kernel, "HWC", anchor=[1, 2], border=border, dtype=dtype,
                              fill=fill)  # fmt: skip
        np.testing.assert_allclose(np.asarray(got), expected, atol=1 if dtype is None else 1e-4)
    x = data[0]
    got = ndd.filter(ndd.as_tensor(x, layout="HWC"), ndd.as_tensor(kernel), mode="valid")
    np.testing.assert_allclose(np.asarray(got), ref_filter(x, kernel, "HWC", mode="valid"),
                               atol=1)  # fmt: skip


def test_filter_errors():
    x = ndd.as_tensor(np.zeros((5, 5, 3), np.uint8), layout="HWC")
    k3 = ndd.as_tensor(np.ones((3, 3), np.float32))
    with raises_at_call(TypeError, match="filter: input 0 has dtype i32"):
        ndd.filter(ndd.as_tensor(np.zeros((5, 5, 3), np.int32), layout="HWC"), k3)
    with raises_at_call(TypeError, match="filter: input 1 has dtype f64"):
        ndd.filter(x, np.ones((3, 3)))
    with raises_at_call(ValueError, match=r"input 1 \(filter\) has 1 dimensions; expected 2"):
        ndd.filter(x, np.ones(3, np.float32))
    with raises_at_call(TypeError, match=r"input 2 \(fill_value\) has dtype i16; expected the "
                                        "data type u8"):  # fmt: skip
        ndd.filter(x, k3, np.int16(3), border="constant")
    with raises_at_call(ValueError, match=r"input 2 \(fill_value\) sample 0: expected a scalar"):
        ndd.filter(x, k3, np.zeros(2, np.uint8), border="constant")
    with raises_at_call(ValueError, match=r"argument 'anchor' sample 0: expected -1 or 0\.\.2 for "
                                         "spatial axis 1"):  # fmt: skip
        ndd.filter(x, k3, anchor=[1, 3])
    with raises_at_call(ValueError, match=r"input 1 \(filter\) sample 0: kernel \(7, 1\) is "
                                         "larger than the data"):  # fmt: skip
        ndd.filter(x, np.ones((7, 1), np.float32), mode="valid")
    with raises_at_call(ValueError, match="argument 'border' must be one of"):
        ndd.filter(x, k3, border="mirror")
    with raises_at_call(TypeError, match="argument 'dtype' must be the input type"):
        ndd.filter(x, k3, dtype=ndd.int16)


@pytest.fixture
def small_gpu_blocks(monkeypatch):
    """GPU blocks of at most 16 row elements and 64 outputs: several blocks per sample."""
    from ndd_triton.kernels.gpu import _conv

    monkeypatch.setattr(_conv, "MAX_BX", 16)
    monkeypatch.setattr(_conv, "BLOCK_ELEMENTS", 64)


KERNEL_5x4 = np.arange(20, dtype=np.float32).reshape(5, 4) / 40 - 0.2


@pytest.mark.parametrize("border", ["reflect_101", "reflect_1001", "wrap", "clamp", "constant"])
def test_gpu_blocks_edges_and_wide_kernels(small_gpu_blocks, border):
    """Interior and edge blocks; a 3x2 sample smaller than the 5x4 kernel (periodic borders)."""
    samples = images([(13, 11, 3), (3, 2, 3)])
    check_op(shared_kernel_op(KERNEL_5x4), samples,
             lambda s, **a: ref_filter(s, KERNEL_5x4, "HWC", **a),
             args={"border": border, "anchor": [1, 3]}, layout="HWC", atol=1,
             backends=("gpu",), all_modes=False)  # fmt: skip


@pytest.mark.parametrize(("layout", "shapes", "kernel", "args"), [
    ("DHWC", [(4, 6, 5, 2)], np.arange(12, dtype=np.float32).reshape(2, 3, 2) / 10, {}),
    ("HWC", [(9, 12, 5), (6, 7, 5)], KERNEL_5x4, {"mode": "valid"}),  # channels from the table
    ("HW", [(9, 16), (3, 32)], KERNEL_5x4, {"border": "clamp"}),  # 16-aligned output rows
])
def test_gpu_blocks_volumes_and_valid(small_gpu_blocks, layout, shapes, kernel, args):
    check_op(shared_kernel_op(kernel), images(shapes, np.float32),
             lambda s, **a: ref_filter(s, kernel, layout, **a), args=args, layout=layout,
             atol=1e-5, backends=("gpu",), all_modes=False)  # fmt: skip


def test_gpu_int64_index_path(monkeypatch):
    """Samples of 2^31+ elements index in int64 (forced here for small ones)."""
    from ndd_triton.kernels.gpu import _conv

    monkeypatch.setattr(_conv, "INT32_LIMIT", 1)
    check_op(shared_kernel_op(KERNEL), images([(6, 7, 3), (5, 3, 3)]),
             lambda s, **a: ref_filter(s, KERNEL, "HWC", **a), args={"border": "wrap"},
             layout="HWC", atol=1, backends=("gpu",), all_modes=False)  # fmt: skip


def test_one_launch_per_ragged_batch():
    batch = ndd.as_batch(images([(3, 5, 3), (9, 2, 3), (1, 1, 3)]), layout="HWC").gpu()
    kernels = ndd.as_batch([np.ones((1, 2), np.float32), np.ones((3, 3), np.float32),
                            np.ones((2, 1), np.float32)])  # fmt: skip
    with ndd.profile() as prof:
        ndd.filter(batch, kernels, border="wrap").evaluate()
    assert [r.gpu_launches for r in prof.records if r.op == "filter"] == [1]
