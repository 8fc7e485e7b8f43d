"""resize: against the float64 loop reference in tests/reference/resample.py (both backends)."""

import numpy as np
import pytest
from _check import assert_close, check_op, raises_at_call, samples_of
from reference import resample as ref

import ndd_triton as ndd
from ndd_triton import types

INTERPS = [types.INTERP_NN, types.INTERP_LINEAR, types.INTERP_CUBIC, types.INTERP_LANCZOS3,
           types.INTERP_TRIANGULAR, types.INTERP_GAUSSIAN]  # fmt: skip


def _images(shapes, dtype=np.uint8, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.integers(0, 256, size=s).astype(dtype) for s in shapes]


def _ref(layout="HWC", **fixed):
    def reference(sample, size, **args):
        args = {k: v for k, v in args.items() if k not in ("mode",)}
        interp = int(args.pop("interp_type", types.INTERP_LINEAR))
        dtype = args.pop("dtype", None)
        return ref.resize(sample, layout, tuple(int(s) for s in size), interp=interp,
                          antialias=args.pop("antialias", True), dtype=dtype and
                          np.dtype(dtype.numpy_dtype), **fixed)  # fmt: skip
    return reference


@pytest.mark.parametrize("interp", INTERPS, ids=lambda i: i.name)
@pytest.mark.parametrize("antialias", [True, False])
def test_resize_interp_ragged(interp, antialias):
    # 13 -> 5 and 9 -> 5 shrink, 6 -> 7 and 1 -> 7 enlarge: both regimes in one batch.
    samples = _images([(13, 9, 3), (6, 1, 3), (1, 6, 3)])
    # Float input keeps the check tight: no rounding ties; the GAUSSIAN table (32 samples per
    # unit, as DALI) differs from the analytic filter by up to ~2e-3 of the range.
    samples = [s.astype(np.float32) for s in samples]
    atol = 0.6 if interp == types.INTERP_GAUSSIAN else 2e-3
    check_op(ndd.resize, samples, _ref(), args={"size": [5, 7], "interp_type": interp,
             "antialias": antialias}, layout="HWC", atol=atol, all_modes=False)  # fmt: skip


def test_resize_u8_linear_all_modes_several_tiles():
    samples = _images([(30, 41, 3), (7, 13, 3)])  # 28x35x3 outputs: several 1024-element tiles
    check_op(ndd.resize, samples, _ref(), args={"size": [28, 35]}, layout="HWC", atol=1)


@pytest.mark.parametrize(("shape", "size"), [((20, 30, 3), (1, 1)), ((1, 1, 3), (9, 7)),
                                             ((64, 3, 1), (2, 1)), ((5, 80, 2), (5, 3))])
def test_resize_extreme_scales(shape, size):
    samples = [s.astype(np.float32) for s in _images([shape])]
    check_op(ndd.resize, samples, _ref(), args={"size": list(size)}, layout="HWC", atol=1e-3,
             all_modes=False)  # fmt: skip


@pytest.mark.parametrize(("layout", "shapes"), [("CHW", [(3, 12, 9), (1, 5, 7)]),
                                                ("FHWC", [(2, 9, 11, 3)]),
                                                ("CFHW", [(2, 2, 6, 10)])])
def test_resize_layouts(layout, shapes):
    samples = [s.astype(np.float32) for s in _images(shapes)]
    check_op(ndd.resize, samples, _ref(layout), args={"size": [4, 13],
             "interp_type": types.INTERP_CUBIC}, layout=layout, atol=1e-3, all_modes=False)


def test_resize_volume_resize_x_keeps_aspect():
    x = np.arange(4 * 8 * 8, dtype=np.float32).reshape(4, 8, 8, 1)
    for device in ("cpu", "gpu"):
        out = ndd.resize(ndd.as_tensor(x, layout="DHWC").to_device(device) if device == "gpu"
                         else ndd.as_tensor(x, layout="DHWC"), resize_x=4)  # fmt: skip
        assert out.shape == (2, 4, 4, 1)
        expected = ref.resize(x, "DHWC", (2, 4, 4))
        assert_close(samples_of(out)[0], expected, atol=1e-3, where=device)


def test_resize_per_sample_size_gives_ragged_output():
    samples = [s.astype(np.float32) for s in _images([(10, 12, 3), (9, 5, 3), (4, 4, 3)])]
    check_op(ndd.resize, samples, _ref(), per_sample={"size": [[3, 4], [11, 2], [4, 9]]},
             layout="HWC", atol=1e-3, all_modes=False)  # fmt: skip


