"""flip: reference is np.flip over the layout's W/H/D axes."""

import numpy as np
import pytest
from _check import check_op, raises_at_call

import ndd_triton as ndd


def ref_flip(sample, layout="HWC", horizontal=1, vertical=0, depthwise=0):
    wanted = {"W": horizontal, "H": vertical, "D": depthwise}
    axes = [i for i, c in enumerate(layout) if wanted.get(c)]
    return np.flip(sample, axis=axes).copy() if axes else sample.copy()


def _images(shapes, dtype=np.uint8, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.integers(0, 255, size=s).astype(dtype) for s in shapes]


@pytest.mark.parametrize("dtype", [np.uint8, np.float32, np.int16])
def test_flip_ragged_hwc(dtype):
    samples = _images([(5, 7, 3), (1, 1, 3), (13, 40, 3)], dtype)
    check_op(ndd.flip, samples, lambda s, **a: ref_flip(s, "HWC", **a),
             args={"horizontal": 1, "vertical": 1}, layout="HWC")


def test_flip_per_sample_args_and_several_tiles():
    samples = _images([(30, 41, 3), (7, 13, 3), (2, 3, 3)])  # 3690 elements: several tiles
    check_op(ndd.flip, samples, lambda s, **a: ref_flip(s, "HWC", **a),
             per_sample={"horizontal": [0, 1, 1], "vertical": [1, 0, 1]}, layout="HWC")


@pytest.mark.parametrize(("layout", "shapes"), [
    ("CHW", [(3, 4, 5), (1, 2, 9)]),
    ("DHWC", [(2, 3, 4, 1), (3, 1, 2, 2)]),
    ("FHWC", [(2, 3, 4, 3)]),
])
def test_flip_layouts(layout, shapes):
    samples = _images(shapes)
    args = {"horizontal": 1, "vertical": 1, "depthwise": 1}
    check_op(ndd.flip, samples, lambda s, **a: ref_flip(s, layout, **a), args=args, layout=layout,
             all_modes=False)


def test_flip_layoutless_3d_defaults_to_hwc():
    x = np.arange(24, dtype=np.uint8).reshape(2, 4, 3)
    out = ndd.flip(x)
    assert out.layout == "HWC"
    np.testing.assert_array_equal(np.asarray(out), x[:, ::-1])


def test_flip_errors():
    with raises_at_call(ValueError, match="flip: input 0 has 2 dimensions and no layout"):
        ndd.flip(np.zeros((2, 2), np.uint8))
    with raises_at_call(ValueError, match="flip: input 0 has layout 'HW'"):
        ndd.flip(ndd.as_tensor(np.zeros((2, 2), np.uint8), layout="HW"))
    with raises_at_call(TypeError, match="flip: argument 'horizontal' expects an int"):
        ndd.flip(np.zeros((2, 2, 3), np.uint8), horizontal=[0, 1])
    with raises_at_call(ValueError, match="flip: argument 'horizontal' expects"):
        ndd.flip(np.zeros((2, 2, 3), np.uint8), horizontal="yes")
    with raises_at_call(TypeError, match="unexpected keyword argument 'foo'"):
        ndd.flip(np.zeros((2, 2, 3), np.uint8), foo=1)


def test_flip_one_launch_per_ragged_batch():
    batch = ndd.as_batch(_images([(3, 5, 3), (9, 2, 3), (4, 4, 3), (1, 1, 3)]), layout="HWC").gpu()
    with ndd.profile() as prof:
        ndd.flip(batch, vertical=1).evaluate()
    (record,) = prof.records
    assert record.gpu_launches == 1


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.int32, np.float32, np.float64,
                                   np.int64, np.float16])  # fmt: skip
@pytest.mark.parametrize("channels", [1, 3, 5])
def test_flip_large_hwc_opencv_and_torch_paths(dtype, channels):
    # Samples over 16 KiB in a batch too large for one dense call: HWC of OpenCV's element
    # types takes cv2.flip (straight into the output), the others torch's flip kernel; every
    # H/W combination, per sample.
    samples = _images([(200, 260, channels), (230, 190, channels), (190, 230, channels)], dtype)
    check_op(ndd.flip, samples, lambda s, **a: ref_flip(s, "HWC", **a),
             per_sample={"horizontal": [1, 0, 1], "vertical": [0, 1, 1]}, layout="HWC",
             backends=["cpu"], all_modes=False)  # fmt: skip


@pytest.mark.parametrize("dtype", [np.uint8, np.float32])
def test_flip_row_tiles_split_rows_and_samples(small_tiles, dtype):
    # 8-element blocks, 4 rows per program: every sample spans several tiles both ways
    samples = _images([(7, 13, 3), (1, 1, 3), (9, 5, 3), (4, 11, 3)], dtype)
    check_op(ndd.flip, samples, lambda s, **a: ref_flip(s, "HWC", **a), layout="HWC",
             all_modes=False, per_sample={"horizontal": [1, 1, 0, 1],
                                          "vertical": [0, 1, 1, 1]})  # fmt: skip
    chw = _images([(3, 7, 9), (2, 5, 1)], dtype)
    check_op(ndd.flip, chw, lambda s, **a: ref_flip(s, "CHW", **a), layout="CHW",
             all_modes=False, args={"horizontal": 1, "vertical": 1})  # fmt: skip


@pytest.mark.parametrize(("layout", "shapes"), [
    ("HWC", [(5, 7, 3)] * 4 + [(1, 1, 3)]),  # ragged, the same batch layout every call
    ("FHWC", [(2, 3, 4, 3), (3, 5, 2, 3)]),
    ("DHWC", [(2, 3, 4, 1), (3, 1, 2, 2)]),
    ("CHW", [(3, 4, 3), (1, 2, 3)]),  # a mirrored last axis changes the launch: per call
])
def test_flip_batches_of_one_layout_with_new_mirror_patterns(layout, shapes):
    """The GPU keeps the launch plan of a batch layout and adds each call's mirrored axes to
    its sample table: every pattern of per-sample flags on the same shapes, and the same
    batch again, match np.flip (bit for bit, as planned from scratch)."""
    samples = _images(shapes, seed=3)
    gpu = ndd.as_batch(samples, layout=layout, device="gpu")
    names = [n for n, c in (("horizontal", "W"), ("vertical", "H"), ("depthwise", "D"))
             if c in layout]
    rng = np.random.default_rng(5)
    patterns = [np.zeros((len(names), len(samples)), int), np.ones((len(names), len(samples)), int)]
    patterns += [rng.integers(0, 2, (len(names), len(samples))) for _ in range(4)]
    for flags in patterns + patterns[:1]:
        args = {name: ndd.as_batch([np.int32(v) for v in flags[k]]) for k, name in enumerate(names)}
        got = ndd.flip(gpu, **args)
        for i, s in enumerate(samples):
            expect = ref_flip(s, layout, **{name: flags[k][i] for k, name in enumerate(names)})
            np.testing.assert_array_equal(np.asarray(got.select(i).cpu()), expect)
    from ndd_triton.kernels.gpu import flip as gpu_flip

    kept = [v for k, v in gpu_flip._plans.items() if k[:2] == (layout, (len(samples), len(layout)))]
    assert kept == [None] if layout == "CHW" else len(kept) == 1 and kept[0] is not None