@pytest.mark.parametrize("backend", ["cpu", "gpu"])
def test_resize_roi_flip_and_negative_size(backend):
    x = np.random.default_rng(1).uniform(0, 255, (14, 17, 3)).astype(np.float32)
    t = ndd.as_tensor(x, layout="HWC")
    t = t.gpu() if backend == "gpu" else t
    out = ndd.resize(t, size=[6, 8], roi_start=[12.5, 2.0], roi_end=[1.5, 15.0])
    expected = ref.resample(x, "HWC", {"H": (6, 12.5, -11 / 6), "W": (8, 2.0, 13 / 8)})
    assert_close(samples_of(out)[0], expected, atol=1e-3, where="roi flip")
    out = ndd.resize(t, size=[7, 5], roi_start=[0.0, 1.0], roi_end=[1.0, 0.5],
                     roi_relative=True, interp_type=types.INTERP_NN)  # fmt: skip
    expected = ref.resample(x, "HWC", {"H": (7, 0.0, 2.0), "W": (5, 17.0, -8.5 / 5)},
                            interp=ref.NN)  # fmt: skip
    assert_close(samples_of(out)[0], expected, where="relative roi, NN, W mirrored")
    out = ndd.resize(t, resize_x=-8, resize_y=6, interp_type=types.INTERP_LINEAR)
    expected = ref.resample(x, "HWC", {"H": (6, 0.0, 14 / 6), "W": (8, 17.0, -17 / 8)})
    assert_close(samples_of(out)[0], expected, atol=1e-3, where="negative resize_x")


@pytest.mark.parametrize(("kwargs", "shape"), [
    ({"size": (20, 30)}, (20, 30)), ({"size": 20}, (20, 20)), ({"size": (20, 0)}, (20, 30)),
    ({"size": (0, 25)}, (17, 25)), ({"resize_x": 25}, (17, 25)), ({"resize_y": 25}, (25, 38)),
    ({"resize_x": 25, "mode": "stretch"}, (40, 25)), ({"resize_x": 31, "resize_y": 17}, (17, 31)),
    ({"resize_x": 30.5}, (20, 31)), ({"resize_x": 30.4}, (20, 30)),
    ({"size": (20.5, 30.5)}, (21, 31)), ({"resize_shorter": 20}, (20, 30)),
    ({"resize_longer": 45}, (30, 45)), ({"resize_shorter": 30, "max_size": 40}, (27, 40)),
    ({"size": (30, 30), "mode": "not_larger"}, (20, 30)),
    ({"size": (30, 30), "mode": "not_smaller"}, (30, 45)),
    ({"size": (30, 30), "mode": "not_smaller", "max_size": 40}, (27, 40)),
    ({"size": (30, 0), "max_size": [100, 40]}, (30, 40)),
])  # fmt: skip
def test_resize_output_size_rules(kwargs, shape):
    # The table of spec/ops.md section 1.1 (observed on a 40x60 image).
    out = ndd.resize(np.zeros((40, 60, 3), np.uint8), **kwargs)
    assert out.shape == (*shape, 3)


def test_resize_subpixel_scale_keeps_fractional_scale():
    x = np.tile(np.arange(10, dtype=np.float32), (3, 1))[:, :, None]  # ramp along W
    out = np.asarray(ndd.resize(x, size=[3, 4.5], antialias=False))
    expected = ref.resample(x, "HWC", {"H": (3, 0.0, 1.0), "W": (5, (10 - 5 * 10 / 4.5) / 2,
                                                                  10 / 4.5)},
                              antialias=False)  # fmt: skip
    assert_close(out, expected, atol=1e-4)
    out = np.asarray(ndd.resize(x, size=[3, 4.5], antialias=False, subpixel_scale=False))
    assert_close(out, ref.resize(x, "HWC", (3, 5), antialias=False), atol=1e-4)


def test_resize_min_mag_filters_and_dtypes():
    x = _images([(20, 6, 3)])[0]
    out = ndd.resize(x, size=[7, 15], min_filter=types.INTERP_CUBIC, mag_filter=types.INTERP_NN)
    expected = ref.resize(x, "HWC", (7, 15), interp=(ref.CUBIC, ref.NN))
    assert_close(np.asarray(out), expected, atol=1)
    out = ndd.resize(x.astype(np.int16) * 100 - 12000, size=[7, 15], dtype=ndd.float32)
    assert out.dtype == ndd.float32
    expected = ref.resize(x.astype(np.int16) * 100 - 12000, "HWC", (7, 15), dtype=np.float32)
    assert_close(np.asarray(out), expected, atol=0.05)


def test_resize_per_sample_interp_and_antialias_off():
    samples = [s.astype(np.float32) for s in _images([(9, 11, 3), (9, 11, 3), (5, 4, 3)])]
    interps = [types.INTERP_NN, types.INTERP_CUBIC, types.INTERP_LANCZOS3]

    def reference(sample, interp_type, size, antialias):
        return ref.resize(sample, "HWC", tuple(size), interp=int(interp_type), antialias=antialias)

    check_op(ndd.resize, samples, reference, args={"size": [6, 7], "antialias": False},
             per_sample={"interp_type": [int(i) for i in interps]}, layout="HWC", atol=1e-3,
             all_modes=False)  # fmt: skip


def test_resize_save_attrs():
    batch = ndd.as_batch(_images([(9, 8, 3), (5, 12, 3)]), layout="HWC")
    for b in (batch, batch.gpu()):
        _out, attrs = ndd.resize(b, size=[4, 4], save_attrs=True)
        assert attrs.dtype == ndd.int32
        assert [np.asarray(a).tolist() for a in attrs.cpu()] == [[9, 8], [5, 12]]


@pytest.mark.parametrize(("interp", "launches"), [(types.INTERP_CUBIC, 2),
                                                  (types.INTERP_LINEAR, 3)])
def test_resize_launches_per_ragged_batch(interp, launches):
    batch = ndd.as_batch(_images([(9, 8, 3), (5, 12, 3), (3, 3, 3)]), layout="HWC").gpu()
    with ndd.profile() as prof:
        ndd.resize(batch, size=[4, 6], interp_type=interp).evaluate()
    (record,) = prof.records
    # one per separable pass, for the whole batch; the triangle filters' tap tables of both
    # axes are built on the device, one launch before them
    assert record.gpu_launches == launches


def test_resize_errors():
    x = np.zeros((8, 8, 3), np.uint8)
    with raises_at_call(RuntimeError, match="resize: Exactly one method of specifying size"):
        ndd.resize(x)
    with raises_at_call(RuntimeError, match="got size, resize_shorter"):
        ndd.resize(x, size=4, resize_shorter=3)
    with raises_at_call(RuntimeError, match="argument 'size' sample 0: expected either a single "
                                           "value or a list of 2 elements; got 3"):
        ndd.resize(x, size=[1, 2, 3])
    with raises_at_call(RuntimeError, match="'roi_start' and 'roi_end' must be given together"):
        ndd.resize(x, size=4, roi_start=[0, 0])
    with raises_at_call(ValueError, match="argument 'roi_end' sample 1: expected 1 or 2 values"):
        ndd.resize(ndd.as_batch([x, x]), size=4, roi_start=[0, 0],
                   roi_end=ndd.as_batch([np.array([4.0, 4.0]), np.array([1.0, 2.0, 3.0])]))
    with raises_at_call(ValueError, match="argument 'mode' must be one of"):
        ndd.resize(x, size=4, mode="fit")
    with raises_at_call(ValueError, match="argument 'interp_type' must be one of"):
        ndd.resize(x, size=4, interp_type=7)
    with raises_at_call(RuntimeError, match=r"argument 'dtype' must be the input type \(u8\) "
                                           "or float32; got i32"):
        ndd.resize(x, size=4, dtype=ndd.int32)
    with raises_at_call(TypeError, match="resize: input 0 has dtype i32"):
        ndd.resize(x.astype(np.int32), size=4)
    with raises_at_call(ValueError, match=r"resize: input 0 sample 1 has shape \(0, 3, 3\) \(HWC\): "
                                         "a spatial extent of 0 cannot be resampled"):
        ndd.resize(ndd.as_batch([x, np.zeros((0, 3, 3), np.uint8)]), size=4)
    with raises_at_call(ValueError, match="argument 'max_size' expects 1 or 2 values; got 3"):
        ndd.resize(x, size=4, max_size=[1, 2, 3])
